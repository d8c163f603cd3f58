#!/usr/bin/env bash
# bench/floor.sh: `cudamod scan` against `find` on the same tree: system
# calls by call, warm wall time, and the parallel walk on a slow filesystem.
#
# A benchmark, not a test (tests/syscalls pins the counts). For each size N
# (default 2000 and 10000) it builds tests/stress/mktree.py synth:N (the
# tree of issue 19: N install prefixes, 42,402 entries at 2,000) and
#   1. counts the system calls of `cudamod scan --json --jobs 1 ROOT` and of
#      `find ROOT` with strace -c -f (deterministic: run once each);
#   2. times them warm with hyperfine (scan at --jobs 1, 2 and the CPUs),
#      then with bench/paired.py: find, scan at the default jobs and at
#      --jobs 1 in interleaved rounds, each round's ratio to find (what a
#      drifting machine leaves comparable);
#   3. with --latency US (default 200; 0: skip): the same on a "slow
#      filesystem": bench/slowfs.so (LD_PRELOAD, built by
#      `ninja -C BUILD slowfs.so`) makes every name lookup and directory
#      read (open, openat, stat, lstat, fstatat, readlink, access,
#      faccessat, getdents64 through syscall(3)) of the calling thread wait
#      US microseconds, for scan at --jobs 1, 2, 4, 8 and for find. find's
#      own lookups (gnulib's fts) are delayed, its readdir's getdents64
#      (inside glibc) are not: the table also gives find with them added.
#      strace's delay injection (-e inject=...:delay_exit=US) delays
#      everything, but its ptrace stops are a serial bottleneck of their
#      own; a FUSE passthrough would be closer to NFS, but this machine has
#      no libfuse or fusermount.
#
# usage: bench/floor.sh [--builddir DIR] [--sizes "2000 10000"] [--runs N]
#                       [--latency US] [--keep]
# Needs python3, hyperfine, strace; the build's cudamod and tests/mkelfstub.
set -euo pipefail

builddir=build sizes="2000 10000" runs=10 latency=200 keep=
while [ $# -gt 0 ]; do
        case $1 in
        --builddir) builddir=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --latency) latency=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "usage: bench/floor.sh [--builddir DIR] [--sizes \"N...\"] [--runs N] [--latency US] [--keep]" >&2; exit 2 ;;
        esac
done
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bench_paths
bench_need "$cudamod" "$builddir/tests/mkelfstub"
slowfs=$builddir/slowfs.so
if [ "$latency" -gt 0 ] && [ ! -f "$slowfs" ]; then
        ninja -C "$builddir" slowfs.so >/dev/null || { echo "bench/floor.sh: cannot build $slowfs" >&2; exit 2; }
fi
for tool in hyperfine strace python3; do
        command -v $tool >/dev/null || { echo "bench/floor.sh: install $tool" >&2; exit 2; }
done
bench_scratch floor
cp "$cudamod" "$work/cudamod"
cudamod=$work/cudamod
jobs_cpu=$(nproc)

for n in $sizes; do
        root=$work/n$n
        echo "== synth:$n"
        MKTREE_STUBS=$work/stubs python3 "$src/tests/stress/mktree.py" "$builddir/tests/mkelfstub" "$root" "synth:$n"
        entries=$(find "$root" | wc -l)
        installs=$("$cudamod" scan --json --jobs 1 "$root" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["installs"]))')
        echo "$entries entries, $installs installs"

        # --- 1. system calls
        strace -f -c -o "$work/scan.$n.count" "$cudamod" scan --json --jobs 1 "$root" >/dev/null
        strace -f -c -o "$work/find.$n.count" find "$root" >/dev/null
        python3 - "$work/scan.$n.count" "$work/find.$n.count" <<'PY'
import sys
def load(f):
    calls = {}
    for line in open(f):
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
            err = int(p[4]) if len(p) == 6 else 0
            calls[p[-1]] = (int(p[3]), err)
        elif p and p[-1] == "total":
            calls["total"] = (int(p[3]), int(p[4]) if len(p) == 6 else 0)
    return calls
s, f = load(sys.argv[1]), load(sys.argv[2])
names = sorted((set(s) | set(f)) - {"total"}, key=lambda k: -(s.get(k, (0, 0))[0] + f.get(k, (0, 0))[0]))
print("| system call | cudamod scan (failing) | find (failing) |")
print("|---|---:|---:|")
for k in names:
    a, b = s.get(k, (0, 0)), f.get(k, (0, 0))
    if a[0] + b[0] < 50:
        continue
    print("| %s | %d (%d) | %d (%d) |" % (k, a[0], a[1], b[0], b[1]))
print("| **total** | **%d** (%d) | **%d** (%d) |" % (s["total"] + f["total"]))
print("scan/find system calls: %.2f" % (s["total"][0] / f["total"][0]))
PY

        # --- 2. warm wall time
        hyperfine -N --warmup 3 --min-runs "$runs" --style basic --export-json "$work/warm.$n.json" \
                --command-name "find" "find $root" \
                --command-name "scan --jobs 1" "$cudamod scan --json --jobs 1 $root" \
                --command-name "scan --jobs 2" "$cudamod scan --json --jobs 2 $root" \
                --command-name "scan --jobs $jobs_cpu" "$cudamod scan --json --jobs $jobs_cpu $root" \
                >/dev/null
        python3 - "$work/warm.$n.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
f = r["find"]["mean"]
print("| warm | mean (ms) | ± | median (ms) | user+sys (ms) | /find (mean) |")
print("|---|---:|---:|---:|---:|---:|")
for k, x in r.items():
    print("| %s | %.1f | %.1f | %.1f | %.1f | %.2fx |" % (k, x["mean"] * 1e3, x["stddev"] * 1e3, x["median"] * 1e3,
                                                     (x["user"] + x["system"]) * 1e3, x["mean"] / f))
PY

        # --- 2b. the same, interleaved: the ratio to find within each round
        python3 "$src/bench/paired.py" --rounds "$((runs * 3))" \
                "find=find $root" \
                "scan=$cudamod scan --json $root" \
                "scan --jobs 1=$cudamod scan --json --jobs 1 $root"

        # --- 3. a slow filesystem
        [ "$latency" -gt 0 ] || { rm -rf "$root"; continue; }
        slow="env SLOWFS_US=$latency LD_PRELOAD=$slowfs"
        hyperfine -N --warmup 1 --min-runs 3 --style basic --export-json "$work/slow.$n.json" \
                --command-name "find" "$slow find $root" \
                --command-name "scan --jobs 1" "$slow $cudamod scan --json --jobs 1 $root" \
                --command-name "scan --jobs 2" "$slow $cudamod scan --json --jobs 2 $root" \
                --command-name "scan --jobs 4" "$slow $cudamod scan --json --jobs 4 $root" \
                --command-name "scan --jobs 8" "$slow $cudamod scan --json --jobs 8 $root" \
                >/dev/null
        python3 - "$work/slow.$n.json" "$latency" "$(awk '$NF == "getdents64" { print $4 }' "$work/find.$n.count")" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
us, getdents = int(sys.argv[2]), int(sys.argv[3] or 0)
one, f = r["scan --jobs 1"]["mean"], r["find"]["mean"]
# find's readdir reads inside glibc, where slowfs.so cannot delay it.
fa = f + getdents * us / 1e6
print("slowfs.so, %d us a lookup; find as measured, and with its %d getdents64 delayed too (%.2f s):" % (us, getdents, fa))
print("| slow | mean (s) | ± | speed-up over --jobs 1 | /find | /find with getdents64 |")
print("|---|---:|---:|---:|---:|---:|")
for k, x in r.items():
    print("| %s | %.2f | %.2f | %s | %.2fx | %.2fx |" % (k, x["mean"], x["stddev"],
          "" if k == "find" else "%.2fx" % (one / x["mean"]), x["mean"] / f, x["mean"] / fa))
PY
        rm -rf "$root"
done
