#!/usr/bin/env bash
# tests/pytorch/cpp-extension.sh: torch.utils.cpp_extension.load_inline
# (Debian trixie's python3-torch-cuda 2.6) compiles, links and loads a
# small __global__ kernel with only the loaded modules' environment, and
# `cudamod doctor --build --json` run in the same shell says in its
# "cpp_extension" object what cpp_extension used: torch's CUDA_HOME (it
# reads CUDA_HOME, CUDA_PATH, then nvcc on PATH, then /usr/local/cuda), the
# nvcc and -ccbin of the build.ninja it wrote. The kernel is not run (no
# GPU needed).
#   patched    module load cuda/12.4 (the glibc-2.41 copy configure.sh
#              uses, tests/pytorch/glibc241-fix.sh), the host compiler
#              doctor's fix names: the build passes, the picks agree
#   unpatched  the real CUDA 12.4 tree (CUDA_HOME, CUDACXX and the rest
#              at it), the kernel alone (cpp_extension.load): it builds,
#              as cpp_extension passes -isystem CUDA_HOME/include and nvcc
#              then lets glibc 2.41's sinpi/cospi clash in the system
#              header pass, while doctor --build refuses (fatal
#              glibc-math): right for setup.py's CMake (its compiler
#              identification fails), not for cpp_extension
#   divergent  the patched module loaded, CUDA_HOME exported to the real
#              tree: torch is imported, nothing built (a few seconds);
#              cpp_extension's CUDA_HOME is the real tree and doctor's
#              "cpp_extension" says so, where the configure takes the
#              module's (CUDA_PATH), with a note
# torch itself is unpacked (tests/pytorch/fetch-torch.sh, .ci/trixie runs
# it) rather than installed: PYTHONPATH, LD_LIBRARY_PATH and LIBRARY_PATH
# (the link's -ltorch_cuda: libtorch-cuda-dev's libtorch_cuda.so is in
# /usr/lib/x86_64-linux-gnu, not in torch/lib) name it, as /usr would. It needs libcudnn.so.9 to load: cuDNN 9 of
# /usr/local/cuda-13.0 (a directory of links to libcudnn*.so.9 only, not
# the CUDA 13 libraries beside them); no libcuda.so.1 (import and the build
# need no driver).
# Runs in CI's trixie pass only; skips elsewhere. Environment:
# CUDAMOD_REAL_DIR, CUDAMOD_PYTORCH_TORCH (the directory fetch-torch.sh
# filled), CUDAMOD_REQUIRE_REAL.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
troot=${CUDAMOD_PYTORCH_TORCH:-}/root
[ -f "$troot/.unpacked" ] || skip "no unpacked torch (tests/pytorch/fetch-torch.sh DIR; CUDAMOD_PYTORCH_TORCH=DIR): .ci/trixie fetches it"
for c in python3 ninja g++-12 gcc-12; do command -v "$c" >/dev/null || skip "no $c"; done
[ -n "$real" ] && [ -f "$real/debs-trixie/.complete" ] || skip "no trixie packages in CUDAMOD_REAL_DIR"
[ -e /usr/local/cuda-13.0/lib64/libcudnn.so.9 ] || skip "no cuDNN 9 in /usr/local/cuda-13.0"
need lmod
apps=$real/apps
sh "$MT_LIB_DIR/../real/unpack.sh" "$real/debs-trixie" "$apps" || die "unpack.sh $real/debs-trixie failed"
cuda12=$apps/cuda/12.4
sw=$MT_TMP/sw
sh "$here/glibc241-fix.sh" "$cuda12" "$sw/cuda/12.4" || die "glibc241-fix.sh failed"
mf=$MT_TMP/mf
run_cudamod generate -o "$mf" --format lua "$sw/cuda/12.4" "$apps/nccl/2.22.3" >"$mf.log" 2>&1 || die "generate: $(cat "$mf.log")"
cudnn=$MT_TMP/cudnn
mkdir -p "$cudnn"
ln -s /usr/local/cuda-13.0/lib64/libcudnn*.so.9 "$cudnn/"
tlib=$troot/usr/lib/x86_64-linux-gnu
torchpath="PYTHONPATH=$troot/usr/lib/python3/dist-packages TORCH_LIBS=$tlib:$troot/usr/lib:$tlib/blas:$tlib/lapack:$cudnn TORCH_LINK=$tlib"

# NAME<TAB>shell lines after a clean login (Lmod's `module`).
# The host compiler: doctor's fix says CUDAHOSTCXX (what CMake reads);
# cpp_extension passes CC to nvcc's -ccbin and compiles the C++ with CXX.
# TORCH_CUDA_ARCH_LIST: without it cpp_extension asks the GPU.
hostcc="export CUDAHOSTCXX=/usr/bin/g++-12 CC=/usr/bin/gcc-12 CXX=/usr/bin/g++-12 TORCH_CUDA_ARCH_LIST=8.0"
envs=(
        "patched	module load cuda/12.4 nccl/2.22.3; $hostcc"
        "unpatched	module load cuda/12.4 nccl/2.22.3; $hostcc; export PATH=$cuda12/bin:\$PATH CUDA_HOME=$cuda12 CUDACXX=$cuda12/bin/nvcc CUDA_PATH=$cuda12 CUDA_ROOT=$cuda12 CUDAToolkit_ROOT=$cuda12"
        "divergent	module load cuda/12.4 nccl/2.22.3; $hostcc; export CUDA_HOME=$cuda12"
)
for e in "${envs[@]}"; do
        name=${e%%	*} setup=${e#*	}
        mode='' nocompile=''
        [ "$name" = unpatched ] && mode=cu-only
        # Nothing is built: doctor's probe compile would only cost time.
        [ "$name" = divergent ] && mode=import-only nocompile=--no-compile
        d=$MT_TMP/$name
        mkdir -p "$d"
        t0=$(date +%s)
        env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$mf/Core" LANG=C.UTF-8 CUDAMOD_BIN="$CUDAMOD_BIN" \
                bash --noprofile --norc -c '
                . "$1"; eval "$2" >"$3/setup.log" 2>&1
                "$CUDAMOD_BIN" doctor --build $7 --json >"$3/doctor.json" 2>"$3/doctor.err"; echo $? >"$3/doctor.rc"
                export $4
                export LD_LIBRARY_PATH=$TORCH_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LIBRARY_PATH=$TORCH_LINK TORCH_EXTENSIONS_DIR=$3/ext MAX_JOBS=2
                env >"$3/env.txt"
                python3 "$5" "$3" $6 >"$3/build.log" 2>&1; echo $? >"$3/build.rc"; true' \
                env "$(lmod_init)" "$setup" "$d" "$torchpath" "$here/load_inline.py" "$mode" "$nocompile" || die "$name: the environment's shell failed"
        say "$name: load_inline exit $(cat "$d/build.rc"), doctor exit $(cat "$d/doctor.rc"), $(($(date +%s) - t0)) s"
done
python3 "$here/cpp-extension.py" "$MT_TMP" || fail "doctor --build disagrees with torch.utils.cpp_extension (above)"
mt_finish
