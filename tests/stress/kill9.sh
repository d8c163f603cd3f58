#!/usr/bin/env bash
# tests/stress/kill9.sh: `cudamod generate` killed with SIGKILL at random
# moments never leaves a partial or mixed modulefile.
#
# Tree: the demo installs plus 100 synthetic prefixes (about 110 modulefiles).
# State A: config a.yaml (SITE_X=a on every module), with one extra cuDNN.
# State B: config b.yaml (SITE_X=b, so every modulefile differs from A), the
# extra cuDNN removed and another one added. A's and B's trees are generated
# into the same OUT path (the files name it) and kept as copies.
# Then KILLS times (default 200): start `cudamod --config b.yaml generate
# --prune -o OUT ROOT` on OUT, SIGKILL it after a random 0..T ms (T ~ 1.3 x a
# full run), and check that every file in OUT is byte-identical to its A or
# B version (or absent when B does not have it, or a .cudamod-tmp.* left by
# the kill), that every .lua parses (luac5.1 -p), and that the index is A's
# or B's, byte for byte. OUT is rewound to A after about half the kills
# (always when it already is B), so that kills land in every phase. At the
# end a run to completion must leave exactly B (index included) and no
# temporary file.
set -euo pipefail
# Under `meson test --setup valgrind`, bash itself would be the program
# checked (and it leaks): leave at once, without a leak check (exec).
[ "${CUDAMOD_UNDER_VALGRIND:-}" = 1 ] && exec sh -c 'echo "skipped under valgrind" >&2; exit 77'
. "$(dirname "$0")/lib.sh"

kills=${STRESS_KILLS:-200}
root=$work/root out=$work/out
write_ab_configs "$work/cfg"

removed=cudnn-linux-x86_64-9.5.0.50_cuda12-archive
added=cudnn-linux-x86_64-9.6.0.74_cuda12-archive
mktree "$root" demo synth:100 "cudnn:9.5.0:12@sw/$removed"
gen() { # CONFIG [ARGS...]
        local cfg=$1
        shift
        "$cudamod" --config "$work/cfg/$cfg.yaml" generate "$@" -o "$out" "$root"
}

gen a >"$work/a.log" 2>&1 || { cat "$work/a.log" >&2; fail "generate A failed"; }
mv "$out" "$work/A"
rm -rf "$root/sw/$removed"
mktree "$root" "cudnn:9.6.0:12@sw/$added"
gen b >"$work/b.log" 2>&1 || { cat "$work/b.log" >&2; fail "generate B failed"; }
mv "$out" "$work/B"
manifest "$work/A" >"$work/A.sums"
manifest "$work/B" >"$work/B.sums"
nA=$(wc -l <"$work/A.sums") nB=$(wc -l <"$work/B.sums")
[ "$nA" -gt 100 ] || fail "state A has only $nA files"
grep -q 'SITE_X' "$work/A/Core/cuda/12.9.lua" || fail "the config's SITE_X is not in Core/cuda/12.9.lua"
lua_syntax "$work/A" || fail "state A does not parse"
lua_syntax "$work/B" || fail "state B does not parse"
# Every modulefile must differ between A and B, or a mixed file could pass.
same=$(LC_ALL=C join -j2 <(awk '{print $1, $2}' "$work/A.sums") <(awk '{print $1, $2}' "$work/B.sums") |
        awk '$2 == $3 && $1 !~ /modulerc/ && $1 != ".cudamod-index.json"' | wc -l)
[ "$same" -eq 0 ] || note "note: $same modulefiles are equal in A and B"
note "A: $nA files, B: $nB files"

declare -A sumA sumB
while read -r s p; do sumA[$p]=$s; done <"$work/A.sums"
while read -r s p; do sumB[$p]=$s; done <"$work/B.sums"

rewind() {
        rm -rf "$out"
        cp -a "$work/A" "$out"
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
T=$((best * 13 / 10 + 2))
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
note "a full A -> B run takes $best ms, a --check run $S ms; killing after 0..$T ms (every other kill after $S..$T ms), $kills times"

# check_state: every file A's or B's version, .lua parse, index A's or B's.
# Sets state to A, B or mixed, and tmp to the count of temporary files.
check_state() {
        local s p nA=0 nB=0
        tmp=0
        manifest "$out" >"$work/cur.all"
        grep -v '\.cudamod-tmp\.' "$work/cur.all" >"$work/cur.sums" || true
        while read -r s p; do
                case "$p" in
                .cudamod-tmp.* | */.cudamod-tmp.*)
                        tmp=$((tmp + 1))
                        continue
                        ;;
                esac
                if [ "$s" = OTHER ]; then
                        fail "kill $i: '$p' is not a regular file"
                elif [ "${sumA[$p]:-}" = "$s" ] && [ "${sumB[$p]:-}" = "$s" ]; then
                        :
                elif [ "${sumA[$p]:-}" = "$s" ]; then
                        nA=$((nA + 1))
                elif [ "${sumB[$p]:-}" = "$s" ]; then
                        nB=$((nB + 1))
                else
                        cp -a "$out" "$work/failed-state"
                        fail "kill $i: '$p' is neither A's nor B's version (sha256 $s; kept in $work/failed-state, run with STRESS_KEEP_ON_FAIL=1)"
                fi
        done <"$work/cur.all"
        lua_syntax "$out" || fail "kill $i: a .lua file does not parse"
        if [ -e "$out/.cudamod-index.json" ]; then
                s=$(sha256sum <"$out/.cudamod-index.json" | cut -d' ' -f1)
                [ "$s" = "${sumA[.cudamod-index.json]}" ] || [ "$s" = "${sumB[.cudamod-index.json]}" ] ||
                        fail "kill $i: the index is neither A's nor B's"
        fi
        if cmp -s "$work/cur.sums" "$work/B.sums"; then
                state=B
        elif cmp -s "$work/cur.sums" "$work/A.sums"; then
                state=A
        else
                state=mixed
        fi
}

declare -A outcome
rewind
cp "$work/A.sums" "$work/before.sums"
tmp_seen=0 rewinds=0
for ((i = 1; i <= kills; i++)); do
        if [ $((i % 2)) -eq 0 ]; then
                delay=$((S + RANDOM % (T - S + 1)))
        else
                delay=$((RANDOM % (T + 1)))
        fi
        "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" >/dev/null 2>"$work/kill.err" &
        pid=$!
        sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
        kill -9 "$pid" 2>/dev/null || true
        rc=0
        { wait "$pid"; } 2>/dev/null || rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 137 ]; then
                cat "$work/kill.err" >&2
                fail "kill $i: generate exited $rc before the kill"
        fi
        check_state
        [ "$tmp" -gt 0 ] && tmp_seen=$((tmp_seen + 1))
        if [ $rc -eq 0 ]; then
                [ "$state" = B ] || fail "kill $i: generate finished (exit 0) but OUT is not B"
                what="finished before the kill"
        elif cmp -s "$work/cur.all" "$work/before.sums"; then
                what="killed before writing anything"
        elif [ "$state" = B ]; then
                what="killed after writing everything"
        else
                what="killed mid-run (tree changed, incomplete)"
        fi
        outcome[$what]=$((${outcome[$what]:-0} + 1))
        # Runs get faster or slower with the machine's load: shorten the
        # window when a run finished first, widen it when a late kill found
        # nothing written.
        if [ $rc -eq 0 ]; then
                T=$((T * 4 / 5 + 1))
        elif [ "$what" = "killed before writing anything" ] && [ $delay -ge $S ]; then
                T=$((T * 11 / 10 + 1))
        fi
        [ $S -lt $((T / 2)) ] || S=$((T / 2))
        if [ "$state" = B ] || [ $((RANDOM % 2)) -eq 0 ]; then
                rewind
                rewinds=$((rewinds + 1))
                cp "$work/A.sums" "$work/before.sums"
        else
                cp "$work/cur.all" "$work/before.sums"
        fi
done

note "kill window at the end: 0..$T ms (late kills after $S ms)"
note "outcomes of $kills kills (start state A $rewinds+1 times, else the state the last kill left):"
for k in "${!outcome[@]}"; do printf '  %4d  %s\n' "${outcome[$k]}" "$k"; done | sort -k2
note "kills that left .cudamod-tmp.* files: $tmp_seen"
[ "${outcome["killed mid-run (tree changed, incomplete)"]:-0}" -gt 0 ] ||
        fail "no kill landed mid-run: the runs are too short for this test to mean anything"

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
