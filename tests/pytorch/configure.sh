#!/usr/bin/env bash
# tests/pytorch/configure.sh: PyTorch 2.6's own top-level configure
# (`python3 setup.py build --cmake-only`, Debian trixie's source package,
# the CUDA components on and every other USE_* off) as the judge of
# `cudamod doctor --build --json`, in module environments over real NVIDIA
# software: the real CUDA 12.4 + NCCL 2.22.3 of trixie and CUDA 11.8 of
# bookworm (.cache/real), and /usr/local/cuda-13.0 (cuDNN 9.19 and NCCL
# 2.28.9 for CUDA 13 in it). Each environment is a clean shell with the
# real Lmod; in it doctor predicts and the configure runs (a build
# directory each), then compare.py sets what CMake found, picked and failed
# on (CMakeCache.txt, the configure's exit status and fatal message)
# against the prediction, component by component, and prints the table.
# stop.cmake ends each configure once cmake/Dependencies.cmake has decided
# the CUDA parts (20-40 s an environment instead of 1-4 minutes).
#
# CUDA 12.4 on trixie: glibc 2.41 declares sinpi/cospi noexcept and CUDA
# 12.4's crt/math_functions.h does not, so no .cu file compiles; sites
# patch the header (glibc241-fix.sh). The modules' cuda/12.4 is that
# patched copy, so the configure gets past CMake's CUDA compiler
# identification and the pick of each library is compared; the
# `unpatched` environment points at the real tree to check the failure.
# CUDAHOSTCXX=g++-12 everywhere (CUDA 12.4 refuses trixie's gcc 14):
# what doctor's host-compiler fix says.
#
# Runs in CI's trixie pass only (.ci/trixie fetches the source with
# fetch.sh and installs what the configure needs); skips elsewhere.
# Environment: CUDAMOD_REAL_DIR, CUDAMOD_PYTORCH_SRC (the directory
# fetch.sh filled), CUDAMOD_REQUIRE_REAL, CUDAMOD_PYTORCH_ENVS (names to run
# a subset).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
src=${CUDAMOD_PYTORCH_SRC:-}/pytorch
[ -f "$src/setup.py" ] || skip "no PyTorch source (tests/pytorch/fetch.sh DIR; CUDAMOD_PYTORCH_SRC=DIR): .ci/trixie fetches it"
for c in cmake ninja python3 g++-12; do command -v "$c" >/dev/null || skip "no $c"; done
python3 -c 'import yaml, typing_extensions, setuptools' 2>/dev/null || skip "no python3-yaml/typing-extensions/setuptools"
[ -n "$real" ] && [ -f "$real/debs-trixie/.complete" ] || skip "no trixie packages in CUDAMOD_REAL_DIR"
[ -x /usr/local/cuda-13.0/bin/nvcc ] && [ -e /usr/local/cuda-13.0/lib64/libcudnn.so.9 ] || skip "no /usr/local/cuda-13.0 with cuDNN"
need lmod
apps=$real/apps
for suite in bookworm trixie; do
        [ -f "$real/debs-$suite/.complete" ] || continue
        sh "$MT_LIB_DIR/../real/unpack.sh" "$real/debs-$suite" "$apps" || die "unpack.sh $real/debs-$suite failed"
done
cuda12=$apps/cuda/12.4 nccl=$apps/nccl/2.22.3 cuda11=$apps/cuda/11.8
[ -e "$cuda11/lib64/libcudart.so.11.0" ] || die "no CUDA 11.8 in $apps"
# Debian's MAGMA 2.9 for CUDA 12, as a trixie machine has it in /usr
# (unpack.sh: APPS/trixie/usr; tests/real/magma.sh tests its module).
debroot=$apps/trixie
[ -e "$debroot/usr/lib/libmagma.so.2" ] || die "no Debian MAGMA in $debroot"
sw=$MT_TMP/sw
sh "$here/glibc241-fix.sh" "$cuda12" "$sw/cuda/12.4" || die "glibc241-fix.sh failed"
mf=$MT_TMP/mf
run_cudamod generate -o "$mf" --format lua "$sw/cuda/12.4" "$nccl" "$cuda11" /usr/local/cuda-13.0 "$debroot" \
        >"$mf.log" 2>&1 || die "generate: $(cat "$mf.log")"

# The environments: NAME<TAB>shell lines run after a clean login (`module`
# is Lmod's), before doctor and the configure.
envs=(
        "none	:"
        "cuda	module load cuda/12.4"
        "cuda-nccl	module load cuda/12.4 nccl/2.22.3"
        "cuda-nccl-cudnn13	module load cuda/12.4 nccl/2.22.3; export CUDNN_ROOT=/usr/local/cuda-13.0"
        "cuda11-localcuda13	module load cuda/11.8"
        "stale-cuda-home	module load cuda/12.4 nccl/2.22.3; export CUDA_HOME=/opt/cuda-12.1"
        "path-vs-cuda-home	module load cuda/12.4 nccl/2.22.3; export CUDA_HOME=/usr/local/cuda-13.0"
        "debian-magma	module load cuda/12.4 nccl/2.22.3 magma/2.9.0"
        "unpatched	module load cuda/12.4 nccl/2.22.3; export PATH=$cuda12/bin:\$PATH CUDA_HOME=$cuda12 CUDACXX=$cuda12/bin/nvcc"
)
# The configure: the CUDA components on (NCCL from the system, as where it
# is a module), everything else off, the bundled third-party parts off
# (USE_SYSTEM_LIBS, as Debian builds it); stop.cmake ends it once the CUDA
# parts are decided.
opts="USE_SYSTEM_LIBS=1 USE_CUDA=1 USE_CUDNN=1 USE_NCCL=1 USE_SYSTEM_NCCL=1 USE_MAGMA=1 USE_CUSPARSELT=1
BUILD_TEST=0 USE_FBGEMM=0 USE_KINETO=0 USE_MKLDNN=0 USE_XNNPACK=0 USE_NNPACK=0 USE_QNNPACK=0
USE_PYTORCH_QNNPACK=0 USE_DISTRIBUTED=0 USE_GLOO=0 USE_TENSORPIPE=0 USE_MPI=0 USE_ITT=0 USE_GFLAGS=0
USE_GLOG=0 USE_OPENMP=0 USE_MKL=0 BLAS=Eigen USE_NUMPY=0 USE_FLASH_ATTENTION=0 USE_MEM_EFF_ATTENTION=0
USE_NVTX=0 USE_CUDSS=0 USE_NVSHMEM=0 TORCH_CUDA_ARCH_LIST=8.0 CUDAHOSTCXX=/usr/bin/g++-12
CMAKE_PROJECT_INCLUDE=$here/stop.cmake"
results=$MT_TMP/results
mkdir -p "$results"
for e in "${envs[@]}"; do
        name=${e%%	*} setup=${e#*	}
        if [ -n "${CUDAMOD_PYTORCH_ENVS:-}" ] && [[ " $CUDAMOD_PYTORCH_ENVS " != *" $name "* ]]; then continue; fi
        d=$results/$name
        mkdir -p "$d"
        # The build directory: setup.py writes build/ beside itself, so each
        # environment gets a tree of links to the source and its own
        # setup.py; and torchgen/ (2 MB) is copied, as setup.py writes into
        # it: the source stays as fetched.
        t=$MT_TMP/tree-$name
        mkdir -p "$t"
        for f in "$src"/* "$src"/.[!.]*; do
                case ${f##*/} in build|setup.py|torchgen) continue ;; esac
                [ -e "$f" ] && ln -s "$f" "$t/"
        done
        cp "$src/setup.py" "$t/"
        cp -R "$src/torchgen" "$t/"
        t0=$(date +%s)
        env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$mf/Core" LANG=C.UTF-8 CUDAMOD_BIN="$CUDAMOD_BIN" \
                bash --noprofile --norc -c '
                . "$1"; eval "$2" >"$4/setup.log" 2>&1
                export $5
                "$CUDAMOD_BIN" doctor --build --json >"$4/doctor.json" 2>"$4/doctor.err"; echo $? >"$4/doctor.rc"
                env >"$4/env.txt"
                cd "$3" && python3 setup.py build --cmake-only >"$4/configure.log" 2>&1; echo $? >"$4/configure.rc"
                cp build/CMakeCache.txt build/CMakeFiles/*/CMakeCUDACompiler.cmake "$4/" 2>/dev/null; true' \
                env "$(lmod_init)" "$setup" "$t" "$d" "$opts" || die "$name: the environment's shell failed"
        say "$name: configure exit $(cat "$d/configure.rc"), doctor exit $(cat "$d/doctor.rc"), $(($(date +%s) - t0)) s"
        rm -rf "$t"
done
python3 "$here/compare.py" "$results" || fail "doctor --build disagrees with PyTorch's configure (table above)"
mt_finish
