#!/bin/bash
# test-completion.sh COMPLETION_FILE CUDAMOD: drive the bash completion of
# cudamod as readline would (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT)
# and check COMPREPLY; check that every option `cudamod help CMD` lists is
# offered, so that a new option cannot be forgotten here.
# Exit 77 (skip) without bash-completion.
set -u

completion=${1:?usage: test-completion.sh COMPLETION_FILE CUDAMOD}
cudamod=${2:?usage: test-completion.sh COMPLETION_FILE CUDAMOD}
# Under `meson test --setup=valgrind`: natively, with cudamod run under
# valgrind (tests/valgrind.sh).
[ -n "${CUDAMOD_VALGRIND_LOGS:-}" ] || CUDAMOD_BIN=$cudamod
# shellcheck disable=SC1091 # (tests/valgrind.sh is checked on its own)
. "$(dirname "$0")/../tests/valgrind.sh"
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || cudamod=$CUDAMOD_BIN
bash_completion=${BASH_COMPLETION_SCRIPT:-/usr/share/bash-completion/bash_completion}

if [[ ! -r $bash_completion ]]; then
    echo "SKIP: '$bash_completion' not found (install bash-completion)"
    exit 77
fi

export LC_ALL=C
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-completion.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Load bash-completion without the user's or the system's other completions.
mkdir "$tmp/compat"
export BASH_COMPLETION_USER_FILE=/dev/null
export BASH_COMPLETION_COMPAT_DIR=$tmp/compat
# shellcheck source=/dev/null
. "$bash_completion" || { echo "FAIL: cannot source '$bash_completion'"; exit 1; }
# shellcheck source=/dev/null
. "$completion" || { echo "FAIL: cannot source '$completion'"; exit 1; }
# 2.12 and later: the _comp_* API (their _init_completion and _filedir are in
# the compatibility file, which the empty compat dir above leaves out, as
# a user's BASH_COMPLETION_COMPAT_DIR can); 2.11: the older one.
echo "bash-completion ${BASH_COMPLETION_VERSINFO[*]:-?}: $(declare -F _comp_initialize >/dev/null && echo '_comp_* API' || echo '_init_completion API')"
if [[ $(complete -p cudamod 2>/dev/null) != *'-F _cudamod'* ]]; then
    echo "FAIL: '$completion' does not register _cudamod for cudamod"
    exit 1
fi

failures=0
checks=0

# complete LINE: set COMP_* for LINE with the cursor at its end, as bash
# splits it (blanks separate words, each run of ':' or '=' is a word of its
# own), and call the completion function.
complete_line()
{
    local line=$1 word='' c i
    local -a w=()
    for ((i = 0; i < ${#line}; i++)); do
        c=${line:i:1}
        case $c in
            ' ')
                [[ -n $word ]] && w+=("$word")
                word=''
                ;;
            [=:])
                if [[ $word == [=:]* ]]; then
                    word+=$c
                else
                    [[ -n $word ]] && w+=("$word")
                    word=$c
                fi
                ;;
            *)
                if [[ $word == [=:]* ]]; then
                    w+=("$word")
                    word=''
                fi
                word+=$c
                ;;
        esac
    done
    w+=("$word")
    COMP_WORDS=("${w[@]}")
    COMP_CWORD=$((${#w[@]} - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    _cudamod "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

reply()
{
    ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort
}

fail()
{
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect LINE WORD...: COMPREPLY is exactly the WORDs (any order).
expect()
{
    local line=$1 got want
    shift
    checks=$((checks + 1))
    complete_line "$line"
    got=$(reply)
    want=$( (($#)) && printf '%s\n' "$@" | sort)
    if [[ $got != "$want" ]]; then
        fail "'$line<TAB>'"
        echo "  expected: ${want//$'\n'/ }"
        echo "  got:      ${got//$'\n'/ }"
    fi
}

# expect_has LINE WORD...: COMPREPLY holds every WORD.
expect_has()
{
    local line=$1 got w missing=''
    shift
    checks=$((checks + 1))
    complete_line "$line"
    got=$(reply)
    got=" ${got//$'\n'/ } "
    for w; do
        [[ $got == *" $w "* ]] || missing+=" $w"
    done
    if [[ -n $missing ]]; then
        fail "'$line<TAB>' lacks$missing"
        echo "  got: $got"
    fi
}

# ---- commands and options ----

expect 'cudamod ' scan generate show validate doctor export config help
expect 'cudamod export ' spack easybuild
expect 'cudamod export e' easybuild
expect 'cudamod gen' generate
expect 'cudamod s' scan show
expect 'cudamod -' --config --quiet -q --verbose -v --color --help -h --version
expect 'cudamod --c' --config --color
expect 'cudamod --color ' auto always never
expect 'cudamod --color=a' auto always
expect 'cudamod -q --color never --config site.yaml gen' generate
expect 'cudamod generate --for' --force --format
expect 'cudamod generate --format ' lua tcl
expect 'cudamod generate --format=t' tcl
expect 'cudamod generate --layout h' hierarchical
expect 'cudamod generate --layout ' hierarchical flat
expect 'cudamod doctor --' --modulepath --trust-modulefiles --json --build --no-compile --help
expect 'cudamod scan --' --json --jobs --help
expect 'cudamod scan --jobs ' # a number: nothing to offer
expect 'cudamod generate --jo' --jobs
expect 'cudamod config --' --default --help
expect_has 'cudamod validate --' --target --arch-list --launcher --modulepath --jobs --timeout \
    --driver-libdir --require-device --no-compile --no-strict-modes --trust-modulefiles --strict --json
expect 'cudamod validate --jobs ' # a number: nothing to offer
expect 'cudamod generate --lock' --lock-timeout
expect 'cudamod generate --lock-timeout ' # seconds: nothing to offer
expect 'cudamod validate --lock-timeout ' # seconds: nothing to offer
expect 'cudamod help va' validate
expect 'cudamod help validate ' # one command only
expect 'cudamod nosuchcommand ' # nothing for an unknown command

# Options may follow positional arguments (getopt_long permutes them);
# after '--' there are none.
mkdir "$tmp/root"
expect "cudamod scan $tmp/root --j" --jobs --json
expect "cudamod generate -- --j"

# ---- files and directories ----

mkdir "$tmp/dir-a" "$tmp/dir-b"
: >"$tmp/dir-file"
expect "cudamod generate -o $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
expect "cudamod generate --output=$tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
expect "cudamod scan $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
expect "cudamod export spack $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
expect "cudamod export easybuild $tmp/dir-a " # one tree only
expect "cudamod --config $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b" "$tmp/dir-file"
expect "cudamod doctor $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b" "$tmp/dir-file"
expect "cudamod validate --driver-libdir $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
expect "cudamod show --modulepath $tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"
# Several directories in one --modulepath: only the part after ':' is
# completed (readline replaces only what follows the ':').
expect "cudamod show --modulepath /nowhere:$tmp/dir-" "$tmp/dir-a" "$tmp/dir-b"

# ---- module names ----

mp=$tmp/mp
mkdir -p "$mp/cuda" "$mp/cudnn" "$mp/.hidden"
for f in cuda/12.4.lua cuda/13.0.lua cudnn/9.1.0.lua cuda/.modulerc.lua cuda/.12.9.lua \
    cuda/13.0.lua~ .hidden/1.0.lua; do
    echo 'setenv("X", "1")' >"$mp/$f"
done
ln -s 13.0.lua "$mp/cuda/default"
mkdir -p "$mp/cuda/12" # a deeper level is not a module of this directory
# A Tcl tree: modulefiles without extension, known by their '#%Module' header.
mp2=$tmp/mp2
mkdir -p "$mp2/nccl" "$mp2/cuda"
printf '#%%Module1.0\nsetenv X 1\n' >"$mp2/nccl/2.21.5"
printf '#%%Module\n' >"$mp2/cuda/12.4" # the same module in two directories: once
printf '#%%Module\nmodule-version cuda/12.4 default\n' >"$mp2/cuda/.modulerc"
echo 'not a modulefile' >"$mp2/nccl/README"
ln -s 12.4 "$mp2/cuda/default" # Lmod's mark of the default: not a version

expect "cudamod show --modulepath $mp cu" cuda/12.4 cuda/13.0 cudnn/9.1.0
expect "cudamod show --modulepath $mp cuda/1" cuda/12.4 cuda/13.0
expect "cudamod show --modulepath=$mp cudnn" cudnn/9.1.0
expect "cudamod show --modulepath $mp cuda/12.4 cudn" cudnn/9.1.0
expect "cudamod show --json --modulepath $mp " cuda/12.4 cuda/13.0 cudnn/9.1.0
expect "cudamod validate -j 4 --modulepath $mp --modulepath $mp2 " \
    cuda/12.4 cuda/13.0 cudnn/9.1.0 nccl/2.21.5
expect "cudamod validate --modulepath $mp:$mp2 n" nccl/2.21.5
expect "cudamod show --modulepath $tmp/nowhere cu"
# The user's glob settings change nothing, and are left as they were.
shopt -s dotglob failglob
expect "cudamod show --modulepath $mp --modulepath $mp2 " cuda/12.4 cuda/13.0 cudnn/9.1.0 nccl/2.21.5
checks=$((checks + 1))
if ! shopt -q dotglob || ! shopt -q failglob; then
    fail "the completion changed the shell's glob options"
fi
shopt -u dotglob failglob
MODULEPATH=$mp2 expect 'cudamod validate ' cuda/12.4 nccl/2.21.5
MODULEPATH=$mp2 expect "cudamod show --modulepath $mp cud" cuda/12.4 cuda/13.0 cudnn/9.1.0

# Without --modulepath and MODULEPATH: the config's output, its Core in the
# hierarchical layout (as show and validate look them up).
mkdir -p "$tmp/out/Core/cuda"
echo 'setenv("X", "1")' >"$tmp/out/Core/cuda/12.9.lua"
cat >"$tmp/site.yaml" <<EOF
output: $tmp/out
validate:
  targets:
    - { name: a100, launcher: "srun -p a100 --gres=gpu:1 -t 5" }
    - { name: h100, launcher: "srun -p h100 --gres=gpu:1 -t 5" }
    - { name: "grace hopper", launcher: "srun -p gh200 --gres=gpu:1" }
EOF
(
    unset MODULEPATH
    expect "$cudamod --config $tmp/site.yaml show " cuda/12.9
    expect "$cudamod show " # no config, no MODULEPATH: nothing
)

# ---- targets, from the config ----

expect "$cudamod --config $tmp/site.yaml validate --target " a100 h100 'grace\ hopper'
expect "$cudamod --config=$tmp/site.yaml validate --target=h" h100
expect "$cudamod validate --target " # no --config: no targets

# ---- every option of `cudamod help` is offered ----

# options_of TEXT: the long options of an 'Options:' section.
options_of()
{
    sed -n '/^Options:/,/^$/p' | grep -oE '^ +(-[a-z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u
}

help=$("$cudamod" --help) || fail "'cudamod --help' failed"
commands=$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF { print $1 }' | sort)
checks=$((checks + 1))
if [[ -z $commands ]]; then
    fail "'cudamod --help' lists no commands"
else
    # shellcheck disable=SC2154 # set by the completion file
    ours=$(tr ' ' '\n' <<<"$_cudamod_commands" | sort)
    if [[ $commands != "$ours" ]]; then
        fail "commands: 'cudamod --help' has ${commands//$'\n'/ }; the completion ${ours//$'\n'/ }"
    fi
fi
for opt in $(options_of <<<"$help"); do
    expect_has "cudamod $opt" "$opt"
done
for cmd in $commands; do
    for opt in $(options_of < <("$cudamod" help "$cmd")) --help; do
        expect_has "cudamod $cmd $opt" "$opt"
    done
done

echo "$checks checks, $failures failed"
((failures == 0))
