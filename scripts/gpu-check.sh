#!/usr/bin/env bash
# scripts/gpu-check.sh: the device check on a machine with an NVIDIA GPU.
#
# Builds cudamod (meson, in BUILD, default build-gpu), generates modules for
# the CUDA, cuDNN and NCCL installs under the roots given (default: the
# built-in roots: /usr/local, /opt, ...), validates every module with
# --require-device --json, and prints the report and, per module, the
# device query: the driver version and each GPU's name, compute capability
# and memory. Exit status: that of `cudamod validate` (0: every module
# passed, the GPUs included).
#
#   scripts/gpu-check.sh [--builddir DIR] [--out DIR] [ROOT...]
#
# Needs: meson, ninja, a C compiler, and cudamod's libraries (bootstrap.sh
# --deps-only installs them on Debian); python3 for the summary.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
builddir=$src/build-gpu
out=
while [ $# -gt 0 ]; do
        case $1 in
        --builddir) builddir=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
        *) break ;;
        esac
done

if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv || true
else
        echo "gpu-check: no nvidia-smi; going on (the probe asks the driver itself)"
fi

if [ ! -d "$builddir" ]; then
        meson setup "$builddir" "$src" -Dtests=false >/dev/null
fi
ninja -C "$builddir" >/dev/null
cudamod=$builddir/src/cudamod
"$cudamod" --version

if [ -z "$out" ]; then
        out=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-gpu-check-XXXXXX")
fi
echo "== scan"
"$cudamod" scan "$@"
echo "== generate into $out"
"$cudamod" generate -o "$out" "$@"
echo "== validate --require-device"
status=0
"$cudamod" validate --require-device --json --modulepath "$out/Core" >"$out/validate.json" || status=$?
"$cudamod" validate --require-device --modulepath "$out/Core" || true
echo "== device query (from $out/validate.json)"
python3 - "$out/validate.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for m in doc["modules"]:
    dev = m.get("device") or {}
    run = next((c for c in m["checks"] if c["id"] == "run"), {})
    print(f"{m['module']}: {m['status']}; run: {run.get('message', '')}")
    if dev:
        print(f"  driver {dev.get('driver_version')}")
        for d in dev.get("devices", []):
            print(f"  GPU {d['index']}: {d['name']}, compute capability {d['compute_capability']}, "
                  f"{d['memory_mib']} MiB")
EOF
exit "$status"
