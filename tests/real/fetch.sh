#!/bin/sh
# fetch.sh DIR SUITE...: download the real NVIDIA packages tests/real uses
# from Debian's archive into DIR/debs-SUITE, with a private apt state
# (DIR/apt-SUITE): the system's apt sources and its library directories are
# not touched, and nothing is installed.
#   bookworm  CUDA 11.8 (non-free): the toolkit's nvcc, headers, cudart, cuBLAS
#   trixie    CUDA 12.4 (non-free) and NCCL 2.22.3 (contrib)
# Only the packages' files are kept; unpack.sh lays them out as a site
# installs them. A suite already fetched is not fetched again. Exit 0 when
# every suite was fetched, 1 otherwise (the archive cannot be reached).
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
                libnvjitlink12 libcusparse12 libnccl2 libnccl-dev libcu++-dev libcub-dev libthrust-dev libnvtoolsext1 ;;
        *) echo "fetch.sh: unknown suite '$1'" >&2; exit 2 ;;
        esac
}

for suite in "$@"; do
        debs=$dir/debs-$suite apt=$dir/apt-$suite
        list=$(packages "$suite")
        # Fetched already, this list of packages.
        [ "$(cat "$debs/.complete" 2>/dev/null)" = "$list" ] && continue
        rm -rf "$debs" "$apt"
        mkdir -p "$debs" "$apt/lists/partial" "$apt/cache/archives/partial"
        cat > "$apt/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main contrib non-free
SOURCES
        set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
                -o Dir::State::status=/dev/null -o APT::Architecture=amd64 -o APT::Sandbox::User=root
        start=$(date +%s)
        apt-get "$@" -q update >"$apt/update.log" 2>&1 || { echo "fetch.sh: apt-get update for $suite failed: $(tail -3 "$apt/update.log")" >&2; exit 1; }
        # shellcheck disable=SC2086
        (cd "$debs" && apt-get "$@" -q download $list) >"$apt/download.log" 2>&1 ||
                { echo "fetch.sh: downloading $suite's packages failed: $(tail -3 "$apt/download.log")" >&2; exit 1; }
        echo "$list" >"$debs/.complete"
        echo "fetch.sh: $suite: $(ls "$debs" | wc -l) packages, $(du -sm "$debs" | cut -f1) MB in $(( $(date +%s) - start )) s"
done
