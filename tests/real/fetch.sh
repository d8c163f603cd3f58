#!/bin/sh
# fetch.sh DIR SUITE...: download the real NVIDIA packages tests/real uses
# from Debian's archive into DIR/debs-SUITE, with a private apt state
# (DIR/apt-SUITE): the system's apt sources and its library directories are
# not touched, and nothing is installed.
#   bookworm  CUDA 11.8 (non-free): the toolkit's nvcc, headers, cudart, cuBLAS
#   trixie    CUDA 12.4 (non-free), NCCL 2.22.3 (contrib), and Debian's own
#             MAGMA 2.9 for CUDA 12 (contrib: libmagma2, libmagma-sparse2,
#             libmagma-dev) with the BLAS and LAPACK it needs (libblas3,
#             liblapack3 and its libgfortran5: the trixie chroot has none)
# Only the packages' files are kept; unpack.sh lays them out as a site
# installs them. A suite already fetched is not fetched again; one fetched
# with a shorter list gets only the packages it lacks (its debs are kept:
# the CUDA packages are 2 GB). Exit 0 when every suite was fetched, 1
# otherwise (the archive cannot be reached).
set -eu
dir=$1
shift
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

packages() {
        case $1 in
        # libcu++-dev, libcub-dev, libthrust-dev: the CCCL headers a toolkit
        # has in include/ (cuda_fp16.h includes <nv/target>).
        bookworm) echo nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 libnvvm4 libcublas11 libcublaslt11 \
                libcu++-dev libcub-dev libthrust-dev ;;
        trixie) echo nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libnvvm4 libcublas12 libcublaslt12 \
                libnvjitlink12 libcusparse12 libnccl2 libnccl-dev libcu++-dev libcub-dev libthrust-dev libnvtoolsext1 \
                libmagma2 libmagma-sparse2 libmagma-dev libblas3 liblapack3 libgfortran5 ;;
        *) echo "fetch.sh: unknown suite '$1'" >&2; exit 2 ;;
        esac
}

for suite in "$@"; do
        debs=$dir/debs-$suite apt=$dir/apt-$suite
        list=$(packages "$suite")
        # Fetched already, this list of packages.
        [ "$(cat "$debs/.complete" 2>/dev/null)" = "$list" ] && continue
        # A complete fetch of another list: only what it lacks is fetched.
        # Otherwise (none, or an interrupted one) the suite from scratch.
        want=$list
        if [ -f "$debs/.complete" ]; then
                want=
                for p in $list; do
                        set -- "$debs/${p}"_*.deb
                        [ -f "$1" ] || want="$want $p"
                done
                # All there already (fetched by hand, or by a list that
                # had them): nothing to download.
                if [ -z "$want" ]; then
                        echo "$list" >"$debs/.complete"
                        continue
                fi
        else
                rm -rf "$debs" "$apt"
        fi
        mkdir -p "$debs" "$apt/lists/partial" "$apt/cache/archives/partial"
        cat > "$apt/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main contrib non-free
SOURCES
        set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
                -o Dir::State::status=/dev/null -o APT::Architecture=amd64 -o APT::Sandbox::User=root
        start=$(date +%s)
        apt-get "$@" -q update >"$apt/update.log" 2>&1 || { echo "fetch.sh: apt-get update for $suite failed: $(tail -3 "$apt/update.log")" >&2; exit 1; }
        # Into a directory of their own, moved beside the others when all
        # came: an interrupted download leaves no deb that looks complete.
        rm -rf "$debs/.new"
        mkdir "$debs/.new"
        # shellcheck disable=SC2086
        (cd "$debs/.new" && apt-get "$@" -q download $want) >"$apt/download.log" 2>&1 ||
                { echo "fetch.sh: downloading $suite's packages failed: $(tail -3 "$apt/download.log")" >&2; exit 1; }
        mv "$debs/.new/"*.deb "$debs/"
        rmdir "$debs/.new"
        echo "$list" >"$debs/.complete"
        echo "fetch.sh: $suite: $(echo $want | wc -w) packages fetched, $(ls "$debs" | wc -l) in all, $(du -sm "$debs" | cut -f1) MB, in $(( $(date +%s) - start )) s"
done
