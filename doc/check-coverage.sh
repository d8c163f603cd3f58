#!/usr/bin/env bash
# doc/check-coverage.sh: the man pages cover what cudamod offers.
#
#   check-coverage.sh CUDAMOD MAN1.scd MAN5.scd
#
# Fails, naming each thing missing, when
#   - a command of `cudamod --help` has no "## COMMAND" section in MAN1;
#   - a long option of `cudamod help COMMAND` (its usage and its Options)
#     is not mentioned in that command's section of MAN1;
#   - a global option of `cudamod --help` is not in MAN1's GLOBAL OPTIONS;
#   - a key path of `cudamod config --default` (output, defaults.cuda,
#     env.nccl.setenv, validate.targets, ...) is not written out in MAN5;
#   - a text line of either page starts with '.', which scdoc hands to
#     roff as a request (the line then vanishes from the page).
# Mentions are looked for in the scdoc sources, ';' comments left out.
set -euo pipefail

if [ $# -ne 3 ]; then
        echo "usage: $0 CUDAMOD MAN1.scd MAN5.scd" >&2
        exit 2
fi
cudamod=$1 man1=$2 man5=$3
# Under `meson test --setup=valgrind`: natively, with cudamod run under
# valgrind (tests/valgrind.sh).
[ -n "${CUDAMOD_VALGRIND_LOGS:-}" ] || CUDAMOD_BIN=$cudamod
# shellcheck disable=SC1091 # (tests/valgrind.sh is checked on its own)
. "$(dirname "$0")/../tests/valgrind.sh"
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || cudamod=$CUDAMOD_BIN
name1=${man1##*/} name5=${man5##*/}
for f in "$man1" "$man5"; do
        [ -r "$f" ] || { echo "check-coverage: cannot read '$f'" >&2; exit 2; }
done
[ -x "$cudamod" ] || { echo "check-coverage: '$cudamod' is not executable" >&2; exit 2; }

missing=0
miss() {
        echo "missing: $*"
        missing=$((missing + 1))
}

# The page without scdoc comments.
text() {
        grep -v '^;' "$1" || true
}

# The lines of section "$2" (a "#" or "##" heading) of page $1, up to the
# next heading of the same or a higher level.
section() {
        text "$1" | awk -v want="$2" '
                BEGIN { level = (want ~ /^## /) ? 2 : 1 }
                /^#+ / {
                        n = index($0, " ") - 1
                        if (on && n <= level) { on = 0; done = 1 }
                        if (!done && $0 == want) { on = 1; next }
                }
                on { print }'
}

# Whether option $1 (--name) occurs in text $2 as a whole option: not as
# the start of a longer one (--json-x) nor inside another word.
has_option() {
        local re="(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)"
        [[ $2 =~ $re ]]
}

# The long options a help text names: in its usage lines and at the start
# of its Options lines (not those its descriptions mention).
long_options() {
        awk '
                /^usage:/ { usage = 1 }
                usage && /^$/ { usage = 0 }
                /^Options:$/ { opts = 1; next }
                opts && /^$/ { opts = 0 }
                usage { print; next }
                opts && match($0, /^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*/) { print substr($0, 1, RLENGTH) }' |
                grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

main_help=$("$cudamod" --help)

# --- commands and their options
mapfile -t commands < <(awk '/^Commands:$/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }' <<<"$main_help")
[ ${#commands[@]} -gt 0 ] || { echo "check-coverage: no commands in 'cudamod --help'" >&2; exit 2; }
n_options=0
for cmd in "${commands[@]}"; do
        body=$(section "$man1" "## $cmd")
        if [ -z "$body" ]; then
                miss "command '$cmd': no '## $cmd' section in $name1"
                continue
        fi
        help=$("$cudamod" help "$cmd") || { echo "check-coverage: 'cudamod help $cmd' failed" >&2; exit 2; }
        mapfile -t opts < <(long_options <<<"$help")
        echo "$cmd: ${opts[*]:-(no options)}"
        for opt in "${opts[@]}"; do
                n_options=$((n_options + 1))
                has_option "$opt" "$body" ||
                        miss "option '$opt' of '$cmd': not in the '## $cmd' section of $name1"
        done
done

# --- global options
globals=$(section "$man1" "# GLOBAL OPTIONS")
[ -n "$globals" ] || miss "section '# GLOBAL OPTIONS' in $name1"
mapfile -t opts < <(long_options <<<"$main_help")
echo "global: ${opts[*]}"
n_globals=${#opts[@]}
for opt in "${opts[@]}"; do
        has_option "$opt" "$globals" ||
                miss "global option '$opt': not in GLOBAL OPTIONS of $name1"
done

# --- config keys: every key path of the built-in default, written out
mapfile -t keys < <("$cudamod" config --default | awk '
        /^[ ]*(- )?[A-Za-z_][A-Za-z0-9_]*:/ {
                line = $0
                sub(/- /, "  ", line)
                match(line, /^ */)
                depth = RLENGTH / 2
                key = substr(line, RLENGTH + 1)
                sub(/:.*/, "", key)
                path[depth] = key
                p = path[0]
                for (i = 1; i <= depth; i++) p = p "." path[i]
                print p
        }')
[ ${#keys[@]} -gt 0 ] || { echo "check-coverage: no keys in 'cudamod config --default'" >&2; exit 2; }
echo "keys: ${keys[*]}"
page5=$(text "$man5")
for key in "${keys[@]}"; do
        re="(^|[^A-Za-z0-9_.])${key//./\\.}([^A-Za-z0-9_]|\$)"
        [[ $page5 =~ $re ]] ||
                miss "config key '$key': not in $name5"
done

# --- lines that scdoc would hand to roff (outside literal blocks)
dots=$(for f in "$man1" "$man5"; do
        awk -v f="$(basename "$f")" '
                /^```/ { lit = !lit; next }
                !lit && /^[ \t]*\./ { printf "%s:%d: a text line starts with \x27.\x27, which roff takes as a request\n", f, NR }' "$f"
done)
if [ -n "$dots" ]; then
        while IFS= read -r l; do miss "$l"; done <<<"$dots"
fi

echo "checked ${#commands[@]} commands, $n_options command options, $n_globals global options, ${#keys[@]} config keys"
if [ $missing -gt 0 ]; then
        echo "FAIL: $missing missing from the man pages"
        exit 1
fi
echo "ok: the man pages mention every command, option and config key"
