#!/usr/bin/env bash
# bench/generate.sh: how fast `cudamod generate` is compared with the scan it
# starts with, how it grows with the number of installs, and what the
# generated modulefiles cost real Lmod at `module load` time.
#
# A benchmark, not a test: nothing here is registered with meson test.
#
# What it measures
#   It builds, in a fresh mktemp -d directory, synthetic sites of N install
#   prefixes (default N = 100, 1000 and 5000) with tests/stress/mktree.py:
#   prefixes rotating CUDA toolkit (runfile layout), cuDNN 9 tarball, cuDNN 9
#   tarball, NCCL tarball, NCCL tarball, so 1/5 CUDA, 2/5 cuDNN, 2/5 NCCL, the
#   libraries ELF stubs written by tests/mkelfstub (each distinct stub once,
#   then copied), as bench/scan.sh does. Versions are made distinct so that
#   every install is its own module (no collisions): CUDA 12.20 ... 12.89,
#   13.20 ... (minors < 100; from 5000 installs on, that means CUDA majors up
#   to 26, which do not exist but are valid input), cuDNN 9.B.C and NCCL
#   2.B.C alternating between CUDA 12 and 13 (see synthetic() in mktree.py).
#   The trees are small (no headers or documentation noise as in
#   bench/scan.sh), so the scan part is cheap and the generate/scan ratio is
#   a harsh one.
#
#   It then
#     1. checks that `cudamod generate -o OUT ROOT` writes one modulefile per
#        install that `cudamod scan --json ROOT` finds (plus the .modulerc
#        files), with no warning about installs sharing a module;
#     2. times with hyperfine (warm cache, stdout to /dev/null), for each N:
#          cudamod scan ROOT                  (the table)
#          cudamod scan --json ROOT
#          cudamod generate -o OUT ROOT       fresh: OUT removed before each
#                                             run (--prepare, not timed)
#          cudamod generate -o OUT ROOT       re-run on an up-to-date tree
#          cudamod generate --check -o OUT ROOT
#        and prints the table of means and the generate/scan ratios (goal:
#        generate within 2x of the scan alone, at 1000 installs);
#     2b. counts the system calls (strace -c -f) of find, the scan, generate
#        into an empty directory and into an up-to-date one, and prints
#        `generate -v`'s split of its time (scan, plan, render, write);
#     3. real Lmod: the demo installs (CUDA 11.8 and 12.9, cuDNN 8.9.7 and
#        9.7.1, NCCL 2.21.5), generated as a hierarchical Lua tree, against
#        a minimal hand-written Lua tree (written below, in this script)
#        making the same setenv/prepend_path/append_path calls and the same
#        MODULEPATH extension, without whatis/help/family/add_property and
#        without .modulerc files. Checks that `module load cuda cudnn nccl`
#        gives the same environment from both (Lmod's bookkeeping variables
#        and MODULEPATH aside), then times with hyperfine
#          baseline   bash -c 'source LMOD_INIT'
#          generated  bash -c 'source LMOD_INIT; module use GEN/Core; module load cuda cudnn nccl'
#          minimal    bash -c 'source LMOD_INIT; module use MIN/Core; module load cuda cudnn nccl'
#          minimal + .modulerc   the same, with the generated .modulerc.lua
#                     files copied into the minimal tree (what they cost)
#        each in `env -i` with a fresh HOME, and prints generated/minimal
#        both raw and with the baseline subtracted (goal: <= 1.05); then the
#        same four commands again interleaved (10 x --runs rounds, random
#        order in each round, medians), which a drifting machine load
#        cannot bias the way it biases hyperfine's one-command-after-another.
#
# How to run it
#   meson setup build -Dtests=true && ninja -C build   # cudamod, tests/mkelfstub
#   bench/generate.sh [--builddir DIR] [--sizes "100 1000 5000"] [--runs N] [--keep]
#     --builddir DIR   meson build directory (default: build)
#     --sizes LIST     install counts (default: "100 1000 5000")
#     --runs N         hyperfine --min-runs (default: 10; the largest size
#                      uses half, at least 3)
#     --no-lmod        leave out part 3
#     --keep           keep the temporary trees and print where they are
#   Needs bash, python3, hyperfine (apt-get install hyperfine), and for part
#   3 Lmod (apt-get install lmod; LMOD_INIT names its init/bash when it is
#   not /usr/share/lmod/lmod/init/bash). Exit status: 0 done, 1 a check
#   failed, 2 usage or missing tools.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
        echo "usage: bench/generate.sh [--builddir DIR] [--sizes \"N...\"] [--runs N] [--no-lmod] [--keep]"
}

builddir=build
sizes="100 1000 5000"
runs=10
lmod=1
keep=0
while [ $# -gt 0 ]; do
        case "$1" in
        --builddir) [ $# -ge 2 ] || { usage >&2; exit 2; }; builddir=$2; shift 2 ;;
        --builddir=*) builddir=${1#*=}; shift ;;
        --sizes) [ $# -ge 2 ] || { usage >&2; exit 2; }; sizes=$2; shift 2 ;;
        --sizes=*) sizes=${1#*=}; shift ;;
        --runs) [ $# -ge 2 ] || { usage >&2; exit 2; }; runs=$2; shift 2 ;;
        --runs=*) runs=${1#*=}; shift ;;
        --no-lmod) lmod=0; shift ;;
        --keep) keep=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench/generate.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
        esac
done
for n in $sizes $runs; do
        case "$n" in
        '' | *[!0-9]* | 0) echo "bench/generate.sh: '$n' is not a positive number" >&2; exit 2 ;;
        esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
cudamod=$builddir/src/cudamod
mkelfstub=$builddir/tests/mkelfstub
for exe in "$cudamod" "$mkelfstub"; do
        if [ ! -x "$exe" ]; then
                echo "bench/generate.sh: '$exe' is missing: build first," >&2
                echo "  meson setup $builddir -Dtests=true && ninja -C $builddir" >&2
                exit 2
        fi
done
for tool in hyperfine python3; do
        command -v $tool >/dev/null 2>&1 || { echo "bench/generate.sh: install $tool" >&2; exit 2; }
done
lmod_init=${LMOD_INIT:-/usr/share/lmod/lmod/init/bash}
if [ "$lmod" = 1 ] && [ ! -r "$lmod_init" ]; then
        echo "bench/generate.sh: no Lmod init at $lmod_init (apt-get install lmod, or set LMOD_INIT, or --no-lmod)" >&2
        exit 2
fi

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/cudamod-bench-generate-XXXXXX")")
cleanup() {
        if [ "$keep" = 1 ]; then
                echo "kept: $work"
        else
                rm -rf -- "$work"
        fi
}
trap cleanup EXIT
mkdir -p "$work/bin"
# Run copies: a rebuild during the run must not change what is measured.
cp "$cudamod" "$work/bin/cudamod"
cp "$mkelfstub" "$work/bin/mkelfstub"
cudamod=$work/bin/cudamod
mkelfstub=$work/bin/mkelfstub
mktree() {
        MKTREE_STUBS=$work/stubs python3 "$src/tests/stress/mktree.py" "$mkelfstub" "$@"
}
largest=0
for n in $sizes; do [ "$n" -gt "$largest" ] && largest=$n; done

# --- 1. trees and correctness ------------------------------------------------
status=0
for n in $sizes; do
        root=$work/n$n/root
        t0=$(date +%s%N)
        mktree "$root" "synth:$n:site"
        t1=$(date +%s%N)
        "$cudamod" scan --json "$root" >"$work/n$n/scan.json"
        "$cudamod" generate -o "$work/n$n/check-out" "$root" >"$work/n$n/gen.out" 2>"$work/n$n/gen.err"
        python3 - "$n" "$work/n$n" "$(( (t1 - t0) / 1000000 ))" <<'PY' || status=1
import json, os, sys
n, d, ms = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
installs = json.load(open(d + "/scan.json"))["installs"]
mods = rcs = 0
for dp, dn, fn in os.walk(d + "/check-out"):
    for f in fn:
        if f.endswith(".lua"):
            if f.startswith(".modulerc"):
                rcs += 1
            else:
                mods += 1
err = open(d + "/gen.err").read()
shared = err.count("would share module")
problems = sum(1 for i in installs if i["problems"])
print("%5d prefixes (built in %.1f s): scan finds %d installs (%d with problems); generate writes %d modulefiles + %d .modulerc"
      % (n, ms / 1000, len(installs), problems, mods, rcs) + ("; %d shared-module warnings" % shared if shared else ""))
if len(installs) != n or mods != n or shared:
    print("  FAIL: expected %d installs and %d modulefiles, no shared modules" % (n, n))
    sys.exit(1)
PY
        rm -rf "$work/n$n/check-out"
done
[ $status -eq 0 ] || { echo "bench/generate.sh: a correctness check failed" >&2; exit 1; }

# --- 2. timing -----------------------------------------------------------------
echo
echo "== timing (warm cache): hyperfine --warmup 2 --min-runs $runs (largest size: fewer), stdout to /dev/null"
for n in $sizes; do
        root=$work/n$n/root up=$work/n$n/up fresh=$work/n$n/fresh
        r=$runs
        if [ "$n" = "$largest" ] && [ "$largest" -ge 5000 ]; then
                r=$((runs / 2))
                [ $r -ge 3 ] || r=3
        fi
        "$cudamod" generate -o "$up" "$root" >/dev/null 2>&1
        echo "-- $n installs"
        hyperfine -N --warmup 2 --min-runs "$r" --style basic --export-json "$work/n$n/a.json" \
                --command-name "scan" "$cudamod --color=never scan $root" \
                --command-name "scan --json" "$cudamod scan --json $root" \
                --command-name "generate (up to date)" "$cudamod generate -o $up $root" \
                --command-name "generate --check" "$cudamod generate --check -o $up $root" |
                grep -E '^(Benchmark|  Time)' || true
        hyperfine -N --warmup 2 --min-runs "$r" --style basic --export-json "$work/n$n/b.json" \
                --prepare "rm -rf $fresh" \
                --command-name "generate (fresh OUT)" "$cudamod generate -o $fresh $root" |
                grep -E '^(Benchmark|  Time)' || true
done
echo
python3 - "$work" $sizes <<'PY'
import json, sys
work, sizes = sys.argv[1], [int(x) for x in sys.argv[2:]]
cols = ["scan", "scan --json", "generate (fresh OUT)", "generate (up to date)", "generate --check"]
res = {}
for n in sizes:
    for f in ("a", "b"):
        for x in json.load(open("%s/n%d/%s.json" % (work, n, f)))["results"]:
            res[(n, x["command"])] = x
def wall(n, c):
    return res[(n, c)]["mean"] * 1e3


def cpu(n, c):
    return (res[(n, c)]["user"] + res[(n, c)]["system"]) * 1e3


for title, f, sd in (("wall-clock time, mean ± stddev (ms)", wall, True),
                     ("CPU time, user + system (ms): steadier on a busy machine; leaves out fsync waits", cpu, False)):
    print(title)
    print("| installs | " + " | ".join(cols) + " | fresh/scan | up-to-date/scan |")
    print("|---:|" + "---:|" * (len(cols) + 2))
    for n in sizes:
        cells = [("%.1f ± %.1f" % (f(n, c), res[(n, c)]["stddev"] * 1e3)) if sd else "%.1f" % f(n, c) for c in cols]
        s = f(n, "scan")
        print("| %d | %s | %.2fx | %.2fx |" % (n, " | ".join(cells), f(n, "generate (fresh OUT)") / s,
                                              f(n, "generate (up to date)") / s))
    print()
print("goal: generate within 2x of scan")
if len(sizes) > 1:
    a, b = sizes[0], sizes[-1]
    for c in ("scan", "generate (fresh OUT)", "generate (up to date)"):
        print("growth %-22s %d -> %d installs: x%.1f wall, x%.1f CPU time for x%.0f installs"
              % (c, a, b, wall(b, c) / wall(a, c), cpu(b, c) / cpu(a, c), b / a))
PY

# --- 2b. system calls and the time split -------------------------------------------
echo
echo "== system calls (strace -c -f, failing in parentheses) and generate -v's time split"
for n in $sizes; do
        root=$work/n$n/root up=$work/n$n/up fresh=$work/n$n/fresh
        rm -rf "$fresh"
        echo "-- $n installs"
        bench_syscalls "find=find $root" "scan --json=$cudamod scan --json $root" \
                "generate (fresh OUT)=$cudamod generate -o $fresh $root" \
                "generate (up to date)=$cudamod generate -o $up $root"
        rm -rf "$fresh"
        printf 'fresh OUT:   '
        "$cudamod" -v generate -o "$fresh" "$root" 2>&1 >/dev/null | sed -n 's/^cudamod: time: //p'
        printf 'up to date:  '
        "$cudamod" -v generate -o "$up" "$root" 2>&1 >/dev/null | sed -n 's/^cudamod: time: //p'
done

# --- 3. real Lmod ----------------------------------------------------------------
if [ "$lmod" = 1 ]; then
        echo
        echo "== Lmod: module load cuda cudnn nccl, generated tree vs a minimal hand-written one"
        root=$work/lmod/root gen=$work/lmod/gen min=$work/lmod/min
        mktree "$root" demo
        "$cudamod" generate -o "$gen" "$root" >/dev/null 2>"$work/lmod/gen.err"
        sw=$root/sw
        c11=$sw/cuda-11.8 c12=$sw/cuda-12.9
        d8=$sw/cudnn-linux-x86_64-8.9.7.29_cuda11-archive d9=$sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive
        nc=$sw/nccl_2.21.5-1+cuda12.4_x86_64
        mkdir -p "$min/Core/cuda" "$min/CUDA/11/cudnn" "$min/CUDA/12/cudnn" "$min/CUDA/12/nccl"
        for v in 11.8 12.9; do
                p=$sw/cuda-$v
                cat >"$min/Core/cuda/$v.lua" <<EOF
setenv("CUDA_HOME", "$p")
setenv("CUDA_PATH", "$p")
setenv("CUDA_ROOT", "$p")
setenv("CUDAToolkit_ROOT", "$p")
setenv("CUDACXX", "$p/bin/nvcc")
prepend_path("PATH", "$p/bin")
prepend_path("LD_LIBRARY_PATH", "$p/nvvm/lib64")
prepend_path("LD_LIBRARY_PATH", "$p/extras/CUPTI/lib64")
prepend_path("LD_LIBRARY_PATH", "$p/targets/x86_64-linux/lib")
prepend_path("LIBRARY_PATH", "$p/nvvm/lib64")
prepend_path("LIBRARY_PATH", "$p/extras/CUPTI/lib64")
prepend_path("LIBRARY_PATH", "$p/targets/x86_64-linux/lib")
prepend_path("CPATH", "$p/extras/CUPTI/include")
prepend_path("CPATH", "$p/targets/x86_64-linux/include")
prepend_path("CMAKE_PREFIX_PATH", "$p")
append_path("LIBRARY_PATH", "$p/targets/x86_64-linux/lib/stubs")
prepend_path("MODULEPATH", "$min/CUDA/${v%%.*}")
EOF
        done
        for pair in "11 8.9.7 $d8" "12 9.7.1 $d9"; do
                set -- $pair
                cat >"$min/CUDA/$1/cudnn/$2.lua" <<EOF
setenv("CUDNN_ROOT", "$3")
setenv("CUDNN_HOME", "$3")
setenv("CUDNN_PATH", "$3")
setenv("CUDNN_INCLUDE_DIR", "$3/include")
setenv("CUDNN_LIB_DIR", "$3/lib")
prepend_path("LD_LIBRARY_PATH", "$3/lib")
prepend_path("LIBRARY_PATH", "$3/lib")
prepend_path("CPATH", "$3/include")
prepend_path("CMAKE_PREFIX_PATH", "$3")
EOF
        done
        cat >"$min/CUDA/12/nccl/2.21.5.lua" <<EOF
setenv("NCCL_ROOT", "$nc")
setenv("NCCL_HOME", "$nc")
setenv("NCCL_INCLUDE_DIR", "$nc/include")
setenv("NCCL_LIB_DIR", "$nc/lib")
setenv("USE_SYSTEM_NCCL", "1")
prepend_path("LD_LIBRARY_PATH", "$nc/lib")
prepend_path("LIBRARY_PATH", "$nc/lib")
prepend_path("CPATH", "$nc/include")
prepend_path("CMAKE_PREFIX_PATH", "$nc")
prepend_path("PKG_CONFIG_PATH", "$nc/lib/pkgconfig")
EOF
        # The minimal tree plus the generated .modulerc.lua files: how much
        # of a difference the default markers make.
        cp -a "$min" "$work/lmod/minrc"
        sed -i "s|$min/|$work/lmod/minrc/|" "$work/lmod/minrc/Core/cuda/"*.lua
        (cd "$gen" && find . -name '.modulerc.lua' -exec cp --parents {} "$work/lmod/minrc/" \;)
        mkdir -p "$work/lmod/home"
        clean=(env -i "HOME=$work/lmod/home" "PATH=/usr/bin:/bin" "TERM=dumb" "LMOD_INIT=$lmod_init")
        load='source "$LMOD_INIT" && module use "$TREE/Core" && module load cuda cudnn nccl'
        for t in gen min minrc; do
                "${clean[@]}" "TREE=$work/lmod/$t" bash --norc --noprofile -c "$load && module -t list 2>&1 && env" \
                        >"$work/lmod/$t.env" 2>&1
                grep -E '^(cuda|cudnn|nccl)/' "$work/lmod/$t.env" | tr '\n' ' ' | sed "s/^/$t tree loads: /"
                echo
                grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$work/lmod/$t.env" |
                        grep -vE '^(__LMOD|_ModuleTable|LOADEDMODULES=|_LMFILES_=|MODULEPATH=|LMOD|BASH_FUNC|MODULESHOME=|TREE=|SHLVL=|_=|OLDPWD=|PWD=|ModuleTable)' |
                        LC_ALL=C sort >"$work/lmod/$t.vars"
        done
        for t in min minrc; do
                if ! diff "$work/lmod/gen.vars" "$work/lmod/$t.vars" >"$work/lmod/vars.diff"; then
                        cat "$work/lmod/vars.diff"
                        echo "FAIL: the generated and the $t tree give different environments" >&2
                        exit 1
                fi
        done
        echo "same environment from both trees ($(wc -l <"$work/lmod/gen.vars") variables compared)"
        hyperfine -N --warmup 3 --min-runs $((runs * 3)) --style basic --export-json "$work/lmod/h.json" \
                --command-name "baseline (source init)" \
                "${clean[*]} bash --norc --noprofile -c 'source \"\$LMOD_INIT\"'" \
                --command-name "generated tree" \
                "${clean[*]} TREE=$gen bash --norc --noprofile -c '$load'" \
                --command-name "minimal tree" \
                "${clean[*]} TREE=$min bash --norc --noprofile -c '$load'" \
                --command-name "minimal tree + .modulerc" \
                "${clean[*]} TREE=$work/lmod/minrc bash --norc --noprofile -c '$load'" |
                grep -E '^(Benchmark|  Time)' || true
        python3 - "$work/lmod/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
b, g, m, mr = (r[k]["mean"] * 1e3 for k in ("baseline (source init)", "generated tree", "minimal tree",
                                              "minimal tree + .modulerc"))
sd = {k: r[k]["stddev"] * 1e3 for k in r}
print()
print("| | mean (ms) | stddev | minus baseline |")
print("|---|---:|---:|---:|")
print("| baseline: source init | %.1f | %.1f | |" % (b, sd["baseline (source init)"]))
print("| generated tree: use + load cuda cudnn nccl | %.1f | %.1f | %.1f |" % (g, sd["generated tree"], g - b))
print("| minimal tree: use + load cuda cudnn nccl | %.1f | %.1f | %.1f |" % (m, sd["minimal tree"], m - b))
print("| minimal tree + the generated .modulerc.lua files | %.1f | %.1f | %.1f |" % (mr, sd["minimal tree + .modulerc"], mr - b))
print("generated/minimal: %.3f raw, %.3f with the baseline subtracted (goal: <= 1.05)" % (g / m, (g - b) / (m - b)))
print("(minimal + .modulerc)/minimal: %.3f raw, %.3f with the baseline subtracted" % (mr / m, (mr - b) / (m - b)))
PY
        # hyperfine runs all of one command, then all of the next: a change
        # of the machine's load in between shows as a difference. The same
        # commands interleaved, in a random order each round, medians:
        rounds=$((runs * 10))
        echo
        echo "interleaved: $rounds rounds of the three loads and the baseline, random order, median wall time"
        python3 - "$rounds" "$lmod_init" "$work/lmod/home" "$gen" "$min" "$work/lmod/minrc" "$load" <<'PY'
import random, statistics, subprocess, sys, time
rounds, init, home, gen, mn, mrc, load = int(sys.argv[1]), *sys.argv[2:]
env = {"HOME": home, "PATH": "/usr/bin:/bin", "TERM": "dumb", "LMOD_INIT": init}
variants = {"baseline": (None, 'source "$LMOD_INIT"'), "generated": (gen, load), "minimal": (mn, load),
            "minimal + .modulerc": (mrc, load)}
t = {k: [] for k in variants}
for _ in range(rounds):
    order = list(variants)
    random.shuffle(order)
    for k in order:
        tree, cmd = variants[k]
        e = dict(env, TREE=tree) if tree else env
        t0 = time.perf_counter()
        subprocess.run(["bash", "--norc", "--noprofile", "-c", cmd], env=e, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t[k].append(time.perf_counter() - t0)
med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
for k in variants:
    print("  %-22s median %6.1f ms  (mean %6.1f)" % (k, med[k], statistics.mean(t[k]) * 1e3))
b = med["baseline"]
print("generated/minimal (medians): %.3f raw, %.3f with the baseline subtracted (goal: <= 1.05)"
      % (med["generated"] / med["minimal"], (med["generated"] - b) / (med["minimal"] - b)))
PY
fi

# --- Figures -----------------------------------------------------------------
# bench/generate.sh --builddir build-release --runs 5 (cudamod 0.1.0,
# --buildtype=release), 2 CPUs, /tmp on ext4 (virtio disk), Lmod 8.6.19.
# Every size: scan finds exactly N installs and generate writes N
# modulefiles + 5 .modulerc, no shared-module warning.
#
# wall-clock, mean ± stddev (ms)
# | installs | scan | scan --json | generate (fresh OUT) | generate (up to date) | generate --check | fresh/scan | up-to-date/scan |
# |---:|---:|---:|---:|---:|---:|---:|---:|
# | 100 | 40.3 ± 4.9 | 40.4 ± 6.0 | 64.2 ± 1.9 | 72.9 ± 4.8 | 59.8 ± 9.5 | 1.59x | 1.81x |
# | 1000 | 315.2 ± 6.4 | 322.8 ± 3.4 | 583.2 ± 82.7 | 491.6 ± 11.9 | 499.1 ± 9.5 | 1.85x | 1.56x |
# | 5000 | 1877.9 ± 385.7 | 1913.0 ± 211.2 | 3055.1 ± 237.3 | 2585.0 ± 37.4 | 2493.2 ± 35.8 | 1.63x | 1.38x |
# growth 100 -> 5000 installs (x50): scan x46.6 wall, generate fresh x47.6,
# generate up to date x35.4: linear.
#
# Against the goal (generate within 2x of the scan): met at every size. The
# first version synced each file and then its directory (235 fsyncs for 112
# files) and was 4.2-4.8x the scan; write.c now writes every temporary file,
# makes them durable with one syncfs, renames them, and syncs each directory
# once.
#
# Lmod 8.6.19, `module use DIR/Core; module load cuda cudnn nccl` (demo tree):
# | | mean (ms) | stddev | minus baseline |
# |---|---:|---:|---:|
# | baseline: source init | 6.7 | 0.7 | |
# | generated tree | 125.9 | 4.1 | 119.2 |
# | minimal hand-written tree | 127.1 | 6.0 | 120.4 |
# | minimal tree + the generated .modulerc.lua files | 129.9 | 5.8 | 123.2 |
# generated/minimal: 0.990 raw, 0.990 with the baseline subtracted (goal
# <= 1.05: met); interleaved, 50 rounds, medians 127.9 / 127.8 ms: 1.001.
# (Hyperfine-only runs on a busier machine gave 0.94 to 1.16: noise of that
# size is why the interleaved figure is there.)
