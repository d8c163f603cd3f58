#!/bin/sh
# unpack.sh DEBDIR APPS: lay out the Debian packages fetch.sh downloaded
# into DEBDIR as a site installs them, under APPS, without installing
# anything: APPS/cuda/X.Y/{bin,include,lib64,nvvm,version.json} (the CUDA
# of the packages), APPS/nccl/V/{include,lib} when DEBDIR has NCCL, and
# when it has Debian's MAGMA, APPS/<suite>/usr as a machine of that suite
# has it once `apt install libmagma-dev` ran: usr/lib/libmagma.so.2 and
# libmagma_sparse.so.2 with their .so links (Debian puts them in /usr/lib,
# not the multiarch directory), usr/lib/pkgconfig/magma.pc, usr/include/
# magma*.h, and the BLAS, LAPACK and libgfortran they need in
# usr/lib/x86_64-linux-gnu (with the libblas.so.3 and liblapack.so.3 links
# update-alternatives makes); not the static libmagma.a and
# libmagma_sparse.a (375 MB, which nothing here links). Its CUDA runtime is
# the unpacked CUDA's (APPS/cuda/X.Y), not a copy in usr/lib.
#
# Debian's nvcc reads its profile from the directory of the nvcc binary,
# and that profile names /usr/lib/nvidia-cuda-toolkit; bin/nvcc.profile is
# replaced by the one NVIDIA's runfile writes ($(_HERE_)-relative), so the
# prefix works wherever it lies. Of nvidia-cuda-dev (0.8-0.9 GB) only the
# headers, the cudart link and archives (CMake links cudart_static by
# default) and the driver stub are taken. Exit 77 when a package is
# missing. A layout already made (APPS/.complete-<layout version>-<toolkit deb>) is kept.
set -eu
debs=$1
apps=$2
deb() {
        set -- "$debs/$1"_*.deb
        [ -f "$1" ] || { echo "unpack.sh: no $1" >&2; exit 77; }
        echo "$1"
}
toolkit=$(deb nvidia-cuda-toolkit)
# 11.8.89~11.8.0-5~deb12u1 -> 11.8.89 (cudart, nvcc) and 11.8.0 (release)
full=$(dpkg-deb -f "$toolkit" Version)
comp=${full%%~*}
release=${full#*~}
release=${release%%-*}
xy=$(echo "$release" | cut -d. -f1-2)
# The layout's version (2: with the CCCL headers; 3: with nvToolsExt) and
# the toolkit's package.
stamp=$apps/.complete-3-$(basename "$toolkit")
# Debian's MAGMA, laid out on its own (its package's stamp): a layout of
# the CUDA made before it came is kept.
magma=$(echo "$debs"/libmagma2_*.deb)
suite=$(basename "$debs")
suite=${suite#debs-}
mstamp=$apps/.complete-magma-1-$(basename "$magma")
[ -f "$magma" ] || mstamp=
laid_out() { [ -f "$stamp" ] && { [ -z "$mstamp" ] || [ -f "$mstamp" ]; }; }
laid_out && exit 0
mkdir -p "$apps"
# One unpacker at a time (the real tests run in parallel).
exec 9>"$apps/.lock"
flock 9
laid_out && exit 0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-real.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
x() {
        f=$(deb "$1")
        shift
        dpkg-deb --fsys-tarfile "$f" | tar -x -C "$tmp" --wildcards "$@" 2>/dev/null || true
}
if [ -n "$mstamp" ] && [ ! -f "$mstamp" ]; then
        root=$apps/$suite
        rm -rf "$root"
        x libmagma2 './usr/lib/libmagma.so*'
        x libmagma-sparse2 './usr/lib/libmagma_sparse.so*'
        x libmagma-dev './usr/include/*' './usr/lib/libmagma.so' './usr/lib/libmagma_sparse.so' \
                './usr/lib/pkgconfig/magma.pc'
        x libblas3 './usr/lib/x86_64-linux-gnu/blas/*'
        x liblapack3 './usr/lib/x86_64-linux-gnu/lapack/*'
        x libgfortran5 './usr/lib/x86_64-linux-gnu/libgfortran.so*'
        [ -f "$tmp/usr/lib/libmagma.so.2" ] && [ -f "$tmp/usr/include/magma_v2.h" ] &&
                [ -f "$tmp/usr/lib/x86_64-linux-gnu/blas/libblas.so.3" ] ||
                { echo "unpack.sh: Debian's MAGMA or its BLAS not unpacked" >&2; exit 1; }
        ln -s blas/libblas.so.3 "$tmp/usr/lib/x86_64-linux-gnu/libblas.so.3"
        ln -s lapack/liblapack.so.3 "$tmp/usr/lib/x86_64-linux-gnu/liblapack.so.3"
        mkdir -p "$root"
        mv "$tmp/usr" "$root/usr"
        touch "$mstamp"
fi
[ -f "$stamp" ] && exit 0
x nvidia-cuda-toolkit './usr/bin/ptxas' './usr/bin/fatbinary' './usr/bin/nvlink' './usr/bin/cudafe++' \
        './usr/bin/bin2c' './usr/bin/nvprune' './usr/bin/cuobjdump' './usr/bin/cu++filt' \
        './usr/lib/nvidia-cuda-toolkit/bin/nvcc' './usr/lib/nvidia-cuda-toolkit/bin/cicc' \
        './usr/lib/nvidia-cuda-toolkit/bin/crt/*' './usr/lib/nvidia-cuda-toolkit/libdevice/*' './usr/include/nvvm.h'
x nvidia-cuda-dev './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart.so' \
        './usr/lib/x86_64-linux-gnu/libcudart_static.a' './usr/lib/x86_64-linux-gnu/libcudadevrt.a' \
        './usr/lib/x86_64-linux-gnu/libculibos.a' './usr/lib/x86_64-linux-gnu/stubs/libcuda.so' \
        './usr/lib/x86_64-linux-gnu/libcublas.so' './usr/lib/x86_64-linux-gnu/libcublasLt.so' \
        './usr/lib/x86_64-linux-gnu/libcusparse.so' './usr/lib/x86_64-linux-gnu/libnvJitLink.so' \
        './usr/lib/x86_64-linux-gnu/libnvToolsExt.so'
for p in libcudart11.0 libcudart12; do
        [ -f "$(echo "$debs/$p"_*.deb)" ] && x "$p" './usr/lib/x86_64-linux-gnu/libcudart.so*'
done
x libnvvm4 './usr/lib/x86_64-linux-gnu/libnvvm.so*'
# CCCL (libcu++, CUB, Thrust): NVIDIA's toolkit has them in include/.
for p in libcu++-dev libcub-dev libthrust-dev; do
        x "$p" './usr/include/*'
done
# libnvToolsExt (NVTX 2, lib64/libnvToolsExt.so* of NVIDIA's CUDA 12.x up to
# 12.8; its NVTX 3 headers, include/nvtx3, are nvidia-cuda-dev's): CMake's
# FindCUDAToolkit makes CUDA::nvToolsExt of it, which Debian's PyTorch 2.6
# links (tests/pytorch).
for p in libcublas11 libcublaslt11 libcublas12 libcublaslt12 libcusparse12 libnvjitlink12 libnvtoolsext1; do
        [ -f "$(echo "$debs/$p"_*.deb)" ] && x "$p" './usr/lib/x86_64-linux-gnu/lib*.so*'
done
# (bookworm's list has no libnvtoolsext1: no dangling link)
[ -e "$tmp/usr/lib/x86_64-linux-gnu/libnvToolsExt.so" ] || rm -f "$tmp/usr/lib/x86_64-linux-gnu/libnvToolsExt.so"
[ -x "$tmp/usr/lib/nvidia-cuda-toolkit/bin/nvcc" ] || { echo "unpack.sh: nvcc not unpacked" >&2; exit 1; }

prefix=$apps/cuda/$xy
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$prefix/lib64/stubs" "$prefix/nvvm/bin" "$prefix/nvvm/lib64"
for b in ptxas fatbinary nvlink cudafe++ bin2c nvprune cuobjdump cu++filt; do
        [ -f "$tmp/usr/bin/$b" ] && cp -p "$tmp/usr/bin/$b" "$prefix/bin/"
done
cp -p "$tmp/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$prefix/bin/"
cp -pR "$tmp/usr/lib/nvidia-cuda-toolkit/bin/crt" "$prefix/bin/"
cp -p "$tmp/usr/lib/nvidia-cuda-toolkit/bin/cicc" "$prefix/nvvm/bin/"
cp -pR "$tmp/usr/lib/nvidia-cuda-toolkit/libdevice" "$prefix/nvvm/"
cp -pR "$tmp/usr/include" "$prefix/include"
cp -pP "$tmp/usr/lib/x86_64-linux-gnu/"lib*.so* "$tmp/usr/lib/x86_64-linux-gnu/"*.a "$prefix/lib64/"
mv "$prefix/lib64/"libnvvm.so* "$prefix/nvvm/lib64/"
ln -s libnvvm.so.4 "$prefix/nvvm/lib64/libnvvm.so"
cp -p "$tmp/usr/lib/x86_64-linux-gnu/stubs/libcuda.so" "$prefix/lib64/stubs/"
# The profile NVIDIA's runfile writes (bin/nvcc.profile).
cat > "$prefix/bin/nvcc.profile" <<'PROFILE'

TOP              = $(_HERE_)/..

NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):

INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
# What the runfile's version.json says of the parts unpacked here.
cat > "$prefix/version.json" <<JSON
{
   "cuda" : { "name" : "CUDA SDK", "version" : "$release" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "$comp" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "$comp" }
}
JSON

if [ -f "$(echo "$debs"/libnccl2_*.deb)" ]; then
        x libnccl2 './usr/lib/x86_64-linux-gnu/libnccl.so*'
        x libnccl-dev './usr/include/nccl*.h' './usr/lib/x86_64-linux-gnu/libnccl_static.a'
        nccl=$(dpkg-deb -f "$(deb libnccl2)" Version)
        nccl=${nccl%%-*}
        mkdir -p "$apps/nccl/$nccl/include" "$apps/nccl/$nccl/lib"
        cp -p "$tmp/usr/include/"nccl*.h "$apps/nccl/$nccl/include/"
        cp -pP "$tmp/usr/lib/x86_64-linux-gnu/"libnccl* "$apps/nccl/$nccl/lib/"
        ln -sf libnccl.so.2 "$apps/nccl/$nccl/lib/libnccl.so"
fi
touch "$stamp"
