#!/usr/bin/env bash
# tests/install.sh: `meson install` into a temporary DESTDIR, then the
# installed cudamod used from there as an admin would:
#   - the files land under the prefix: bin/cudamod,
#     libexec/cudamod/cudamod-probe, share/cudamod/templates, modulefiles/cudamod.lua
#     the examples, the bash completion, and the man pages when scdoc is there;
#   - the installed cudamod runs: --version, generate on the demo tree;
#   - validate finds the installed probe relative to itself, also after the
#     whole prefix is moved elsewhere (no CUDAMOD_PROBE, no build tree);
#   - modulefiles/cudamod.lua names the real prefix, and real Lmod loads it
#     (PATH gets the prefix's bin) when Lmod is there.
# Environment (tests/meson.build): CUDAMOD_BUILD_ROOT, MKFIXTURE, CUDAMOD_PREFIX.
set -euo pipefail
. "$(dirname "$0")/valgrind.sh"
: "${CUDAMOD_BUILD_ROOT:?}" "${MKFIXTURE:?}" "${CUDAMOD_PREFIX:?}"
unset CUDAMOD_PROBE

fails=0
fail() { echo "install: FAIL: $*"; fails=$((fails + 1)); }
say() { echo "install: $*"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-install-XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! meson install -C "$CUDAMOD_BUILD_ROOT" --destdir "$work/dest" --no-rebuild --quiet >"$work/install.log" 2>&1; then
        cat "$work/install.log"
        echo "install: FAIL: meson install failed"
        exit 1
fi
root=$work/dest$CUDAMOD_PREFIX
for f in bin/cudamod libexec/cudamod/cudamod-probe share/cudamod/templates/lua/module.lua.in \
         share/cudamod/templates/tcl/module.tcl.in modulefiles/cudamod.lua; do
        [ -f "$root/$f" ] || fail "$f is not installed under $root"
done
for f in share/doc/cudamod/examples/hierarchical-lmod.yaml share/doc/cudamod/examples/cron-check.sh \
         share/doc/cudamod/guide.md; do
        [ -f "$root/$f" ] || fail "$f is not installed under $root"
done
[ -n "$(find "$root" -path '*/bash-completion/completions/cudamod' -type f)" ] ||
        fail "the bash completion is not installed under $root"
if command -v scdoc >/dev/null; then
        for f in share/man/man1/cudamod.1 share/man/man5/cudamod-site.yaml.5; do
                [ -f "$root/$f" ] || fail "$f is not installed under $root (scdoc is there)"
        done
fi
[ -x "$root/bin/cudamod" ] || { echo "install: FAIL: no executable bin/cudamod"; exit 1; }
say "installed: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"

# installed BIN ARGS...: run an installed cudamod (under valgrind in the
# valgrind setup, see tests/valgrind.sh).
installed() {
        local bin=$1
        shift
        if [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
                CUDAMOD_VALGRIND_REAL=$bin "$CUDAMOD_VALGRIND_WRAPPER" "$@"
        else
                "$bin" "$@"
        fi
}

# The installed binary, from a directory unrelated to the build tree.
cd "$work"
installed "$root/bin/cudamod" --version >"$work/version.out" || fail "cudamod --version exits $?"
"$MKFIXTURE" demo "$work/site" >/dev/null
installed "$root/bin/cudamod" generate -o "$work/mf" "$work/site" >"$work/gen.out" 2>&1 || fail "generate: $(cat "$work/gen.out")"
[ -f "$work/mf/Core/cuda/12.9.lua" ] || fail "generate wrote no Core/cuda/12.9.lua: $(ls -R "$work/mf" | head -20)"

# validate needs the probe: found relative to the installed cudamod.
probe_found() { # PREFIX_ROOT
        local rc=0
        env -u CUDAMOD_PROBE PATH=/usr/bin:/bin HOME="$work" bash -c "$(declare -f installed); installed \"\$@\"" - \
                "$1/bin/cudamod" validate --no-compile --json \
                --modulepath "$work/mf/Core" cuda/12.9 >"$work/val.out" 2>"$work/val.err" || rc=$?
        if [ $rc = 2 ]; then
                fail "validate from $1 exits 2: $(cat "$work/val.err")"
                return
        fi
        python3 - "$work/val.out" <<'PY' || fail "validate from $1: the probe did not run: $(head -c 1500 "$work/val.out")"
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [c for m in doc["modules"] for c in m["checks"] if c["id"] == "run"]
assert runs and all("not found" not in c["message"] and "could not be started" not in c["message"] for c in runs), runs
PY
}
probe_found "$root"
# Moved: the whole prefix somewhere else, the original gone.
mv "$root" "$work/moved"
probe_found "$work/moved"
mv "$work/moved" "$root"

# The self-module names the real prefix, not the staging directory.
grep -qF "prepend_path(\"PATH\", \"$CUDAMOD_PREFIX/bin\")" "$root/modulefiles/cudamod.lua" ||
        fail "modulefiles/cudamod.lua does not put $CUDAMOD_PREFIX/bin on PATH: $(cat "$root/modulefiles/cudamod.lua")"
if grep -qF "$work" "$root/modulefiles/cudamod.lua"; then fail "modulefiles/cudamod.lua names the DESTDIR"; fi
lmod=/usr/share/lmod/lmod/init/bash
if [ -r "$lmod" ]; then
        out=$(env -i HOME="$work" PATH=/usr/bin:/bin bash --noprofile --norc -c \
                "source $lmod; module use '$root/modulefiles'; module load cudamod && printf '%s\n' \"\$PATH\"" 2>&1) ||
                fail "Lmod could not load cudamod: $out"
        case "$out" in
        "$CUDAMOD_PREFIX/bin:"*) ;;
        *) fail "after module load cudamod, PATH is '$out', not $CUDAMOD_PREFIX/bin first" ;;
        esac
else
        say "Lmod is not installed: the self-module was not loaded"
fi
if [ $fails -ne 0 ]; then
        say "$fails assertion(s) failed"
        exit 1
fi
say "ok"
