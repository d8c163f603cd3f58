#!/usr/bin/env bash
# bench/bounds.sh: cudamod on inputs far beyond what a site holds, at full
# size: wall time and peak RSS of each (doc/HACKING.md "Limits").
#
# A benchmark, not a test: nothing here is registered with meson test
# (tests/bounds/bounds.sh checks the same behaviour at a cheaper size).
#
# What it builds, in a fresh mktemp -d directory (about 1.1 million inodes,
# a few hundred MB of disk, most of it the 10 MiB and 100 MiB files; the
# 1 GiB version.json and a 100 MiB config are sparse):
#   deep/      100,000 directories: 2,000 chains 50 deep
#   wide/      the demo tree (mkfixture demo) whose cuda-12.9 library
#              directory holds 1,000,000 more entries (hard links to a few
#              empty files), and wide-root/big, a symlink to it
#   vj/        the demo tree with a 1 GiB version.json (sparse) in cuda-12.9
#   big.yaml   a 100 MiB site config (real YAML), sparse.yaml a sparse one
#   mp/        a 10 MiB modulefile, and a 44-byte one that loops over setenv
#   mf/        the demo's generated tree with a 10 MiB file at Core/cuda/12.9.lua
# and runs each case once under /usr/bin/time -v, printing a markdown table:
# case, result (exit status and the first line of stderr), wall time, peak
# RSS. Measured numbers are in doc/HACKING.md "Limits".
#
# How to run it
#   meson setup build-release --buildtype=release && ninja -C build-release
#   bench/bounds.sh [--builddir DIR] [--timeout S] [--keep]
#     --builddir DIR   meson build directory, with the tests built (default:
#                      build; mkfixture comes from DIR/tests)
#     --timeout S      end a case after S seconds (default 300; a build
#                      without the limits takes hours on some)
#     --keep           keep the scratch directory and print where it is
#   Needs bash, python3 and /usr/bin/time (apt-get install time). Building
#   the trees takes about a minute; the runs a few seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

builddir=build keep= limit=300
while [ $# -gt 0 ]; do
        case $1 in
        --builddir) builddir=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        *) echo "usage: bench/bounds.sh [--builddir DIR] [--timeout S] [--keep]" >&2; exit 2 ;;
        esac
done
bench_paths
mkfixture=$builddir/tests/mkfixture
bench_need "$cudamod" "$mkfixture"
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 2; }

bench_scratch bounds
cd "$work"

echo "building the trees in $work ..." >&2
"$mkfixture" demo demo >/dev/null
python3 - <<'EOF'
import os
# 100,000 directories: 2,000 chains 50 deep.
for c in range(2000):
    os.makedirs(os.path.join("deep", "c%04d" % c, *["d%02d" % i for i in range(49)]))
EOF
cp -a demo wide
lib=wide/sw/cuda-12.9/targets/x86_64-linux/lib
python3 - "$lib" <<'EOF'
import os, sys
# 1,000,000 entries: hard links, a new file every 60,000 (ext4 allows 65,000).
d = sys.argv[1]
src = None
for i in range(1000000):
    p = os.path.join(d, "f%07d" % i)
    if i % 60000 == 0:
        open(p, "w").close()
        src = p
    else:
        os.link(src, p)
EOF
mkdir wide-root
ln -s "../$lib" wide-root/big
cp -a demo vj
truncate -s 1G vj/sw/cuda-12.9/version.json
python3 - <<'EOF'
# A real 100 MiB YAML config: 1.4 million variables.
with open("big.yaml", "w") as f:
    f.write("env:\n  cuda:\n    setenv:\n")
    i = 0
    while f.tell() < 100 << 20:
        f.write('      VAR_%d: "%s"\n' % (i, "x" * 60))
        i += 1
EOF
truncate -s 100M sparse.yaml
mkdir -p mp/big mp/loop
python3 - <<'EOF'
with open("mp/big/1.0.lua", "w") as f:
    i = 0
    while f.tell() < 10 << 20:
        f.write('setenv("VAR_%d", "%s")\n' % (i, "x" * 60))
        i += 1
EOF
echo 'for i = 1, 1e6 do setenv("V" .. i, "x") end' >mp/loop/1.0.lua
"$cudamod" generate -o mf demo >/dev/null
cp -a mf mfv
cp mp/big/1.0.lua mfv/Core/cuda/12.9.lua
cp mp/big/1.0.lua mf/Core/cuda/12.9.lua
"$mkfixture" doctor dx >/dev/null
"$cudamod" generate -o dmf dx/sw >/dev/null
mkdir -p dmf/Core/big
cp mp/big/1.0.lua dmf/Core/big/1.0.lua
printf 'max_depth: 64\n' >deep.yaml

echo "| case | result | wall | peak RSS |"
echo "|---|---|---|---|"
# row CASE CMD...: run CMD once under /usr/bin/time -v and print its row.
row() {
        local name=$1 rc=0 wall rss msg
        shift
        /usr/bin/time -v -o time.txt timeout "$limit" "$@" >out.txt 2>err.txt || rc=$?
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt)
        rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
        msg=$(grep -m1 -v '^Command exited' err.txt | sed "s|$work/||g" | cut -c1-110 || true)
        [ $rc != 124 ] || msg="still running after $limit s, ended"

        echo "| $name | exit $rc${msg:+: $msg} | $wall | $((rss / 1024)) MiB ($rss KiB) |"
}
row "scan, 100,000 dirs 50 deep (default max_depth 8)" "$cudamod" scan deep
row "scan, 100,000 dirs 50 deep (max_depth 64)" "$cudamod" --config deep.yaml scan deep
row "generate, 100,000 dirs 50 deep (max_depth 64)" "$cudamod" --config deep.yaml generate -o deep-out deep
row "scan, a directory of 1,000,000 entries" "$cudamod" scan wide-root
row "scan, a CUDA lib/ of 1,000,000 entries" "$cudamod" scan wide
row "doctor, a directory of 1,000,000 entries" "$cudamod" doctor "$lib"
row "scan, a 1 GiB version.json" "$cudamod" scan vj
row "generate, a 1 GiB version.json" "$cudamod" generate -o vj-out vj
row "config, a 100 MiB YAML" "$cudamod" --config big.yaml config
row "config, a 100 MiB sparse YAML" "$cudamod" --config sparse.yaml config
row "generate, a 100 MiB YAML" "$cudamod" --config big.yaml generate -o never demo
row "show, a 10 MiB modulefile" "$cudamod" show --modulepath mp big
row "show, 44 bytes calling setenv 1e6 times" "$cudamod" show --modulepath mp loop
row "validate, a 10 MiB modulefile in the tree" "$cudamod" validate --no-compile --modulepath mfv/Core
row "doctor --modulepath, a 10 MiB modulefile in it" "$cudamod" doctor --modulepath dmf/Core dx/site-packages/torch
row "generate, a 10 MiB file at a modulefile's path" "$cudamod" generate -o mf demo
row "generate --dry-run, the same" "$cudamod" generate --dry-run -o mf demo
