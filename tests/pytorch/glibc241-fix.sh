#!/bin/sh
# glibc241-fix.sh TOOLKIT DEST: make DEST a copy of the CUDA toolkit TOOLKIT
# whose crt/math_functions.h declares sinpi, sinpif, cospi and cospif
# noexcept (true), as glibc 2.41 declares them: the fix sites apply to CUDA
# 12.x before 12.9 on a glibc >= 2.41 (Debian trixie, Fedora 42, Ubuntu
# 25.04), and the one CUDA 12.9 ships. Without it every compile of a .cu
# file that includes <cmath> fails ("exception specification is
# incompatible with that of previous function"), CMake's CUDA compiler
# identification first.
# DEST holds links to TOOLKIT's files (in directories of its own: a
# scan does not follow a linked lib64) except bin/nvcc (copied: nvcc finds
# its profile, and so include/ and nvvm/, beside its own binary) and the
# patched header, so it costs a few MB. Made once (DEST/.glibc241-fix).
set -eu
src=$(cd "$1" && pwd)
dest=$2
[ -f "$dest/.glibc241-fix" ] && exit 0
rm -rf "$dest"
mkdir -p "$dest"
for e in "$src"/*; do
        case ${e##*/} in
        bin|include|lib64) ;;
        *) ln -s "$e" "$dest/${e##*/}" ;;
        esac
done
mkdir "$dest/bin" "$dest/include" "$dest/lib64"
for e in "$src"/lib64/*; do ln -s "$e" "$dest/lib64/${e##*/}"; done
for e in "$src"/bin/*; do ln -s "$e" "$dest/bin/${e##*/}"; done
rm "$dest/bin/nvcc" "$dest/bin/nvcc.profile"
cp "$src/bin/nvcc" "$src/bin/nvcc.profile" "$dest/bin/"
for e in "$src"/include/*; do ln -s "$e" "$dest/include/${e##*/}"; done
rm "$dest/include/crt"
mkdir "$dest/include/crt"
for e in "$src"/include/crt/*; do ln -s "$e" "$dest/include/crt/${e##*/}"; done
rm "$dest/include/crt/math_functions.h"
sed -E 's/^(extern __DEVICE_FUNCTIONS_DECL__ __device_builtin__ (double|float) +(sinpi|sinpif|cospi|cospif)\((double|float) x\));/\1 noexcept (true);/' \
        "$src/include/crt/math_functions.h" > "$dest/include/crt/math_functions.h"
n=$(grep -c 'noexcept (true);' "$dest/include/crt/math_functions.h" || true)
[ "$n" = 4 ] || { echo "glibc241-fix.sh: $n of 4 declarations patched in $src/include/crt/math_functions.h" >&2; exit 1; }
touch "$dest/.glibc241-fix"
