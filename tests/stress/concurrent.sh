#!/usr/bin/env bash
# tests/stress/concurrent.sh: two `cudamod generate` runs on one output
# directory never interleave.
#
# 1. ROUNDS times (default 30): start a run with config a.yaml and one with
#    b.yaml (they differ in every modulefile) at the same moment, on the same
#    OUT, starting from an empty OUT, from A's tree or from B's tree in turn,
#    with the two started in alternating order. Both must exit 0, and OUT
#    must then be entirely A's tree or entirely B's (every file, and the index
#    byte for byte), and `--check` with the winner's config must exit 0.
#    In every other pair of rounds the script itself holds OUT's lock until
#    both runs say they are waiting for it, so that they are certain to meet
#    at the lock (the harshest interleaving: both have scanned and planned
#    before either writes); in the rounds between, they race freely.
# 2. A lock held by someone else (`flock OUT/.cudamod.lock sleep …`): generate
#    says on stderr that it waits (a message naming the lock), writes
#    nothing while it is held (1 s after the message), and writes the tree
#    once it is released.
set -euo pipefail
# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh).
. "$(dirname "$0")/../valgrind.sh"
. "$(dirname "$0")/lib.sh"

command -v flock >/dev/null 2>&1 || skip "flock(1) is needed"
rounds=${STRESS_ROUNDS:-30}
root=$work/root out=$work/out
write_ab_configs "$work/cfg"
mktree "$root" demo synth:60
gen_state a A
gen_state b B
for v in A B; do
        manifest "$work/$v" >"$work/$v.sums"
done
cmp -s "$work/A.sums" "$work/B.sums" && fail "A and B are the same tree"
note "A and B: $(wc -l <"$work/A.sums") files each"

declare -A won
waited=0 held_rounds=0
for ((i = 1; i <= rounds; i++)); do
        rm -rf "$out"
        case $((i % 3)) in
        1) start=A; cp -a "$work/A" "$out" ;;
        2) start=B; cp -a "$work/B" "$out" ;;
        0) start=empty ;;
        esac
        if [ $((i % 2)) -eq 0 ]; then first=a second=b; else first=b second=a; fi
        held=$(((i / 2) % 2))
        if [ $held = 1 ]; then
                mkdir -p "$out"
                exec 8>"$out/.cudamod.lock"
                flock -x 8
        fi
        # Both wait for a shared lock on a barrier file that this script
        # holds exclusively, and so start together when it lets go.
        exec 9>"$work/barrier"
        flock -x 9
        # Emptied here, not by the jobs' own redirections (which happen
        # once each job runs): the polling below must not read the last
        # round's "waiting".
        : >"$work/1.err"
        : >"$work/2.err"
        (flock -s "$work/barrier" true; exec "$cudamod" --config "$work/cfg/$first.yaml" generate -o "$out" "$root") \
                >"$work/1.out" 2>"$work/1.err" 9>&- 8>&- &
        p1=$!
        (flock -s "$work/barrier" true; exec "$cudamod" --config "$work/cfg/$second.yaml" generate -o "$out" "$root") \
                >"$work/2.out" 2>"$work/2.err" 9>&- 8>&- &
        p2=$!
        sleep 0.05
        flock -u 9
        exec 9>&-
        if [ $held = 1 ]; then
                for _ in $(seq 3000); do
                        if grep -qi 'waiting' "$work/1.err" && grep -qi 'waiting' "$work/2.err"; then
                                break
                        fi
                        kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null || break
                        sleep 0.02
                done
                grep -qi 'waiting' "$work/1.err" && grep -qi 'waiting' "$work/2.err" ||
                        { cat "$work/1.err" "$work/2.err" >&2; fail "round $i: with the lock held, the runs did not both say they wait for it"; }
                flock -u 8
                exec 8>&-
        fi
        r1=0 r2=0
        wait $p1 || r1=$?
        wait $p2 || r2=$?
        if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
                cat "$work/1.err" "$work/2.err" >&2
                fail "round $i: the runs exited $r1 and $r2"
        fi
        manifest "$out" >"$work/cur.sums"
        if cmp -s "$work/cur.sums" "$work/A.sums"; then
                w=a
        elif cmp -s "$work/cur.sums" "$work/B.sums"; then
                w=b
        else
                diff "$work/A.sums" "$work/cur.sums" | head -20 >&2 || true
                cp -a "$out" "$work/failed-state"
                fail "round $i (from $start, $first then $second): OUT is neither A's tree nor B's"
        fi
        [ -z "$(find "$out" -name '.cudamod-tmp.*')" ] || fail "round $i: temporary files remain"
        gen $w --check >"$work/check.out" 2>&1 || { cat "$work/check.out" >&2; fail "round $i: --check with the winner's config ($w) exits non-zero"; }
        won["from $start: $w"]=$((${won["from $start: $w"]:-0} + 1))
        [ $held = 1 ] && held_rounds=$((held_rounds + 1))
        [ $held = 0 ] && grep -qi 'waiting' "$work/1.err" "$work/2.err" && waited=$((waited + 1))
done
note "$rounds rounds, all consistent: in $held_rounds both runs met at a held lock; of the free races, $waited overlapped; the winner by start state:"
for k in "${!won[@]}"; do printf '  %3d  %s\n' "${won[$k]}" "$k"; done | sort -k2
[ $held_rounds -gt 0 ] || fail "no round made the runs meet at the lock: the test proved nothing"

# 2. A lock held by another process: held until generate says it waits
# (however long its scan takes, under valgrind too), then 1 s more.
rm -rf "$out"
cp -a "$work/A" "$out"
# -o: the lock stays with flock itself, so killing it releases the lock.
flock -o "$out/.cudamod.lock" sleep 600 &
holder=$!
for _ in $(seq 100); do
        flock -n "$out/.cudamod.lock" true 2>/dev/null || break
        sleep 0.02
done
flock -n "$out/.cudamod.lock" true 2>/dev/null && fail "could not take the lock for the test"
gen b >"$work/wait.out" 2>"$work/wait.err" &
waiter=$!
said=0
for _ in $(seq 1200); do
        if grep -qi 'lock' "$work/wait.err"; then said=1; break; fi
        kill -0 $waiter 2>/dev/null || break
        sleep 0.1
done
sleep 1
manifest "$out" | cmp -s - "$work/A.sums" || fail "generate wrote while the lock was held"
t0=$(ms)
pkill -P $holder 2>/dev/null || true
kill $holder 2>/dev/null || true
wait $holder 2>/dev/null || true
rc=0
wait $waiter || rc=$?
t1=$(ms)
note "generate waited at the held lock; it ended $((t1 - t0)) ms after the release; stderr: $(head -c 300 "$work/wait.err")"
[ $said = 1 ] || fail "generate did not say on stderr that it waits for the lock"
[ $rc = 0 ] || { cat "$work/wait.err" >&2; fail "generate with a held lock failed (exit $rc)"; }
grep -qF "$out/.cudamod.lock" "$work/wait.err" || note "note: the waiting message does not name $out/.cudamod.lock"
manifest "$out" | cmp -s - "$work/B.sums" || fail "after waiting, the tree is not B's"
note "ok"
