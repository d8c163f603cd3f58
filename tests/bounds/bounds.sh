#!/usr/bin/env bash
# tests/bounds/bounds.sh: cudamod on inputs far beyond what a site holds
# (doc/HACKING.md "Limits"), end to end: each is handled within its documented limit
# or refused with a message that names the file and the limit, with a small
# peak RSS, never a crash and never a half-written tree. The sizes here
# cross every limit but stay cheap (a few seconds in all); bench/bounds.sh
# runs the full-size cases (100,000 directories, 1,000,000 entries).
#
#  1. A 1 GiB version.json (sparse) in a CUDA prefix: scan reports
#     bad-version-file ("larger than 1048576 bytes") and reads no more than
#     1 MiB of it; generate still writes the tree (the version comes from
#     the other files).
#  2. A 100 MiB site config (sparse, and a 2 MiB real YAML): `config` and
#     `generate` refuse it (exit 2, "larger than 1 MiB, too large for a
#     config"), and nothing is written.
#  3. A 10 MiB modulefile: `show` refuses it (exit 1, "larger than 1 MiB,
#     too large for a modulefile"), `validate` fails its syntax check and
#     goes on with the other modules, `doctor --modulepath` goes on; a
#     44-byte modulefile looping over setenv ends at 10,000 calls.
#  4. A 10 MiB file where generate writes a modulefile (the index and
#     read_current path): left alone as edited, the rest written.
#  5. A directory of WALK_MAX_ENTRIES + 1 (100,001) entries, as the library
#     directory of a CUDA prefix and as a plain directory: scan skips it
#     with a warning naming it and the limit; doctor refuses it (exit 2);
#     validate of a module with it on LD_LIBRARY_PATH warns that its
#     libraries were not checked.
#  6. A chain of directories 50 deep (with 1,000 siblings): scan stops at
#     max_depth (8 by default), and with `max_depth: 64` finds the install
#     at the bottom.
#
# Peak RSS (getrusage of the child, through tests/bounds/peakrss.c, $PEAKRSS)
# must stay under BOUNDS_MAX_RSS_KB (default 96 MiB, room for a sanitizer
# build); without PEAKRSS only the behaviour is checked.
set -euo pipefail
# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh), and no peak RSS check (valgrind's
# own memory would count).
. "$(dirname "$0")/../valgrind.sh"

name=bounds
fail() { echo "$name: FAIL: $*" >&2; exit 1; }
skip() { echo "$name: SKIP: $*" >&2; exit 77; }
note() { echo "$name: $*"; }

[ -n "${CUDAMOD_BIN:-}" ] && [ -x "$CUDAMOD_BIN" ] || skip "CUDAMOD_BIN is not set or not executable"
[ -n "${MKFIXTURE:-}" ] && [ -x "$MKFIXTURE" ] || skip "MKFIXTURE is not set or not executable"
max_rss_kb=${BOUNDS_MAX_RSS_KB:-98304}
peakrss=${PEAKRSS:-}
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || peakrss=
[ -z "$peakrss" ] || [ -x "$peakrss" ] || skip "PEAKRSS '$peakrss' is not executable"

work=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-bounds-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# run NAME CMD...: run CMD with stdout in NAME.out, stderr in NAME.err, its
# exit status in $rc and its peak RSS (KiB) in $rss (0 when unknown).
run() {
        local n=$1
        shift
        rc=0
        if [ -n "$peakrss" ]; then
                "$peakrss" "$n.rss" "$@" >"$n.out" 2>"$n.err" || rc=$?
                rss=$(cat "$n.rss")
        else
                "$@" >"$n.out" 2>"$n.err" || rc=$?
                rss=0
        fi
        [ "$rss" -le "$max_rss_kb" ] || fail "$n: peak RSS $rss KiB, more than $max_rss_kb"
}
# expect NAME STATUS: the last run exited with STATUS.
expect() {
        [ "$rc" = "$2" ] || fail "$1: exit $rc, expected $2; stderr: $(head -c 2000 "$1.err")"
}
# contains NAME FILE-SUFFIX TEXT
contains() {
        grep -qF -- "$3" "$1.$2" || fail "$1: '$3' not in its std$2: $(head -c 2000 "$1.$2")"
}

"$MKFIXTURE" demo demo >/dev/null

# 1. A 1 GiB version.json.
cp -a demo vj
truncate -s 1G vj/sw/cuda-12.9/version.json
run vj-scan "$CUDAMOD_BIN" scan --json vj
expect vj-scan 0
contains vj-scan out "'$work/vj/sw/cuda-12.9/version.json' is larger than 1048576 bytes"
contains vj-scan out '"version": "12.9"'
note "1 GiB version.json: scan reports it, peak RSS $rss KiB"
run vj-gen "$CUDAMOD_BIN" generate -o vj-out vj
expect vj-gen 0
[ -f vj-out/Core/cuda/12.9.lua ] || fail "vj-gen: no Core/cuda/12.9.lua"
contains vj-gen err "is larger than 1048576 bytes"

# 2. A 100 MiB config, sparse and real.
truncate -s 100M sparse.yaml
{
        printf 'output: %s/never\nenv:\n  cuda:\n    setenv:\n' "$work"
        i=0
        while [ $i -lt 20000 ]; do
                printf '      VAR_%d: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"\n' $i
                i=$((i + 1))
        done
} >real.yaml
[ "$(stat -c %s real.yaml)" -gt 1048576 ] || fail "real.yaml is not over 1 MiB"
for y in sparse real; do
        run cfg-$y "$CUDAMOD_BIN" --config $y.yaml config
        expect cfg-$y 2
        contains cfg-$y err "cudamod: $y.yaml: larger than 1 MiB, too large for a config"
        run cfg-gen-$y "$CUDAMOD_BIN" --config $y.yaml generate demo
        expect cfg-gen-$y 2
        [ ! -e never ] || fail "cfg-gen-$y: wrote $work/never"
done
note "100 MiB config: refused, peak RSS $rss KiB"

# 3. A 10 MiB modulefile, and a short one that calls setenv a million times.
"$CUDAMOD_BIN" generate -o mf demo >/dev/null
mkdir -p mp/big mp/loop
{
        echo 'setenv("A", "1")'
        yes 'setenv("VAR", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")' | head -c 10M ||
                true # yes ends with SIGPIPE
} >mp/big/1.0.lua
echo 'for i = 1, 1e6 do setenv("V" .. i, "x") end' >mp/loop/1.0.lua
run mf-show "$CUDAMOD_BIN" show --modulepath mp big
expect mf-show 1
contains mf-show err "cudamod: mp/big/1.0.lua: larger than 1 MiB, too large for a modulefile"
note "10 MiB modulefile: show refuses it, peak RSS $rss KiB"
run mf-loop "$CUDAMOD_BIN" show --modulepath mp loop
expect mf-loop 1
contains mf-loop err "mp/loop/1.0.lua:1: more than 10000 calls to modulefile functions"
cp -a mf mf-big
cp mp/big/1.0.lua mf-big/Core/cuda/12.9.lua
run mf-validate "$CUDAMOD_BIN" validate --no-compile --modulepath mf-big/Core cuda/12.9 cuda/11.8
expect mf-validate 1
contains mf-validate out "larger than 1 MiB, too large for a modulefile"
contains mf-validate out "cuda/11.8"
"$MKFIXTURE" doctor dx >/dev/null
"$CUDAMOD_BIN" generate -o dmf dx/sw >/dev/null
mkdir -p dmf/Core/big
cp mp/big/1.0.lua dmf/Core/big/1.0.lua
run mf-doctor "$CUDAMOD_BIN" doctor --modulepath dmf/Core dx/site-packages/torch
expect mf-doctor 1
contains mf-doctor out "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5"

# 4. A 10 MiB file where generate writes a modulefile.
cp -a mf mf-out
cp mp/big/1.0.lua mf-out/Core/cuda/12.9.lua
run out-gen "$CUDAMOD_BIN" generate -o mf-out demo
expect out-gen 0
contains out-gen out "edited       Core/cuda/12.9.lua"
cmp -s mp/big/1.0.lua mf-out/Core/cuda/12.9.lua || fail "out-gen: the edited file changed"
note "10 MiB file in the output tree: left as edited, peak RSS $rss KiB"
# A 1 GiB (sparse) file there, and a 1 GiB index: refused before reading.
cp -a mf mf-huge
truncate -s 1G mf-huge/Core/cuda/12.9.lua
run out-huge "$CUDAMOD_BIN" generate -o mf-huge demo
expect out-huge 1
contains out-huge err "Core/cuda/12.9.lua' is 1073741824 bytes, larger than any modulefile cudamod writes"
cp -a mf mf-index
truncate -s 1G mf-index/.cudamod-index.json
run out-index "$CUDAMOD_BIN" generate -o mf-index demo
expect out-index 1
contains out-index err "the index is larger than 64 MiB (1073741824 bytes)"
note "1 GiB file and 1 GiB index in the output tree: refused, peak RSS $rss KiB"

# 5. A directory of 100,001 entries: the library directory of a CUDA
# prefix, and reached through a symlink as a plain directory.
cp -a demo widelib
lib=widelib/sw/cuda-12.9/targets/x86_64-linux/lib
seq -f "$lib/f%07g" 0 100000 | xargs touch
mkdir wide
ln -s ../$lib wide/scratch
run wide-scan "$CUDAMOD_BIN" scan wide
expect wide-scan 0
contains wide-scan err "cudamod: cannot scan '$work/wide/scratch': more than 100000 entries"
note "100,001 entries: skipped with a warning, peak RSS $rss KiB"
run widelib-scan "$CUDAMOD_BIN" scan widelib
expect widelib-scan 0
contains widelib-scan err "cannot look for libraries in '$work/widelib/sw/cuda-12.9': a library directory there holds more than 100000 entries"
contains widelib-scan out "widelib/sw/cuda-11.8"
# Every detector looks in a CUDA prefix's library directory: one that large
# is read once (a directory of 100,001 entries takes about 100 getdents64
# calls; the demo tree's others about 200), not once per detector (1,400
# calls before, and under ASan a peak RSS past the limit).
if command -v strace >/dev/null && [ -z "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        # LeakSanitizer does not run under ptrace; the run above checked leaks.
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                strace -f -c -e trace=getdents64 -o widelib-scan.strace "$CUDAMOD_BIN" scan widelib \
                >widelib-scan.strace.out 2>&1 || fail "widelib-scan under strace failed: $(tail -n 5 widelib-scan.strace.out)"
        calls=$(awk '$NF == "getdents64" { print $4 }' widelib-scan.strace)
        [ -n "$calls" ] && [ "$calls" -lt 600 ] ||
                fail "widelib-scan: ${calls:-?} getdents64 calls: the 100,001-entry directory is read more than once"
        note "widelib-scan: $calls getdents64 calls"
fi
run widelib-doctor "$CUDAMOD_BIN" doctor "$lib"
expect widelib-doctor 2
contains widelib-doctor err "more than 100000 entries in a directory"
# A module that puts it on LD_LIBRARY_PATH: validate says its libraries
# were not checked, and checks the rest.
mkdir -p mp-wide/wide
printf 'prepend_path("LD_LIBRARY_PATH", "%s")\n' "$work/$lib" >mp-wide/wide/1.0.lua
run wide-validate "$CUDAMOD_BIN" validate --no-compile --modulepath mp-wide wide/1.0
[ "$rc" -le 1 ] || { cat wide-validate.err >&2; fail "wide-validate: exit $rc"; }
contains wide-validate out "'$work/$lib' holds more than 100000 entries, its libraries not checked"

# 6. 50 levels deep, beside 1,000 siblings.
deep=tree/$(printf 'd%02d/' $(seq 1 49))
mkdir -p "$deep"
cp -a demo/sw/cuda-11.8 "$deep/cuda-11.8"
(cd tree && seq -f "w%04g" 1 1000 | xargs mkdir)
run deep-default "$CUDAMOD_BIN" scan tree
expect deep-default 0
grep -qF "cuda-11.8" deep-default.out && fail "deep-default: found an install 50 levels down at max_depth 8"
printf 'max_depth: 64\n' >deep.yaml
run deep-64 "$CUDAMOD_BIN" --config deep.yaml scan tree
expect deep-64 0
contains deep-64 out "/d49/cuda-11.8"
note "50 levels deep: found with max_depth 64, peak RSS $rss KiB"
