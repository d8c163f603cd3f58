#!/usr/bin/env bash
# tests/stress/kill9.sh: `cudamod generate` killed with SIGKILL or SIGTERM
# at random moments never leaves a partial or mixed modulefile.
#
# Tree: the demo installs plus 40 synthetic prefixes (about 50 modulefiles:
# enough to land kills among the writes, few enough for 1,000 kills).
# State A: config a.yaml (SITE_X=a on every module), with one extra cuDNN.
# State B: config b.yaml (SITE_X=b, so every modulefile differs from A), the
# extra cuDNN removed and another one added. A's and B's trees are generated
# into the same OUT path (the files name it) and kept as copies.
# Then KILLS times (STRESS_KILLS, default 1000): start `cudamod --config
# b.yaml generate --prune -o OUT ROOT` on OUT, send it SIGKILL or SIGTERM
# (at random, half each) after a random delay, and
# check (tests/stress/treecheck.py) that every file in OUT is byte-identical
# to its A or B version (or absent when B does not have it, or a
# .cudamod-tmp.* left by a SIGKILL; A and B parse with luac5.1, so each file
# does) and that the index lets the next run finish the job (each file it
# lists holds the recorded sha256 or B's version; each it does not list is
# B's version). After a SIGKILL the index is the one before the run or B's,
# byte for byte. After a SIGTERM the run exits by SIGTERM (status 143); when
# the signal came while the tree was written, generate says so, no
# temporary file is left at all, and the index lists exactly the files on
# disk with their sha256; when it came before (scanning), nothing changed.
# OUT is rewound to A after about half the kills (always when it already is
# B), else the next kill starts from what this one left. At the end a run
# to completion must leave exactly B (index included) and no temporary file.
# Delays: odd kills wait 0..W ms (W ~ 1.3 x a full run), anywhere in the
# run; even kills aim at the writes, which are a few per cent of a run,
# after S..T ms, a window that starts at the length of a --check run and
# closes in on the writes from what each aimed kill found (nothing written
# yet: S moves up; everything written: T moves down) and widens by 1 ms
# at each end after every aimed kill, so it follows the machine's load.
# If after KILLS kills a signal has not yet landed while files were being
# written, kills go on (at most 4 x KILLS in all) until it has: without
# that the test proves nothing, and it fails.
set -euo pipefail
# Under `meson test --setup valgrind`, bash itself would be the program
# checked (and it leaks): leave at once, without a leak check (exec).
[ "${CUDAMOD_UNDER_VALGRIND:-}" = 1 ] && exec sh -c 'echo "skipped under valgrind" >&2; exit 77'
. "$(dirname "$0")/lib.sh"

kills=${STRESS_KILLS:-1000}
root=$work/root out=$work/out
write_ab_configs "$work/cfg"

removed=cudnn-linux-x86_64-9.5.0.50_cuda12-archive
added=cudnn-linux-x86_64-9.6.0.74_cuda12-archive
mktree "$root" demo synth:40 "cudnn:9.5.0:12@sw/$removed"
gen_state a A
rm -rf "$root/sw/$removed"
mktree "$root" "cudnn:9.6.0:12@sw/$added"
gen_state b B
manifest "$work/A" >"$work/A.sums"
manifest "$work/B" >"$work/B.sums"
nA=$(wc -l <"$work/A.sums") nB=$(wc -l <"$work/B.sums")
[ "$nA" -gt 40 ] || fail "state A has only $nA files"
grep -q 'SITE_X' "$work/A/Core/cuda/12.9.lua" || fail "the config's SITE_X is not in Core/cuda/12.9.lua"
lua_syntax "$work/A" || fail "state A does not parse"
lua_syntax "$work/B" || fail "state B does not parse"
# Every modulefile must differ between A and B, or a mixed file could pass.
same=$(LC_ALL=C join -j2 <(awk '{print $1, $2}' "$work/A.sums") <(awk '{print $1, $2}' "$work/B.sums") |
        awk '$2 == $3 && $1 !~ /modulerc/ && $1 != ".cudamod-index.json"' | wc -l)
[ "$same" -eq 0 ] || note "note: $same modulefiles are equal in A and B"
note "A: $nA files, B: $nB files"

treecheck_start
tc load A "$work/A" || fail "loading A: $tc_reply"
tc load B "$work/B" || fail "loading B: $tc_reply"

rewind() {
        tc rewind "$out" A || fail "rewinding to A: $tc_reply"
}

# How long a full A -> B run takes.
best=999999
for _ in 1 2 3; do
        rewind
        t0=$(ms)
        gen b --prune >/dev/null 2>&1 || fail "a timing run failed"
        t1=$(ms)
        [ $((t1 - t0)) -lt $best ] && best=$((t1 - t0))
done
manifest "$out" | cmp -s - "$work/B.sums" || fail "an A -> B run does not give B"
W=$((best * 13 / 10 + 2)) T=$W
# Scanning, planning and comparing take most of a run (a --check run does
# just that): every other kill lands after that, while files are written.
rewind
S=999999
for _ in 1 2 3; do
        t0=$(ms)
        gen b --check >/dev/null 2>&1 && fail "--check on A's tree with config b says it is up to date"
        t1=$(ms)
        [ $((t1 - t0)) -lt $S ] && S=$((t1 - t0))
done
[ $S -lt $T ] || S=0
note "a full A -> B run takes $best ms, a --check run $S ms; killing after 0..$W ms (every other kill after $S..$T to begin with), $kills times"

# A sleep without a process: a read that times out on a FIFO this shell
# holds open at both ends.
mkfifo "$work/never"
exec {never}<>"$work/never"
declare -A outcome
rewind
rewinds=0 tmp_seen=0 terms_in_write=0 mid_run_ok=0
loop_t0=$(ms)
# Has each signal landed while files were written?
mid_run() {
        [ "${outcome["SIGKILL mid-run (tree changed, incomplete)"]:-0}" -gt 0 ] &&
                [ "${outcome["SIGTERM mid-run (tree changed, incomplete)"]:-0}" -gt 0 ]
}
for ((i = 1; i <= kills || (i <= 4 * kills && !mid_run_ok); i++)); do
        if [ $((i % 2)) -eq 0 ]; then
                delay=$((S + RANDOM % (T - S + 1)))
        else
                delay=$((RANDOM % (W + 1)))
        fi
        if [ $((RANDOM % 2)) -eq 0 ]; then sig=KILL; else sig=TERM; fi
        "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" >/dev/null 2>"$work/kill.err" &
        pid=$!
        printf -v secs '%d.%03d' $((delay / 1000)) $((delay % 1000))
        read -r -t "$secs" -u $never _ || true
        kill -s $sig "$pid" 2>/dev/null || true
        rc=0
        { wait "$pid"; } 2>/dev/null || rc=$?
        if [ $rc -eq 0 ]; then
                mode=done
        elif [ $sig = KILL ] && [ $rc -eq 137 ]; then
                mode=kill
        elif [ $sig = TERM ] && [ $rc -eq 143 ]; then
                kerr=
                IFS= read -r -d '' kerr <"$work/kill.err" || true
                if [[ $kerr == *"interrupted by SIGTERM"* ]]; then
                        mode=term-strict
                        terms_in_write=$((terms_in_write + 1))
                else
                        mode=term
                fi
        else
                cat "$work/kill.err" >&2
                fail "kill $i (SIG$sig): generate exited $rc"
        fi
        if ! tc check "$out" $mode; then
                [ -e "$work/failed-state" ] || cp -a "$out" "$work/failed-state"
                cat "$work/kill.err" >&2
                fail "kill $i (SIG$sig after $delay ms, exit $rc): $tc_reply (OUT kept in $work/failed-state, run with STRESS_KEEP_ON_FAIL=1)"
        fi
        state=${tcf[state]} same=${tcf[same]}
        [ "${tcf[tmp]}" -eq 0 ] || tmp_seen=$((tmp_seen + 1))
        if [ $rc -eq 0 ]; then
                what="finished before the signal"
        elif [ "$same" = 1 ]; then
                what="SIG$sig before anything was written"
        elif [ "$state" = B ]; then
                what="SIG$sig after everything was written"
        else
                what="SIG$sig mid-run (tree changed, incomplete)"
        fi
        outcome[$what]=$((${outcome[$what]:-0} + 1))
        # Runs get faster or slower with the machine's load: the whole
        # window shrinks when a run finished first, grows when a kill at
        # its end found nothing written; the aimed window closes in on the
        # writes and widens a little every time.
        if [ $rc -eq 0 ] && [ $delay -lt $W ]; then
                W=$(((W + delay) / 2 + 1))
        elif [ "$same" = 1 ] && [ $delay -ge $((W * 9 / 10)) ]; then
                W=$((W * 11 / 10 + 1))
        fi
        if [ $((i % 2)) -eq 0 ]; then
                if [ "$same" = 1 ] && [ $delay -gt $S ]; then
                        S=$(((S + delay + 1) / 2))
                elif { [ $rc -eq 0 ] || [ "$state" = B ]; } && [ $delay -lt $T ]; then
                        T=$(((T + delay) / 2))
                fi
                S=$((S > 0 ? S - 1 : 0)) T=$((T + 1))
                [ $S -lt $T ] || S=$((T - 1))
        fi
        mid_run && mid_run_ok=1
        if [ "$state" = B ] || [ $((RANDOM % 2)) -eq 0 ]; then
                rewind
                rewinds=$((rewinds + 1))
        fi
done

kills=$((i - 1))
note "$kills kills took $((($(ms) - loop_t0) / 1000)) s"
note "kill windows at the end: 0..$W ms, aimed $S..$T ms"
note "outcomes of $kills kills (start state A $rewinds+1 times, else the state the last kill left):"
for k in "${!outcome[@]}"; do printf '  %4d  %s\n' "${outcome[$k]}" "$k"; done | sort -k2
note "kills that left .cudamod-tmp.* files: $tmp_seen; SIGTERMs that generate caught while writing (and said so): $terms_in_write"
for sig in KILL TERM; do
        [ "${outcome["SIG$sig mid-run (tree changed, incomplete)"]:-0}" -gt 0 ] ||
                fail "no SIG$sig landed mid-run: the runs are too short for this test to mean anything"
done

# A run to completion leaves exactly B and no temporary file.
gen b --prune >"$work/final.log" 2>&1 || { cat "$work/final.log" >&2; fail "the final run failed"; }
if ! manifest "$out" | cmp -s - "$work/B.sums"; then
        diff <(manifest "$out") "$work/B.sums" >&2 || true
        fail "after a run to completion OUT is not B"
fi
[ -z "$(find "$out" -name '.cudamod-tmp.*')" ] || fail "temporary files remain after a complete run"
diff <(index_files "$out") <(cd "$work/B" && find . -type f ! -name '.cudamod*' -printf '%P\n' | LC_ALL=C sort) >&2 ||
        fail "the index does not list exactly B's files"
"$cudamod" --config "$work/cfg/b.yaml" generate --check -o "$out" "$root" >/dev/null ||
        fail "--check after the final run says the tree is out of date"
note "ok"
