#!/usr/bin/env bash
# tests/modules/doctor-build.sh TOOL: `cudamod doctor --build` in a user's
# shell with the real module tool and the modules cudamod generates
# (hierarchical) for mkfixture doctor-build's tree: CUDA 11.8, CUDA 13.0 with
# cuDNN 9.19.0 (CUDA 13) copied into it, usr/local/cuda -> that toolkit,
# cuDNN 8.9.7 (CUDA 11). The fixture root is the system root doctor looks
# the default places up under (CUDAMOD_TEST_ROOT).
#   cuda/11.8 loaded        -> exit 1: PyTorch's FindCUDNN falls back to
#                              /usr/local + cuda/include, cuda/lib64 and finds
#                              the CUDA 13 cuDNN 9.19.0; the finding says it
#                              came only from the default places and the fix
#                              is exactly `module load cudnn/8.9.7`
#   then that line loaded   -> cuDNN 8.9.7 from the module (CUDNN_ROOT or
#                              CMAKE_PREFIX_PATH), no cuDNN finding
# Both also have the arch-list-unset warning: TORCH_CUDA_ARCH_LIST is unset
# and the fixture's root shows no GPU.
# With glibc >= 2.41 (trixie) both also have the fatal glibc-math finding
# (CUDA 11.8's headers), exit 3 for the first.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: doctor-build.sh lmod|em}
MT_SELF="$tool-doctor-build"
need "$tool"
command -v python3 >/dev/null || { say "python3 is needed"; exit 77; }

fx=$MT_TMP/fx
"$MKFIXTURE" doctor-build "$fx" >/dev/null || die "mkfixture doctor-build failed"
out=$MT_TMP/mf
generate "$tool" hierarchical "$out" "$fx/sw"
sdir=$MT_TMP/s
cudamod=$CUDAMOD_BIN

session "$tool" "$sdir" "$out/Core" <<EOF
step cuda load cuda/11.8
run only env CUDAMOD_TEST_ROOT="$fx" "$cudamod" doctor --build --json --modulepath "$out/Core"
run only-text env CUDAMOD_TEST_ROOT="$fx" "$cudamod" doctor --build --modulepath "$out/Core"
step cudnn load cudnn/8.9.7
run fixed env CUDAMOD_TEST_ROOT="$fx" "$cudamod" doctor --build --json --modulepath "$out/Core"
EOF

json_get() {
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
                "$sdir/$1.out" "${@:2}" 2>&1
}
cudnn() { json_get "$1" '[c for c in d["components"] if c["name"] == "cudnn"][0]'"$2"; }

# With glibc 2.41 or newer (Debian trixie), CUDA 11.8's math_functions.h
# clashes with glibc's (fixed in CUDA 13.0): a fatal glibc-math finding,
# exit 3, predicted from the versions (the fixture's nvcc is a stub).
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
if [ "$(printf '%s\n2.41\n' "$glibc" | sort -V | head -n 1)" = 2.41 ]; then
        clash="['glibc-math']" want_rc=3
else
        clash="[]" want_rc=1
fi
rc_is "$sdir/cuda" 0 || fail "$tool could not load cuda/11.8: $(cat "$sdir/cuda.out")"
rc_is "$sdir/only" "$want_rc" || fail "cuda/11.8 only (glibc $glibc): exit $(rc_of "$sdir/only"), want $want_rc: $(head -c 2000 "$sdir/only.out")"
[ "$(json_get only '[f["id"] for f in d["findings"] if f["id"] == "glibc-math"]')" = "$clash" ] ||
        fail "cuda/11.8 only (glibc $glibc): glibc-math findings, want $clash: $(json_get only 'd["findings"]')"
[ "$(json_get only 'd["mode"], d["cuda"]["version"]')" = "('build', '11.8')" ] ||
        fail "cuda/11.8 only: mode and CUDA: $(json_get only 'd["mode"], d["cuda"]')"
[ "$(cudnn only '["library"]["path"]')" = "$fx/usr/local/cuda/lib64/libcudnn.so" ] ||
        fail "cuda/11.8 only: cuDNN library $(cudnn only '["library"]')"
[ "$(json_get only '[(c["library"]["from"], c["header"]["from"], c["version"], c["cuda_major"]) for c in d["components"] if c["name"] == "cudnn"][0]')" = \
  "('default /usr/local + cuda/lib64', 'default /usr/local + cuda/include', '9.19.0', 13)" ] ||
        fail "cuda/11.8 only: cuDNN pick: $(cudnn only '')"
f=$(json_get only '[f for f in d["findings"] if f["id"] == "cuda-major"]')
[[ $f == *"CUDA 13"* && $f == *"only through the default places"* ]] || fail "cuda/11.8 only: cuda-major finding: $f"
fix=$(json_get only '[f["fix"] for f in d["findings"] if f["id"] == "cuda-major"][0]')
[[ $fix == "module load cudnn/8.9.7 "* ]] || fail "cuda/11.8 only: the fix is '$fix', want 'module load cudnn/8.9.7 ...'"
grep -qF "module load cudnn/8.9.7" "$sdir/only-text.out" ||
        fail "cuda/11.8 only: the text report does not say module load cudnn/8.9.7: $(cat "$sdir/only-text.out")"

[ "$(json_get only '[(f["id"], f["severity"]) for f in d["findings"] if f["id"].startswith("arch-list")]')" = \
  "[('arch-list-unset', 'warning')]" ] || fail "cuda/11.8 only: no arch-list-unset warning: $(json_get only 'd["findings"]')"

rc_is "$sdir/cudnn" 0 || fail "$tool could not load cudnn/8.9.7: $(cat "$sdir/cudnn.out")"
[ "$(json_get fixed '[(c["version"], c["cuda_major"], c["library"]["default"]) for c in d["components"] if c["name"] == "cudnn"][0]')" = \
  "('8.9.7', 11, False)" ] || fail "after loading cudnn/8.9.7: cuDNN pick: $(cudnn fixed '')"
[ "$(json_get fixed '[f["id"] for f in d["findings"] if f["id"] not in ("option-off", "arch-list-unset")]')" = "$clash" ] ||
        fail "after loading cudnn/8.9.7: findings $(json_get fixed 'd["findings"]')"

mt_finish
