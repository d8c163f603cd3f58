#!/usr/bin/env bash
# tests/stress/incremental.sh: what re-running `generate` on an existing tree
# does, file by file.
#
#  1. One new cuDNN (9.6.0 for CUDA 12, older than the demo's 9.7.1, so the
#     default stays): exactly one file created (CUDA/12/cudnn/9.6.0.lua), the
#     summary says "1 created, 0 updated, N unchanged", and every other file
#     keeps its inode and mtime (the index excepted: it gains the entry).
#  2. --check then exits 0 and writes nothing.
#  3. Another install (NCCL 2.20.3) without regenerating: --check exits 1 and
#     names CUDA/12/nccl/2.20.3.lua; --dry-run prints a unified diff
#     ("--- /dev/null", "+++ b/CUDA/12/nccl/2.20.3.lua") and writes nothing.
#  4. A file edited by hand: a run leaves it (reported "edited", summary
#     "1 skipped"), --check exits 1, --force overwrites it with the generated
#     content. A file cudamod did not write is never touched, not even by
#     --force --prune.
#  5. A removed install: its file is reported stale and kept; --prune removes
#     it (and its directory when it became empty).
set -euo pipefail
# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh).
. "$(dirname "$0")/../valgrind.sh"
. "$(dirname "$0")/lib.sh"

root=$work/root out=$work/out
mktree "$root" demo synth:20
gen() {
        "$cudamod" generate "$@" -o "$out" "$root"
}
run() { # NAME EXPECTED_STATUS ARGS...: run gen, keep stdout/stderr in $work/NAME.{out,err}
        local name=$1 want=$2 rc=0
        shift 2
        gen "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
        if [ $rc -ne "$want" ]; then
                cat "$work/$name.out" "$work/$name.err" >&2
                fail "$name: exit status $rc, expected $want"
        fi
}
summary() { # NAME: the summary line of a run
        grep -E '[0-9]+ created, [0-9]+ updated, [0-9]+ unchanged' "$work/$1.out" || fail "$1: no summary line"
}

run first 0
n=$(find "$out" -type f ! -name '.cudamod*' | wc -l)
note "first run: $n files; $(summary first)"
[ -f "$out/CUDA/12/cudnn/9.7.1.lua" ] || fail "no CUDA/12/cudnn/9.7.1.lua"

# 1. One more cuDNN, not the newest for CUDA 12.
mktree "$root" "cudnn:9.6.0:12@sw/cudnn-linux-x86_64-9.6.0.74_cuda12-archive"
stat_list "$out" >"$work/stat.before"
manifest "$out" >"$work/sums.before"
sleep 0.01 # so that a rewrite would show in the mtimes
run add 0
s=$(summary add)
note "after adding cuDNN 9.6.0: $s"
case "$s" in
*" 1 created, 0 updated, $n unchanged, 0 pruned, 0 skipped"*) ;;
*) fail "add: summary '$s', expected '1 created, 0 updated, $n unchanged, 0 pruned, 0 skipped'" ;;
esac
grep -qE '^created +CUDA/12/cudnn/9\.6\.0\.lua$' "$work/add.out" || fail "add: CUDA/12/cudnn/9.6.0.lua not reported created"
[ -f "$out/CUDA/12/cudnn/9.6.0.lua" ] || fail "add: CUDA/12/cudnn/9.6.0.lua missing"
stat_list "$out" >"$work/stat.after"
changed=$(diff <(grep -v -e '^\.cudamod-index\.json ' -e '^\.cudamod\.lock ' "$work/stat.before") \
        <(grep -v -e '^\.cudamod-index\.json ' -e '^\.cudamod\.lock ' -e '^CUDA/12/cudnn/9\.6\.0\.lua ' "$work/stat.after") |
        grep '^[<>]' | grep -v -E '^[<>] (CUDA/12/cudnn|CUDA/12|CUDA) [0-9]' || true)
[ -z "$changed" ] || { echo "$changed" >&2; fail "add: files other than the new one changed inode or mtime"; }
diff <(grep -v -e ' \.cudamod-index\.json$' "$work/sums.before") \
        <(manifest "$out" | grep -v -e ' \.cudamod-index\.json$' -e ' CUDA/12/cudnn/9\.6\.0\.lua$') >&2 ||
        fail "add: the content of other files changed"
if [ -f "$out/CUDA/12/cudnn/.modulerc.lua" ] && grep -q '9\.6\.0' "$out/CUDA/12/cudnn/.modulerc.lua"; then
        fail "add: CUDA/12/cudnn/.modulerc.lua now names 9.6.0"
fi
grep -qx 'CUDA/12/cudnn/9.6.0.lua' <<<"$(index_files "$out")" || fail "add: the index does not list the new file"

# 2. --check on an up-to-date tree.
stat_list "$out" >"$work/stat.before"
run check-clean 0 --check
[ "$(stat_list "$out")" = "$(cat "$work/stat.before")" ] || fail "--check changed the tree"

# 3. A new install, not generated yet.
mktree "$root" "nccl:2.20.3:12.4@sw/nccl_2.20.3-1+cuda12.4_x86_64"
run check-drift 1 --check
grep -q 'CUDA/12/nccl/2\.20\.3\.lua' "$work/check-drift.out" || fail "--check does not name CUDA/12/nccl/2.20.3.lua"
note "--check with a new install: $(tr '\n' '|' <"$work/check-drift.out")"
run dry 0 --dry-run
grep -qx -- '--- /dev/null' "$work/dry.out" || fail "--dry-run: no '--- /dev/null' line"
grep -qx -- '+++ b/CUDA/12/nccl/2.20.3.lua' "$work/dry.out" || fail "--dry-run: no '+++ b/CUDA/12/nccl/2.20.3.lua' line"
grep -q '^@@ -0,0 +1,[0-9]* @@' "$work/dry.out" || fail "--dry-run: no '@@ -0,0 +1,N @@' hunk header"
added=$(grep -c '^+[^+]' "$work/dry.out" || true)
note "--dry-run: $(wc -l <"$work/dry.out") lines, $added added lines"
[ ! -e "$out/CUDA/12/nccl/2.20.3.lua" ] || fail "--dry-run wrote the file"
[ "$(stat_list "$out")" = "$(cat "$work/stat.before")" ] || fail "--dry-run changed the tree"
run absorb 0
[ -f "$out/CUDA/12/nccl/2.20.3.lua" ] || fail "the new NCCL file was not written"
# What --dry-run promised is what was written.
sed -n '/^+++ b\/CUDA\/12\/nccl\/2.20.3.lua$/,/^--- /p' "$work/dry.out" | sed '1,2d' | grep '^+' | cut -c2- >"$work/promised"
cmp -s "$work/promised" "$out/CUDA/12/nccl/2.20.3.lua" || note "note: the --dry-run diff's added lines differ from the file written"

# 4. Edited by hand; a foreign file.
f=Core/cuda/12.9.lua
cp "$out/$f" "$work/orig.lua"
echo '-- local change' >>"$out/$f"
cp "$out/$f" "$work/edited.lua"
echo '-- written by hand' >"$out/Core/cuda/site.lua"
cp "$out/Core/cuda/site.lua" "$work/foreign.lua"
run edited 0
grep -qE "^edited +$f\$" "$work/edited.out" || { cat "$work/edited.out" >&2; fail "the edited file is not reported 'edited'"; }
grep -q '1 skipped' <<<"$(summary edited)" || fail "edited: the summary does not say 1 skipped"
grep -qi 'edited by hand' "$work/edited.err" || note "note: no warning about the edited file on stderr"
cmp -s "$out/$f" "$work/edited.lua" || fail "a run without --force changed the edited file"
cmp -s "$out/Core/cuda/site.lua" "$work/foreign.lua" || fail "the foreign file was changed"
run edited-check 1 --check
run forced 0 --force
grep -qE "^updated +$f\$" "$work/forced.out" || { cat "$work/forced.out" >&2; fail "--force does not report the edited file 'updated'"; }
cmp -s "$out/$f" "$work/orig.lua" || fail "--force did not restore the generated content"
cmp -s "$out/Core/cuda/site.lua" "$work/foreign.lua" || fail "--force changed the foreign file"
run after-force 0 --check

# 5. A removed install.
rm -rf "$root/sw/cudnn-linux-x86_64-9.6.0.74_cuda12-archive"
run stale 0
grep -qE '^stale +CUDA/12/cudnn/9\.6\.0\.lua$' "$work/stale.out" || { cat "$work/stale.out" >&2; fail "the removed install's file is not reported stale"; }
grep -q '1 stale' <<<"$(summary stale)" || fail "stale: the summary does not count 1 stale"
[ -f "$out/CUDA/12/cudnn/9.6.0.lua" ] || fail "a run without --prune removed the stale file"
run stale-check 1 --check
run pruned 0 --prune --force
grep -qE '^pruned +CUDA/12/cudnn/9\.6\.0\.lua$' "$work/pruned.out" || { cat "$work/pruned.out" >&2; fail "--prune does not report the file pruned"; }
[ ! -e "$out/CUDA/12/cudnn/9.6.0.lua" ] || fail "--prune did not remove the stale file"
cmp -s "$out/Core/cuda/site.lua" "$work/foreign.lua" || fail "--prune --force touched the foreign file"
grep -qx 'CUDA/12/cudnn/9.6.0.lua' <<<"$(index_files "$out")" && fail "the index still lists the pruned file"
# The last NCCL of a CUDA major gone: its directory goes too.
rm -rf "$root/sw/nccl_2.20.3-1+cuda12.4_x86_64" "$root/sw/nccl_2.21.5-1+cuda12.4_x86_64"
find "$root/synth" -maxdepth 1 -name 'nccl_*cuda12.4*' -exec rm -rf {} +
run pruned-dir 0 --prune
if [ -d "$out/CUDA/12/nccl" ]; then
        left=$(find "$out/CUDA/12/nccl" -mindepth 1 | tr '\n' ' ')
        fail "CUDA/12/nccl remains after its last NCCL was pruned (holds: ${left:-nothing})"
fi
run final-check 0 --check
[ -z "$(find "$out" -name '.cudamod-tmp.*')" ] || fail "temporary files remain"
note "ok"
