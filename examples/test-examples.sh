#!/bin/bash
# test-examples.sh CUDAMOD EXAMPLES_DIR: the shipped examples work.
#
# - every *.yaml loads (`cudamod --config F config`, exit 0, nothing on
#   stderr) and what it prints loads again to the same config;
# - with each, `generate --dry-run` on fixture trees of the layouts it is
#   written for exits 0, writes nothing and plans the modules it is about;
#   a real generate, then `generate --check`, finds nothing to do;
# - every *.sh passes `bash -n` (and shellcheck when installed), and
#   cron-check.sh reports drift, a broken config and an empty tree.
#
# The fixture trees come from tests/mkfixture ($MKFIXTURE), built with the
# tests; without it the fixture checks are skipped (exit 77 when all else
# passed).
set -u

cudamod=${1:?usage: test-examples.sh CUDAMOD EXAMPLES_DIR}
examples=${2:?usage: test-examples.sh CUDAMOD EXAMPLES_DIR}
# Under `meson test --setup=valgrind`: natively, with cudamod run under
# valgrind (tests/valgrind.sh).
[ -n "${CUDAMOD_VALGRIND_LOGS:-}" ] || CUDAMOD_BIN=$cudamod
# shellcheck disable=SC1091 # (tests/valgrind.sh is checked on its own)
. "$(dirname "$0")/../tests/valgrind.sh"
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || cudamod=$CUDAMOD_BIN
mkfixture=${MKFIXTURE:-}

export LC_ALL=C
unset MODULEPATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-examples.XXXXXX") || exit 1
if [[ -n ${CUDAMOD_KEEP_TMP:-} ]]; then
    echo "keeping '$tmp'"
else
    trap 'rm -rf "$tmp"' EXIT
fi

failures=0
fail()
{
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# The fixture trees (mkfixture LAYOUT) each example is written for, and
# files its dry run must plan. An example not listed gets the demo tree.
declare -A fixtures=(
    [hierarchical-lmod]='demo'
    [flat-environment-modules]='demo'
    [nvidia-hpc-sdk]='hpc-sdk cudnn-tarballs'
    [pip-wheel-cuda]='runfile wheels-cu12 wheels-cu13'
    [easybuild-site]='demo'
)
declare -A planned=(
    [hierarchical-lmod]='Core/cuda/11.8.lua Core/cuda/12.9.lua CUDA/12/cudnn/9.7.1.lua CUDA/12/nccl/2.21.5.lua'
    [flat-environment-modules]='cuda/12.9 cudnn/9.7.1-cuda12 cudnn/8.9.7-cuda11 nccl/2.21.5-cuda12'
    [nvidia-hpc-sdk]='Core/cuda/12.4.lua CUDA/12/nccl/2.21.5.lua CUDA/12/cudnn/9.7.1.lua'
    [pip-wheel-cuda]='Core/cuda/12.4.lua Core/cuda/12.8.lua Core/cuda/13.0.lua CUDA/13/cudnn/9.19.0.lua CUDA/12/nccl/2.26.2.lua'
    [easybuild-site]='CUDA/12.9.1.lua CUDA/11.8.0.lua cuDNN/9.7.1.26-CUDA-12.9.1.lua cuDNN/8.9.7.29-CUDA-11.8.0.lua NCCL/2.21.5-GCCcore-13.3.0-CUDA-12.9.1.lua'
)

shopt -s nullglob
yamls=("$examples"/*.yaml)
scripts=("$examples"/*.sh)
((${#yamls[@]})) || fail "no *.yaml in '$examples'"

# ---- every config loads, and round-trips ----

for f in "${yamls[@]}"; do
    name=$(basename "$f" .yaml)
    if ! "$cudamod" --config "$f" config >"$tmp/$name.effective" 2>"$tmp/$name.err"; then
        fail "$name.yaml does not load:"
        cat "$tmp/$name.err"
        continue
    fi
    # The one message a config may give: what its naming preset cannot
    # write as its tool does (EasyBuild's toolchain part).
    sed -i "/naming preset 'easybuild' writes EasyBuild's names but for the toolchain part/d" "$tmp/$name.err"
    if [[ -s $tmp/$name.err ]]; then
        fail "$name.yaml loads with messages:"
        cat "$tmp/$name.err"
    fi
    cp "$tmp/$name.effective" "$tmp/$name.effective.yaml"
    if ! "$cudamod" --config "$tmp/$name.effective.yaml" config >"$tmp/$name.again" 2>&1 ||
        ! cmp -s "$tmp/$name.effective" "$tmp/$name.again"; then
        fail "$name.yaml: its effective config does not load to the same config"
        diff -u "$tmp/$name.effective" "$tmp/$name.again"
    fi
done

# ---- the scripts ----

for f in "${scripts[@]}"; do
    bash -n "$f" || fail "$(basename "$f"): bash -n"
    if [[ $(head -n 1 "$f") == '#!/bin/sh'* ]] && command -v dash >/dev/null; then
        dash -n "$f" || fail "$(basename "$f"): dash -n"
    fi
    if command -v shellcheck >/dev/null; then
        shellcheck "$f" || fail "$(basename "$f"): shellcheck"
    fi
done

# ---- generate with each config, on fixture trees ----

if [[ -z $mkfixture || ! -x $mkfixture ]]; then
    echo "SKIP: no mkfixture ('${mkfixture}'): build the tests (ninja) to check generate"
    ((failures)) && exit 1
    exit 77
fi

# fixture LAYOUT: the directory of a fixture tree, built once.
fixture()
{
    local dir=$tmp/fixtures/$1
    if [[ ! -d $dir ]]; then
        mkdir -p "$tmp/fixtures"
        "$mkfixture" "$1" "$dir" >/dev/null || return 1
    fi
    printf '%s\n' "$dir"
}

for f in "${yamls[@]}"; do
    name=$(basename "$f" .yaml)
    [[ -s $tmp/$name.effective ]] || continue
    format=$(sed -n 's/^format: //p' "$tmp/$name.effective")
    layout=$(sed -n 's/^layout: //p' "$tmp/$name.effective")
    roots=()
    for layout_fixture in ${fixtures[$name]:-demo}; do
        dir=$(fixture "$layout_fixture") || { fail "mkfixture $layout_fixture"; continue 2; }
        roots+=("$dir")
    done
    out=$tmp/out-$name

    "$cudamod" --config "$f" generate --dry-run -o "$out" "${roots[@]}" \
        >"$tmp/$name.diff" 2>"$tmp/$name.gen-err"
    rc=$?
    if ((rc != 0)); then
        fail "$name.yaml: generate --dry-run exits $rc"
        cat "$tmp/$name.gen-err"
        continue
    fi
    [[ -e $out ]] && fail "$name.yaml: generate --dry-run created '$out'"
    files=$(sed -n 's|^+++ b/||p' "$tmp/$name.diff")
    if [[ -z $files ]]; then
        fail "$name.yaml: generate --dry-run plans no file"
        continue
    fi
    for want in ${planned[$name]:-}; do
        grep -qxF "$want" <<<"$files" || fail "$name.yaml: generate --dry-run does not plan '$want'"
    done
    case $format in
        lua) grep -qv '\.lua$' <<<"$files" && fail "$name.yaml: format lua, but not only .lua files"$'\n'"$files" ;;
        tcl)
            grep -q '\.lua$' <<<"$files" && fail "$name.yaml: format tcl, but .lua files"
            grep -q '^+#%Module' "$tmp/$name.diff" || fail "$name.yaml: format tcl, but no #%Module file"
            ;;
        *) fail "$name.yaml: format '$format'" ;;
    esac
    case $layout in
        hierarchical) grep -q '^Core/cuda/' <<<"$files" || fail "$name.yaml: hierarchical, but no Core/cuda/" ;;
        flat) grep -q '^Core/' <<<"$files" && fail "$name.yaml: flat, but Core/" ;;
        *) fail "$name.yaml: layout '$layout'" ;;
    esac
    if [[ -s $tmp/$name.gen-err ]]; then
        echo "$name.yaml: generate says:"
        sed 's/^/  /' "$tmp/$name.gen-err"
    fi

    # Written for real, the tree is then up to date.
    if ! "$cudamod" -q --config "$f" generate -o "$out" "${roots[@]}" >"$tmp/$name.gen" 2>&1; then
        fail "$name.yaml: generate failed"
        cat "$tmp/$name.gen"
    elif ! "$cudamod" -q --config "$f" generate --check -o "$out" "${roots[@]}" >"$tmp/$name.check" 2>&1; then
        fail "$name.yaml: generate --check after generate finds drift"
        cat "$tmp/$name.check"
    fi
done

# ---- cron-check.sh, with a mail(1) that files what it is given ----

cron=$examples/cron-check.sh
if [[ -f $cron ]]; then
    demo=$(fixture demo) || fail "mkfixture demo"
    mkdir -p "$tmp/cron/bin"
    cat >"$tmp/cron/bin/mail" <<EOF
#!/bin/sh
# mail -s SUBJECT TO < BODY
{ echo "Subject: \$2"; echo "To: \$3"; cat; echo "--"; } >>"$tmp/cron/mailbox"
EOF
    chmod +x "$tmp/cron/bin/mail"
    cat >"$tmp/cron/site.yaml" <<EOF
output: $tmp/cron/modulefiles
search: [$demo]
validate: { compile: false, timeout: 30 }
EOF
    printf 'layuot: flat\n' >"$tmp/cron/broken.yaml"

    # cron_run 'STATUS...' CONFIG [ARGS]: run it, expecting one of the exit
    # STATUSes; the mails it sent are in $tmp/cron/mailbox.
    cron_run()
    {
        local want=$1 config=$2 rc
        shift 2
        rm -f "$tmp/cron/mailbox"
        PATH=$tmp/cron/bin:$PATH CUDAMOD=$cudamod CUDAMOD_CONFIG=$config CUDAMOD_MAILTO=hpc-admins \
            MODULEPATH=/nowhere sh "$cron" "$@" >"$tmp/cron/out" 2>&1
        rc=$?
        touch "$tmp/cron/mailbox"
        if [[ " $want " != *" $rc "* ]]; then
            fail "cron-check.sh${*:+ $*} with $(basename "$config"): exit status $rc, expected $want"
            cat "$tmp/cron/out" "$tmp/cron/mailbox"
            return 1
        fi
    }
    subjects() { sed -n 's/^Subject: cudamod on [^:]*: //p' "$tmp/cron/mailbox"; }

    # No tree yet: out of date, and nothing to validate.
    if cron_run 1 "$tmp/cron/site.yaml"; then
        subjects | grep -qx 'module tree out of date' || fail "cron-check.sh: no drift mail"$'\n'"$(subjects)"
        subjects | grep -qx 'no modules to validate' || fail "cron-check.sh: no mail for an empty tree"
        grep -q '^To: hpc-admins$' "$tmp/cron/mailbox" || fail "cron-check.sh: CUDAMOD_MAILTO ignored"
        grep -q 'would create Core/cuda/12.9.lua' "$tmp/cron/mailbox" || fail "cron-check.sh: the drift mail lacks the changes"
    fi
    # --update writes the tree; whether the demo's stub libraries validate
    # is validate's business, but nothing else may be reported.
    cron_run '0 1' "$tmp/cron/site.yaml" --update
    [[ -f $tmp/cron/modulefiles/Core/cuda/12.9.lua ]] || fail "cron-check.sh --update wrote no tree"
    subjects | grep -vqx 'module validation failed' && fail "cron-check.sh --update: $(subjects)"
    # Up to date now: no drift mail. A module edited by hand: drift.
    cron_run '0 1' "$tmp/cron/site.yaml"
    subjects | grep -qx 'module tree out of date' && fail "cron-check.sh: drift mail for an up-to-date tree"
    echo '-- edited' >>"$tmp/cron/modulefiles/Core/cuda/12.9.lua"
    if cron_run 1 "$tmp/cron/site.yaml"; then
        grep -q '^edited *Core/cuda/12.9.lua' "$tmp/cron/mailbox" || fail "cron-check.sh: the edited module is not reported"
    fi
    # A broken config: exit 2, and the admins are told why.
    if cron_run 2 "$tmp/cron/broken.yaml"; then
        subjects | grep -qx 'generate --check failed (exit status 2)' || fail "cron-check.sh: no mail for a broken config"
        grep -q "unknown key 'layuot'" "$tmp/cron/mailbox" || fail "cron-check.sh: the config error is not in the mail"
    fi
fi

echo "${#yamls[@]} configs, ${#scripts[@]} scripts: $failures failed"
((failures == 0))
