#!/bin/bash
# syscalls.sh: what a scan asks the filesystem, and a parallel scan's output
# (README "Performance", bench/README "Scan at the floor").
#
# 1. Under strace -f, a scan of a synthetic site (tests/stress/mktree.py
#    synth:N and the demo tree) and of every layout fixture makes
#      - no openat in a directory the walk read that fails (a probe for a
#        file that is not there: the listing says so),
#      - no fcntl of a DIR stream (F_GETFL, F_SETFD, F_DUPFD: the walk reads
#        with getdents64 itself),
#      - at most as many readlink calls of paths below the root as there are
#        symlinks to directories there (a symlink followed is resolved with
#        one readlink of /proc/self/fd, not one of each of its components),
#      - no file opened twice (the detectors share one read of a library),
#      - at most as many system calls in all as `find ROOT` on the same tree.
#    The counts are deterministic: nothing here is timed.
# 2. scan --json and generate with --jobs 1, 2 and 8 give byte-identical
#    output on the synthetic site and on the layout fixtures, each run with
#    walkdelay.so (an LD_PRELOAD library: a random delay of every directory
#    opened and read, a new seed each run), so that the threads finish their
#    subtrees in a different order each time.
# 3. A parallel scan's memory grows with what it finds, not with the
#    subtrees it hands to its threads: on synth:300, the peak RSS of
#    --jobs 2 is within 1.5 MiB of --jobs 1's (each subtree handed on once
#    took an 8 KiB index of its own: 2.7 MiB more here, 16 MiB at 2,000
#    prefixes). Skipped without PEAKRSS, under ASan and under valgrind
#    (their own memory would count).
#
# Needs CUDAMOD_BIN, MKELFSTUB, MKFIXTURE and WALKDELAY (meson sets them);
# strace for part 1 (skipped without it, and under valgrind).
. "$(dirname "$0")/../valgrind.sh"
# shellcheck source=../stress/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../stress/lib.sh"

[ -n "${MKFIXTURE:-}" ] && [ -x "$MKFIXTURE" ] || skip "MKFIXTURE is not set"
[ -n "${WALKDELAY:-}" ] && [ -f "$WALKDELAY" ] || skip "WALKDELAY is not set"

site=$work/site
mktree "$site" synth:60 demo
# A symlink to a directory the walk follows, and one to an install.
ln -s synth "$site/current"
ln -s sw/cuda-12.9 "$site/cuda"
# Warnings in many subtrees (a symlink loop each): their order is the
# walk's, which a parallel walk must keep.
for i in $(seq -w 1 24); do
        mkdir -p "$site/noise/d$i/sub"
        ln -s loop "$site/noise/d$i/sub/loop"
done

fixtures=$work/fixtures
mkdir -p "$fixtures"
while read -r name; do
        case $name in '' | *' '*) continue ;; esac
        "$MKFIXTURE" "$name" "$fixtures/$name" >/dev/null 2>&1 || fail "mkfixture $name failed"
done < <("$MKFIXTURE" --list | awk '{ print $1 }')
[ -n "$(ls "$fixtures")" ] || fail "no layout fixture built"

# --- 1. system calls -------------------------------------------------------------
# count FILE CALL: the calls of that name in strace -c -f output FILE.
count() {
        awk -v c="$2" '$NF == c { print $4; found = 1 } END { if (!found) print 0 }' "$1"
}
errors() {
        awk -v c="$2" '$NF == c { print (NF == 6 ? $5 : 0); found = 1 } END { if (!found) print 0 }' "$1"
}
total() {
        awk '$NF == "total" { print $4 }' "$1"
}

if [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        note "under valgrind: the system call counts are not checked"
elif ! command -v strace >/dev/null 2>&1; then
        note "no strace: the system call counts are not checked"
else
        for root in "$site" "$fixtures"; do
                label=$(basename "$root")
                # LeakSanitizer refuses to run under ptrace.
                ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                        strace -f -qq -o "$work/$label.trace" -e trace=openat,open,close,fcntl,readlink \
                        "$cudamod" scan --json --jobs 1 "$root" >"$work/$label.json" 2>"$work/$label.err" ||
                        fail "scan of $label under strace: $(tail -n 5 "$work/$label.err")"
                # A name looked up in a directory the walk read: the listing
                # says whether it is there, so no such open fails. (A file
                # deeper down, in a directory no one listed, is probed: a
                # listing would cost more calls than the probe.)
                python3 - "$work/$label.trace" "$root" >"$work/$label.probes" <<'PY'
import re, sys
walked, opens, probes = set(), 0, []
pat = re.compile(r'^(\d+) +openat\((\d+|AT_FDCWD), "([^"]*)", ([^)]*)\) = (-?\d+)')
for line in open(sys.argv[1]):
    m = pat.match(line)
    if m:
        pid, dirfd, name, flags, r = m.groups()
        if dirfd != "AT_FDCWD" and (pid, dirfd) in walked:
            opens += 1
            if int(r) < 0 and "/" not in name:
                probes.append(line.strip())
        # The walk's: a child opened without following a symlink, a root
        # or a followed symlink opened by its path, non-blocking.
        if int(r) >= 0 and "O_DIRECTORY" in flags and (
                "O_NOFOLLOW" in flags or (dirfd == "AT_FDCWD" and "O_NONBLOCK" in flags and name.startswith(sys.argv[2]))):
            walked.add((pid, r))
        continue
    m = re.match(r'^(\d+) +close\((\d+)\)', line)
    if m:
        walked.discard(m.groups())
print(opens)
for p in probes:
    print(p)
PY
                opens=$(head -n 1 "$work/$label.probes")
                failing=$(($(wc -l <"$work/$label.probes") - 1))
                [ "$opens" -gt 50 ] || fail "$label: $opens openat calls in walked directories: the check is not looking"
                [ "$failing" -eq 0 ] ||
                        fail "$label: $failing failing openat calls for names the listing had:$(sed -n 2,6p "$work/$label.probes")"
                grep -E "openat\([0-9]+, " "$work/$label.trace" | grep -c '= -1 ' >"$work/$label.allfailing" || true
                # Each file is read once a scan: the detectors asking one
                # library for its soname, its DT_NEEDED and its version
                # strings share one read of it (elf.c's memo), and a
                # visit's dist-info directory is read once for all its
                # detectors. strace -y names the directory of each
                # descriptor. Left: a wheel's METADATA is read once by each
                # package directory of site-packages/nvidia visited.
                ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                        strace -f -qq -y -o "$work/$label.ytrace" -e trace=openat \
                        "$cudamod" scan --json --jobs 1 "$root" >/dev/null 2>&1 ||
                        fail "scan of $label under strace -y failed"
                grep -E 'O_PATH|O_NOFOLLOW' "$work/$label.ytrace" | grep -v O_DIRECTORY |
                        sed -E 's/^[0-9]+ +openat\(([^<,]*<([^>]*)>|AT_FDCWD), "([^"]*)".*/\2|\3/' |
                        grep -v '\.dist-info/METADATA$' | sort | uniq -c | awk '$1 > 1' >"$work/$label.twice"
                filereads=$(grep -E 'O_PATH|O_NOFOLLOW' "$work/$label.ytrace" | grep -vc O_DIRECTORY || true)
                [ "$filereads" -gt 20 ] || fail "$label: $filereads file opens: the once-check is not looking"
                [ ! -s "$work/$label.twice" ] ||
                        fail "$label: files opened more than once:$(head -n 5 "$work/$label.twice")"
                dirfcntl=$(grep -cE 'fcntl\([0-9]+, (F_GETFL|F_SETFD|F_DUPFD)' "$work/$label.trace" || true)
                [ "$dirfcntl" -eq 0 ] ||
                        fail "$label: $dirfcntl fcntl calls of a DIR stream:$(grep -E 'fcntl\([0-9]+, (F_GETFL|F_SETFD|F_DUPFD)' "$work/$label.trace" | head -n 3)"
                links=$( (find "$root" -type l -xtype d 2>/dev/null || true) | wc -l)
                readlinks=$(grep -c "readlink(\"$root" "$work/$label.trace" || true)
                [ "$readlinks" -le "$links" ] ||
                        fail "$label: $readlinks readlink calls for $links symlinks to directories"

                ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                        strace -f -c -o "$work/$label.count" "$cudamod" scan --json --jobs 1 "$root" \
                        >/dev/null 2>&1 || fail "scan of $label under strace -c failed"
                strace -f -c -o "$work/$label.find" find "$root" >/dev/null 2>&1 ||
                        fail "find $label under strace -c failed"
                ours=$(total "$work/$label.count") theirs=$(total "$work/$label.find")
                # The process's own start (the dynamic loader, the config,
                # ASan's runtime when built with it) is no part of the walk.
                base_ours=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                        strace -f -c -o "$work/empty.count" "$cudamod" scan --json --jobs 1 "$work/empty-root" \
                        >/dev/null 2>&1; total "$work/empty.count")
                mkdir -p "$work/empty-root"
                strace -f -c -o "$work/empty.find" find "$work/empty-root" >/dev/null 2>&1
                base_theirs=$(total "$work/empty.find")
                note "$label: $ours system calls ($base_ours at start), find $theirs ($base_theirs at start);" \
                     "readlink $readlinks (symlinks to directories: $links), failing openat $failing in walked directories ($(cat "$work/$label.allfailing") in all)," \
                     "newfstatat $(count "$work/$label.count" newfstatat) ($(errors "$work/$label.count" newfstatat) failing)," \
                     "getdents64 $(count "$work/$label.count" getdents64) (find: $(count "$work/$label.find" getdents64))"
                [ $((ours - base_ours)) -le $((theirs - base_theirs)) ] ||
                        fail "$label: the scan makes $((ours - base_ours)) system calls beyond its start, find $((theirs - base_theirs))"
        done
fi

# --- 2. the same output with any number of threads --------------------------------
asan=$(ldd "$CUDAMOD_BIN" 2>/dev/null | awk '/libasan/ { print $3; exit }') || asan=""
preload=$WALKDELAY
[ -z "$asan" ] || preload="$asan $WALKDELAY"
rounds="2 8 2 8"
if [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        # Under valgrind: each run is slow enough to vary, and the preload
        # would go to valgrind's launcher.
        preload= rounds="2 8"
fi
for root in "$site" "$fixtures"; do
        label=$(basename "$root")
        "$cudamod" scan --json --jobs 1 "$root" >"$work/$label.serial.json" 2>"$work/$label.serial.err" ||
                fail "scan --jobs 1 $label: $(tail -n 3 "$work/$label.serial.err")"
        # The output directory's path is in the modules: each run writes to
        # the same one.
        rm -rf "$work/out"
        "$cudamod" generate --jobs 1 -o "$work/out" "$root" >/dev/null 2>&1 ||
                fail "generate --jobs 1 $label failed"
        mv "$work/out" "$work/$label.serial.out"
        n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["installs"]))' "$work/$label.serial.json")
        [ "$n" -gt 10 ] || fail "$label: only $n installs found: the comparison would say little"
        for jobs in $rounds; do
                seed=$RANDOM$RANDOM
                LD_PRELOAD=$preload WALKDELAY_SEED=$seed WALKDELAY_MAX_US=1000 \
                        "$cudamod" scan --json --jobs "$jobs" "$root" >"$work/$label.par.json" 2>"$work/$label.par.err" ||
                        fail "scan --jobs $jobs $label (seed $seed): $(tail -n 3 "$work/$label.par.err")"
                cmp -s "$work/$label.serial.json" "$work/$label.par.json" ||
                        fail "scan --jobs $jobs of $label (walkdelay seed $seed) differs from --jobs 1:$(diff "$work/$label.serial.json" "$work/$label.par.json" | head -n 10)"
                cmp -s "$work/$label.serial.err" "$work/$label.par.err" ||
                        fail "scan --jobs $jobs of $label (seed $seed): other warnings:$(diff "$work/$label.serial.err" "$work/$label.par.err" | head -n 10)"
                rm -rf "$work/out"
                LD_PRELOAD=$preload WALKDELAY_SEED=$seed WALKDELAY_MAX_US=1000 \
                        "$cudamod" generate --jobs "$jobs" -o "$work/out" "$root" >/dev/null 2>&1 ||
                        fail "generate --jobs $jobs $label (seed $seed) failed"
                diff -r "$work/$label.serial.out" "$work/out" >"$work/gen.diff" ||
                        fail "generate --jobs $jobs of $label (seed $seed) differs from --jobs 1:$(head -n 10 "$work/gen.diff")"
        done
        note "$label: $n installs, the same JSON, warnings and modules with --jobs 1, 2 and 8"
done

# --- 3. a parallel scan's memory ---------------------------------------------------
if [ -z "${PEAKRSS:-}" ] || [ -n "$asan" ] || [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        note "peak RSS not compared (no PEAKRSS, ASan or valgrind)"
else
        mktree "$work/big" synth:300
        for jobs in 1 2; do
                "$PEAKRSS" "$work/rss.$jobs" "$cudamod" scan --json --jobs "$jobs" "$work/big" >/dev/null 2>&1 ||
                        fail "scan --jobs $jobs of synth:300 failed"
        done
        rss1=$(cat "$work/rss.1") rss2=$(cat "$work/rss.2")
        [ "$rss1" -gt 0 ] || fail "peak RSS of --jobs 1 reads $rss1 KiB"
        [ "$rss2" -le $((rss1 + 1536)) ] ||
                fail "synth:300: scan --jobs 2 peaks at $rss2 KiB, --jobs 1 at $rss1 KiB: more than 1.5 MiB apart"
        note "synth:300: peak RSS $rss1 KiB with --jobs 1, $rss2 KiB with --jobs 2"
fi
note "ok"
