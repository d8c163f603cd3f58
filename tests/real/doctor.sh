#!/usr/bin/env bash
# tests/real/doctor.sh: `cudamod doctor` on Debian's torch layout against
# modules cudamod generates for real NVIDIA software, without a GPU:
#   - the torch is Debian's python3-torch-cuda 2.6 layout (mkfixture
#     debian-torch: torch/lib links into a system directory that holds
#     libtorch_cuda.so.2.6, which torch/lib lacks), whose libraries need the
#     real sonames libcudart.so.12, libcublas.so.12, libcublasLt.so.12,
#     libcusparse.so.12, libnccl.so.2 and libcudnn.so.9;
#   - the modules: the real CUDA 12.4 and NCCL 2.22.3 of trixie (fetch.sh,
#     unpack.sh), the real CUDA 11.8 of bookworm when there, and
#     /usr/local/cuda-13.0, which holds cuDNN 9 and NCCL for CUDA 13 in its
#     lib64/: the site has cuDNN only for CUDA 13.
# Nothing loaded: doctor suggests exactly `module load cuda/12.4
# nccl/2.22.3`, says plainly that no cudnn module is for CUDA 12, credits
# libcudnn.so.9 to the cudnn module (not cuda/13.0), and knows every cuda
# module's CUDA major (11.8's runtime is libcudart.so.11.0).
#
# Environment: as real.sh (CUDAMOD_REAL_DIR, CUDAMOD_REQUIRE_REAL), and
# MKFIXTURE.
# shellcheck source=../modules/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../modules/lib.sh"

real=${CUDAMOD_REAL_DIR:-}
skip() {
        say "SKIP: $*"
        [ "${CUDAMOD_REQUIRE_REAL:-}" = 1 ] && die "CUDAMOD_REQUIRE_REAL=1: $*"
        exit 77
}
command -v dpkg-deb >/dev/null || skip "no dpkg-deb to unpack the packages"
command -v python3 >/dev/null || skip "no python3 to read the JSON"
[ -n "$real" ] && [ -f "$real/debs-trixie/.complete" ] ||
        skip "no trixie packages (run tests/real/fetch.sh DIR trixie; set CUDAMOD_REAL_DIR=DIR)"
[ -x /usr/local/cuda-13.0/bin/nvcc ] && [ -e /usr/local/cuda-13.0/lib64/libcudnn.so.9 ] ||
        skip "no /usr/local/cuda-13.0 with cuDNN here"
apps=$real/apps
for suite in bookworm trixie; do
        [ -f "$real/debs-$suite/.complete" ] || continue
        sh "$MT_LIB_DIR/../real/unpack.sh" "$real/debs-$suite" "$apps" || die "unpack.sh $real/debs-$suite failed"
done
cuda12=$apps/cuda/12.4 nccl=$apps/nccl/2.22.3
[ -e "$cuda12/lib64/libcudart.so.12" ] && [ -e "$nccl/lib/libnccl.so.2" ] || die "unpack.sh made no CUDA 12.4 or NCCL 2.22.3"
roots=("$cuda12" "$nccl" /usr/local/cuda-13.0)
[ -e "$apps/cuda/11.8/lib64/libcudart.so.11.0" ] && roots+=("$apps/cuda/11.8")

fx=$MT_TMP/fx
"$MKFIXTURE" debian-torch "$fx" >/dev/null || die "mkfixture debian-torch failed"
torch=$fx/usr/lib/python3/dist-packages/torch
out=$MT_TMP/mf
run_cudamod generate -o "$out" --format lua "${roots[@]}" >"$out.log" 2>&1 || die "generate: $(cat "$out.log")"

# A user's shell with nothing loaded.
rc=0
env -i HOME="$MT_TMP" PATH=/usr/bin:/bin "$CUDAMOD_BIN" doctor --json --modulepath "$out/Core" "$torch" \
        >"$MT_TMP/doctor.json" 2>"$MT_TMP/doctor.err" || rc=$?
env -i HOME="$MT_TMP" PATH=/usr/bin:/bin "$CUDAMOD_BIN" doctor --modulepath "$out/Core" "$torch" \
        >"$MT_TMP/doctor.txt" 2>&1 || true
say "doctor (text):"
cat "$MT_TMP/doctor.txt"
[ "$rc" = 1 ] || fail "doctor exit $rc, want 1: $(cat "$MT_TMP/doctor.err")"
python3 - "$MT_TMP/doctor.json" "${roots[@]}" <<'EOF' || fail "doctor's report: see above"
import json, sys

d = json.load(open(sys.argv[1]))
mods = {m["module"]: m for m in d["modules"]["available"]}
bad = []
line = d["modules"]["module_load"]
if line != "module load cuda/12.4 nccl/2.22.3":
    bad.append(f"module_load {line!r}, want 'module load cuda/12.4 nccl/2.22.3'")
want = ("no cudnn module for CUDA 12 (cudnn/9.19.0 is for CUDA 13): install cuDNN 9 for CUDA 12 "
        "(libcudnn.so.9) and generate its module, or use a torch built for CUDA 13")
if d["modules"]["unavailable"] != [want]:
    bad.append(f"unavailable {d['modules']['unavailable']}, want [{want!r}]")
if sorted(d["built_for"]["sonames"]) != ["libcublas.so.12", "libcublasLt.so.12", "libcudart.so.12",
                                          "libcudnn.so.9", "libcusparse.so.12", "libnccl.so.2"]:
    bad.append(f"sonames {d['built_for']['sonames']}")
if d["torch"]["git_version"] is not None:
    bad.append(f"git_version {d['torch']['git_version']!r}")
for name, m in mods.items():
    if m["kind"] != "cudnn" and "libcudnn.so.9" in m["provides"]:
        bad.append(f"{name} ({m['kind']}) listed as providing libcudnn.so.9")
    if m["cuda_major"] is None:
        bad.append(f"{name}: CUDA major unknown")
if "cudnn/9.19.0" not in mods or mods["cudnn/9.19.0"]["cuda_major"] != 13:
    bad.append(f"cudnn/9.19.0 (CUDA 13) not listed: {sorted(mods)}")
fixes = [f["fix"] for f in d["findings"] if f["id"] == "unresolved"]
if not fixes or want not in fixes[0] or "module load cuda/12.4 nccl/2.22.3" not in fixes[0]:
    bad.append(f"the unresolved finding's fix: {fixes}")
# The host's loader cache may offer CUDA 13's cuDNN: its finding's fix is
# the plain advice too, not a line without cuDNN.
for f in d["findings"]:
    if f["id"] == "cuda-major" and "cuDNN" in f["what"] and f["fix"] != want:
        bad.append(f"cuda-major cuDNN fix: {f['fix']!r}")
for b in bad:
    print("doctor:", b)
sys.exit(1 if bad else 0)
EOF
grep -q "nccl/2.22.3 *CUDA 12" "$MT_TMP/doctor.txt" || fail "the text report does not list nccl/2.22.3 for CUDA 12"
if [ -e "$apps/cuda/11.8/lib64/libcudart.so.11.0" ]; then
        # cuda/11.8 provides nothing a CUDA 12 torch needs: a CUDA 11 torch's
        # libraries (the same layout, CUDA 11 sonames) list it with its major.
        "$CUDAMOD_BIN" doctor --json --modulepath "$out/Core" "$apps/cuda/11.8/lib64/libcublas.so.11" \
                >"$MT_TMP/doctor11.json" 2>&1 || true
        python3 -c 'import json,sys; m={x["module"]: x for x in json.load(open(sys.argv[1]))["modules"]["available"]}
sys.exit(0 if m.get("cuda/11.8", {}).get("cuda_major") == 11 else 1)' "$MT_TMP/doctor11.json" ||
                fail "cuda/11.8 not listed with CUDA 11: $(head -c 1500 "$MT_TMP/doctor11.json")"
fi
mt_finish
