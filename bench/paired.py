#!/usr/bin/env python3
"""bench/paired.py: warm wall time of commands run in interleaved rounds.

hyperfine runs one command's runs back to back, then the next command's: on
a shared or throttled machine the speed drifts between the blocks, and a
ratio of two blocks' means carries that drift (the same binary measured
0.80x and 0.96x of find in two runs of a minute each). Here each round runs
every command once, in an order rotated from round to round, so that a
drift reaches all of them alike; the figure to read is the median over the
rounds of each command's time divided by the first command's time in the
same round.

usage: bench/paired.py [--rounds N] [--warmup K] NAME=COMMAND...
  The first NAME=COMMAND is the reference (find, say). A COMMAND is split
  at blanks (no shell); its output goes to /dev/null and it must exit 0.
Prints a markdown table: median and min wall time (ms) of each command,
and the median and quartiles of its per-round ratio to the reference.
"""
import argparse
import statistics
import subprocess
import sys
import time


def run_once(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("bench/paired.py: %s exited %d" % (" ".join(argv), r.returncode))
    return dt


def quartiles(xs):
    if len(xs) < 4:
        return min(xs), max(xs)
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description="interleaved warm timing")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    cmds = []
    for c in a.commands:
        name, sep, line = c.partition("=")
        if not sep or not line.split():
            ap.error("not NAME=COMMAND: %r" % c)
        cmds.append((name, line.split()))
    if len(cmds) < 2 or a.rounds < 1:
        ap.error("give at least two commands and one round")
    for _ in range(a.warmup):
        for _, argv in cmds:
            run_once(argv)
    times = {name: [] for name, _ in cmds}
    ratios = {name: [] for name, _ in cmds}
    for i in range(a.rounds):
        k = i % len(cmds)
        order = cmds[k:] + cmds[:k]
        got = {name: run_once(argv) for name, argv in order}
        for name, _ in cmds:
            times[name].append(got[name])
            ratios[name].append(got[name] / got[cmds[0][0]])
    print("%d rounds, order rotated each round; ratio: to %s in the same round" % (a.rounds, cmds[0][0]))
    print("| command | median (ms) | min (ms) | ratio, median | ratio, quartiles |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in cmds:
        lo, hi = quartiles(ratios[name])
        print("| %s | %.1f | %.1f | %.2fx | %.2f-%.2f |" % (name, statistics.median(times[name]) * 1e3,
                                                             min(times[name]) * 1e3,
                                                             statistics.median(ratios[name]), lo, hi))


if __name__ == "__main__":
    main()
