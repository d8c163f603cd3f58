#!/usr/bin/env bash
# bench/validate.sh: what `cudamod validate` costs over the probe it runs,
# and how validating many modules scales with -j.
#
# A benchmark, not a test: nothing here is registered with meson test.
#
# What it measures
#   The site: the real CUDA toolkit at $CUDA (default /usr/local/cuda-13.0,
#   which carries libcudart, libcudnn and libnccl); without one, the demo
#   fixture (tests/mkfixture demo) with the fake libcudart.so.12 of
#   tests/fakecuda copied over its stub, so the probe has real code to load
#   (its run check then fails on the version, which costs the same).
#   `cudamod generate` writes its modules (hierarchical, Lua).
#     1. One module, the cuda one, compile check off:
#          validate   cudamod validate --no-compile --modulepath MP cuda
#          probe      the probe alone, started as validate starts it:
#                     env -i <the module's environment> cudamod-probe
#                     --cuda-major N --no-cudnn --no-nccl
#        The environment comes from `cudamod show --json`. Goal: validate
#        within 1.5x of the probe alone.
#     2. 100 modules: copies of that module under 100 names (cuda001/V ...,
#        the MODULEPATH extension removed, so 100 units), validated with
#        -j 1, 2 and 4 (--no-compile), and the speed-up over -j 1.
#   Times are hyperfine means (warm cache, output to /dev/null).
#
# How to run it
#   meson setup build && ninja -C build
#   bench/validate.sh [--builddir DIR] [--runs N] [--keep]
#
# Results (2026-12-01, release build, a 2-vCPU VM; /usr/local/cuda-13.0, no
# GPU, so the device check ends at "no driver"):
#   validate one module 22.9 ms ± 1.7, the probe alone 15.8 ms ± 1.1: 1.46x
#   (before the work on it: 54.9 ms, 3.84x; what went: a fork per module and
#   per program started, now posix_spawn and workers; every loader candidate
#   opened by libelf, now its 20-byte identification, once; the whole 600 KB
#   cuda_runtime_api.h read twice in 8 KB reads, now its head).
#   100 modules: -j 1 1.13 s (11.3 ms/module), -j 2 1.22 s, -j 4 1.37 s: no
#   speed-up on this VM, and not for want of parallel work: two independent
#   `cudamod validate -j 1` runs over 50 modules each take 1.25 s side by
#   side against 1.17 s one after the other (system time doubles): page
#   faults and exec, which this work is made of, do not scale on this
#   hypervisor. Measure on a real node before tuning -j.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_setup validate 10 "$@"
probe=$builddir/src/probe/cudamod-probe
bench_need "$cudamod" "$probe"

CUDA=${CUDA:-/usr/local/cuda-13.0}
if [ -e "$CUDA/lib/libcudart.so.13" ] || [ -e "$CUDA/lib64/libcudart.so.13" ] ||
   compgen -G "$CUDA/lib*/libcudart.so.1[0-9]" >/dev/null; then
        root=$CUDA
        echo "site: the real toolkit $CUDA"
else
        root=$work/site
        "$builddir/tests/mkfixture" demo "$root" >/dev/null
        rt=$(find "$root" -name 'libcudart.so.12.*' -type f | head -n 1)
        cp "$builddir/tests/fakecuda/libfake-cudart12.so" "$rt"
        root=$root/sw
        echo "site: the demo fixture with the fake libcudart.so.12 (no $CUDA)"
fi
env -i PATH=/usr/bin:/bin HOME="$work" "$cudamod" generate -o "$work/mf" "$root" >/dev/null
mp=$work/mf/Core
cuda_file=$(find "$mp/cuda" -name '*.lua' ! -name '.*' | sort -V | tail -n 1)
cuda_mod=cuda/$(basename "$cuda_file" .lua)
echo "module: $cuda_mod ($cuda_file)"

# The module's environment, as validate gives it to the probe: PATH/HOME
# basics, then what the module sets.
bench_module_env "$mp" "$cuda_mod" >"$work/module.env"
major=$(sed -n 's/^CUDA_HOME=.*cuda-\([0-9]*\).*/\1/p' "$work/module.env")
major=${major:-$(basename "$cuda_file" .lua | cut -d. -f1)}
mapfile -t menv <"$work/module.env"
printf '%q ' env -i "${menv[@]}" "$probe" --cuda-major "$major" --no-cudnn --no-nccl >"$work/probe.sh"
echo >>"$work/probe.sh"

echo
echo "== 1. one module: validate against the probe alone =="
env -i PATH=/usr/bin:/bin HOME="$work" "$cudamod" validate --no-compile --modulepath "$mp" "$cuda_mod" |
        tail -n 1
hyperfine -N -i --warmup 3 --min-runs "$runs" --export-json "$work/one.json" \
        -n validate "env -i PATH=/usr/bin:/bin HOME=$work $cudamod validate --no-compile --modulepath $mp $cuda_mod" \
        -n probe "bash $work/probe.sh" >/dev/null
python3 - "$work/one.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
v, p = r["validate"], r["probe"]
print(f"validate one module  {v['mean']*1000:8.1f} ms ± {v['stddev']*1000:.1f}")
print(f"probe alone          {p['mean']*1000:8.1f} ms ± {p['stddev']*1000:.1f}")
print(f"ratio                {v['mean']/p['mean']:8.2f}x   (goal: <= 1.5x)")
EOF

echo
echo "== 2. 100 modules, -j 1, 2, 4 =="
many=$work/many
for i in $(seq -w 1 100); do
        mkdir -p "$many/cuda$i"
        grep -v '"MODULEPATH"' "$cuda_file" | sed 's/^family("cuda")$//' >"$many/cuda$i/$(basename "$cuda_file")"
done
n=$(env -i PATH=/usr/bin:/bin HOME="$work" "$cudamod" validate --no-compile --modulepath "$many" | tail -n 1)
echo "$n"
hyperfine -N -i --warmup 1 --min-runs 3 --export-json "$work/many.json" \
        -n j1 "env -i PATH=/usr/bin:/bin HOME=$work $cudamod validate --no-compile -j 1 --modulepath $many" \
        -n j2 "env -i PATH=/usr/bin:/bin HOME=$work $cudamod validate --no-compile -j 2 --modulepath $many" \
        -n j4 "env -i PATH=/usr/bin:/bin HOME=$work $cudamod validate --no-compile -j 4 --modulepath $many" \
        >/dev/null || true
python3 - "$work/many.json" "$(nproc)" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["j1"]["mean"]
print(f"({sys.argv[2]} CPUs)")
for k in ("j1", "j2", "j4"):
    m = r[k]["mean"]
    print(f"-j {k[1]}  {m:7.2f} s ± {r[k]['stddev']:.2f}   {m/100*1000:6.1f} ms/module   speed-up {base/m:4.2f}x")
EOF
