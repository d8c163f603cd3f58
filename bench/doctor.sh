#!/usr/bin/env bash
# bench/doctor.sh: what `cudamod doctor` costs, against `ldd` over the same
# libraries (ldd runs the loader; doctor reads the files).
#
# A benchmark, not a test: nothing here is registered with meson test.
#
# What it measures (hyperfine means, warm cache, output to /dev/null):
#   1. The fake source-built torch of `mkfixture doctor` (7 libraries, the
#      DT_NEEDED and RUNPATH of a real build), with the CUDA 12.4 modules
#      loaded through their environment (`cudamod show --json`):
#        doctor            cudamod doctor TORCH (no modulepath)
#        doctor+modules    cudamod doctor --modulepath MP TORCH (every module
#                          of the hierarchy evaluated for the suggestions)
#   2. The real CUDA toolkit library directory $CUDA/lib (default
#      /usr/local/cuda-13.0; 27 versioned library files, 31 libraries with
#      the unversioned ones, 220 MB for NCCL alone):
#        doctor            cudamod doctor $CUDA/lib
#        ldd               ldd on each versioned library file
#
# How to run it
#   meson setup build && ninja -C build
#   bench/doctor.sh [--builddir DIR] [--runs N] [--keep]
#
# Results (2026-12-01, release build, a 2-vCPU VM; `cudamod --version`
# alone takes 6.1 ms ± 0.7 there):
#   1. doctor 10.1 ms ± 0.9, doctor+modules 12.2 ms ± 0.7 (7 modules of the
#      hierarchy evaluated in the Lmod sandbox for the suggestions)
#   2. doctor 14.9 ms ± 1.3, ldd over the 27 files 971 ms ± 65: 65x faster,
#      and nothing is executed
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_setup doctor 20 "$@"
mkfixture=$builddir/tests/mkfixture
bench_need "$cudamod" "$mkfixture"

cd "$work"  # the default config's output directory is relative: not ours
"$mkfixture" doctor "$work/fx" >/dev/null
torch=$work/fx/site-packages/torch
env -i PATH=/usr/bin:/bin HOME="$work" "$cudamod" generate -o "$work/mf" "$work/fx/sw" >/dev/null
mp=$work/mf/Core
# The environment of `module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5`.
bench_module_env "$mp" cuda/12.4 cudnn/9.1.0 nccl/2.21.5 >"$work/module.env"
menv=$(tr '\n' ' ' <"$work/module.env")

report() { # JSON NAME...
        python3 - "$@" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for name in sys.argv[2:]:
    print(f"{name:16s} {r[name]['mean']*1000:8.1f} ms ± {r[name]['stddev']*1000:.1f}")
EOF
}

echo "== 1. a source-built torch with its modules loaded =="
env -i $menv "$cudamod" doctor "$torch" | tail -n 1
hyperfine -N -i --warmup 3 --min-runs "$runs" --export-json "$work/torch.json" \
        -n doctor "env -i $menv $cudamod doctor $torch" \
        -n doctor+modules "env -i $menv $cudamod doctor --modulepath $mp $torch" >/dev/null
report "$work/torch.json" doctor doctor+modules

CUDA=${CUDA:-/usr/local/cuda-13.0}
if [ -d "$CUDA/lib" ]; then
        echo
        echo "== 2. the real toolkit's library directory $CUDA/lib =="
        libs=$(find "$CUDA/lib/" -maxdepth 1 -name '*.so.*' -type f | sort | tr '\n' ' ')
        echo "$(echo "$libs" | wc -w) libraries"
        hyperfine -N -i --warmup 2 --min-runs "$runs" --export-json "$work/cuda.json" \
                -n doctor "env -i PATH=/usr/bin:/bin $cudamod doctor $CUDA/lib" \
                -n ldd "sh -c 'for f in $libs; do ldd \$f; done'" >/dev/null
        report "$work/cuda.json" doctor ldd
else
        echo "(no $CUDA/lib: part 2 skipped)"
fi
