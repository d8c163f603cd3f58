#!/bin/sh
# unpack-cuda-11.8.sh DEBDIR PREFIX: lay out Debian bookworm's CUDA 11.8
# (non-free: nvidia-cuda-toolkit, nvidia-cuda-dev, libcudart11.0, libnvvm4,
# 11.8.89~11.8.0-5~deb12u1, and libcublas11, libcublaslt11,
# 11.11.3.6~11.8.0-5~deb12u1: scan wants cuBLAS in a toolkit's lib64) as a
# site install does, in PREFIX
# ({bin,include,lib64,nvvm}), without installing anything.
#
# DEBDIR holds the four .deb files (apt-get download them with a private
# apt state; nothing here downloads). Debian's nvcc reads its profile from
# the directory of the nvcc binary and that profile names
# /usr/lib/nvidia-cuda-toolkit; PREFIX/bin/nvcc.profile is replaced by the
# one NVIDIA's runfile writes ($(_HERE_)-relative), so the prefix works
# wherever it lies. Of nvidia-cuda-dev (774 MB) only the headers, the
# cudart link and archives (CMake links cudart_static by default) and the
# driver stub are taken. PREFIX/version.json is written as NVIDIA's runfile
# writes it (for the parts unpacked: cuda 11.8.0, cudart and nvcc 11.8.89);
# NO_VERSION_JSON=1 leaves it out (scan then reads the versions from the
# headers and file names, and reports no release). Exit 77 when a .deb is
# missing. Takes about 2 minutes (xz of nvidia-cuda-dev); 775 MB.
set -eu
debs=$1
prefix=$2
v='11.8.89~11.8.0-5~deb12u1'
vb='11.11.3.6~11.8.0-5~deb12u1'
for p in nvidia-cuda-toolkit_$v nvidia-cuda-dev_$v libcudart11.0_$v libnvvm4_$v libcublas11_$vb libcublaslt11_$vb; do
        [ -f "$debs/${p}_amd64.deb" ] || { echo "unpack-cuda-11.8: no $debs/${p}_amd64.deb" >&2; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda118.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
x() { dpkg-deb --fsys-tarfile "$debs/${1}_amd64.deb" | tar -x -C "$tmp" --wildcards "$@" 2>/dev/null || true; }
# The first argument names the package; tar reads it as a member pattern
# that matches nothing, harmlessly.
x nvidia-cuda-toolkit_$v './usr/bin/ptxas' './usr/bin/fatbinary' './usr/bin/nvlink' './usr/bin/cudafe++' \
        './usr/bin/bin2c' './usr/bin/nvprune' './usr/bin/cuobjdump' './usr/bin/cu++filt' \
        './usr/lib/nvidia-cuda-toolkit/bin/nvcc' './usr/lib/nvidia-cuda-toolkit/bin/cicc' \
        './usr/lib/nvidia-cuda-toolkit/bin/crt/*' './usr/lib/nvidia-cuda-toolkit/libdevice/*' './usr/include/nvvm.h'
x nvidia-cuda-dev_$v './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart.so' \
        './usr/lib/x86_64-linux-gnu/libcudart_static.a' './usr/lib/x86_64-linux-gnu/libcudadevrt.a' \
        './usr/lib/x86_64-linux-gnu/libculibos.a' './usr/lib/x86_64-linux-gnu/stubs/libcuda.so'
x libcudart11.0_$v './usr/lib/x86_64-linux-gnu/libcudart.so*'
x libnvvm4_$v './usr/lib/x86_64-linux-gnu/libnvvm.so*'
x libcublas11_$vb './usr/lib/x86_64-linux-gnu/libcublas.so*'
x libcublaslt11_$vb './usr/lib/x86_64-linux-gnu/libcublasLt.so*'
x nvidia-cuda-dev_$v './usr/lib/x86_64-linux-gnu/libcublas.so' './usr/lib/x86_64-linux-gnu/libcublasLt.so'
[ -x "$tmp/usr/lib/nvidia-cuda-toolkit/bin/nvcc" ] || { echo "unpack-cuda-11.8: nvcc not unpacked" >&2; exit 1; }

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
cp -pP "$tmp/usr/lib/x86_64-linux-gnu/"libcudart.so* "$tmp/usr/lib/x86_64-linux-gnu/"libcublas*.so* "$tmp/usr/lib/x86_64-linux-gnu/"*.a "$prefix/lib64/"
cp -p "$tmp/usr/lib/x86_64-linux-gnu/stubs/libcuda.so" "$prefix/lib64/stubs/"
cp -pP "$tmp/usr/lib/x86_64-linux-gnu/"libnvvm.so* "$prefix/nvvm/lib64/"
ln -s libnvvm.so.4 "$prefix/nvvm/lib64/libnvvm.so"
# NVIDIA's CUDA 11.8 runfile writes this profile (bin/nvcc.profile).
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
[ "${NO_VERSION_JSON:-}" = 1 ] || cat > "$prefix/version.json" <<'JSON'
{
   "cuda" : { "name" : "CUDA SDK", "version" : "11.8.0" },
   "cuda_cudart" : { "name" : "CUDA Runtime (cudart)", "version" : "11.8.89" },
   "cuda_nvcc" : { "name" : "CUDA NVCC", "version" : "11.8.89" }
}
JSON
