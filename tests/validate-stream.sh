#!/usr/bin/env bash
# tests/validate-stream.sh: `validate | cat` shows each module's result as
# it finishes, not all of them at the end: with a launcher that takes a
# second a module, a reader of the pipe has the first module's line
# seconds before the run ends. The order is the report's order (that of
# a run without the launcher), the summary last; with stderr not a
# terminal, no progress line ("validating: 3/9 modules") is written; on a
# terminal, one only in a run longer than a second.
#
#   CUDAMOD_BIN=build/src/cudamod MKFIXTURE=build/tests/mkfixture bash tests/validate-stream.sh
set -euo pipefail
# Under the valgrind setup: every cudamod is checked, not bash.
. "$(dirname "$0")/valgrind.sh"

: "${CUDAMOD_BIN:?}" "${MKFIXTURE:?}"
CUDAMOD=$CUDAMOD_BIN
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-validate-stream.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "validate-stream: FAIL: $*" >&2; exit 1; }

"$MKFIXTURE" demo "$tmp/demo" >/dev/null
"$CUDAMOD" generate -o "$tmp/mods" "$tmp/demo/sw" >/dev/null
printf '#!/bin/sh\nsleep 1\nexec "$@"\n' >"$tmp/slow"
chmod +x "$tmp/slow"

"$CUDAMOD" validate --no-compile --modulepath "$tmp/mods/Core" 2>/dev/null >"$tmp/at-once.out" || true
rc=0
"$CUDAMOD" validate --no-compile --modulepath "$tmp/mods/Core" --launcher "$tmp/slow" 2>"$tmp/err" |
        python3 -c '
import sys, time
t0 = time.monotonic()
first = None
with open(sys.argv[1], "w") as out:
    for line in sys.stdin:
        if first is None and line[:1] != " ":
            first = time.monotonic() - t0
        out.write(line)
end = time.monotonic() - t0
print("%.2f %.2f" % (first if first is not None else end, end))
' "$tmp/slow.out" >"$tmp/times" || rc=$?
read -r first end <"$tmp/times"
[ "$(grep -c '^[a-z]' "$tmp/slow.out")" -ge 4 ] || fail "too few modules: $(cat "$tmp/slow.out")"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= 2 else 1)' "$first" "$end" ||
        fail "the first module's line came at ${first} s, the end at ${end} s: not printed as it finished"
# The modules in the same order as a run without the launcher (their
# results may differ: the launcher runs the probe), the summary last.
names() { grep -E '^(pass|warn|fail|unchecked|not checked) ' "$1" | sed -E 's/^(not checked|[a-z]+) +//'; }
diff <(names "$tmp/at-once.out") <(names "$tmp/slow.out") >"$tmp/diff" ||
        fail "the streamed modules are not in the report's order: $(cat "$tmp/diff")"
tail -n1 "$tmp/slow.out" | grep -q '^[0-9]* modules: ' || fail "the summary is not last: $(tail -n2 "$tmp/slow.out")"
grep -q 'validating:' "$tmp/err" && fail "a progress line with stderr not a terminal: $(cat "$tmp/err")"
# On a terminal (script(1) gives one): a run longer than a second shows
# the progress line, erased before each module's line; a quick one, none.
if command -v script >/dev/null; then
        q() { printf "'%s' " "$@"; }
        script -qec "$(q "$CUDAMOD" validate --no-compile --modulepath "$tmp/mods/Core" --launcher "$tmp/slow")" \
                /dev/null >"$tmp/tty-slow" 2>&1 </dev/null || true
        grep -q 'validating: [0-9]*/[0-9]* modules' "$tmp/tty-slow" ||
                fail "no progress line on a terminal in a run of seconds: $(head -c 400 "$tmp/tty-slow")"
        script -qec "$(q "$CUDAMOD" validate --no-compile --modulepath "$tmp/mods/Core" cuda/12.9)" \
                /dev/null >"$tmp/tty-quick" 2>&1 </dev/null || true
        grep -q 'cuda/12.9' "$tmp/tty-quick" || fail "the quick run on a terminal printed no module: $(cat "$tmp/tty-quick")"
        grep -q 'validating:' "$tmp/tty-quick" && fail "a progress line in a run shorter than a second"
else
        echo "validate-stream: note: no script(1), the terminal is not tried"
fi
# The demo's libraries are stubs (doc/guide.md says what validate makes of
# them): every module fails, its run check with the probe's SIGSEGV.
n=$(names "$tmp/at-once.out" | wc -l)
[ "$(grep -c '^fail ' "$tmp/at-once.out")" = "$n" ] || fail "the demo: not every module fails, as the guide says"
[ "$(grep -c 'run *fail .*SIGSEGV while loading libcudart' "$tmp/at-once.out")" = "$n" ] ||
        fail "the demo: the run check does not fail as the guide says: $(grep ' run ' "$tmp/at-once.out")"
echo "validate-stream: ok (first module at ${first} s of ${end} s)"
