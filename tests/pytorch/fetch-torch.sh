#!/bin/sh
# fetch-torch.sh DIR: Debian trixie's PyTorch 2.6 for CUDA (python3-torch-cuda
# and libtorch-cuda-2.6, contrib) with the libraries `import torch` needs
# that the trixie chroot lacks, downloaded with a private apt state
# (DIR/apt, as tests/real/fetch.sh does) into DIR/debs and unpacked with
# `dpkg -x` into DIR/root: nothing is installed, the system's apt sources
# are not touched. Not `apt-get install`: libtorch-cuda-2.6 depends on
# nvidia-cudnn, a package that downloads cuDNN from NVIDIA when installed
# (CI reaches Debian's archive only); tests/pytorch/cpp-extension.sh takes
# cuDNN 9 from /usr/local/cuda-13.0 instead. Left out, as the trixie chroot
# or the modules have them: what .ci/trixie installs for PyTorch's
# configure (protobuf, sleef, cpuinfo, pthreadpool, onnx, fmt, httplib,
# typing-extensions, yaml, setuptools, ninja), and what the modules' CUDA
# 12.4 and NCCL 2.22.3 give (cudart, cuBLAS, cuSPARSE, nvJitLink, NVTX,
# NCCL: tests/real/fetch.sh). The list is the DT_NEEDED closure of torch's
# libraries and _C module, plus the Python packages `import torch` imports.
# Made once (DIR/.complete, DIR/root/.unpacked). Exit 0 when DIR/root is
# there, 1 when the archive cannot be reached.
set -eu
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
apt=$dir/apt debs=$dir/debs
list="libtorch-cuda-2.6 python3-torch-cuda libtorch-cuda-dev
libcufft11 libcurand10 libcusolver11 libnvrtc12 libnvrtc-builtins12.4
libxnnpack0.20241108 libdnnl3.6 libtensorpipe-cuda-0 libvulkan1 libz3-4 libblas3 liblapack3 libgfortran5
libgloo-cuda-0 libhiredis1.1.0 libopenmpi40 libucx0 libfabric1 libpsm2-2 librdmacm1t64 libibverbs1
ibverbs-providers libnl-3-200 libnl-route-3-200
python3-sympy python3-mpmath python3-filelock python3-fsspec python3-jinja2 python3-markupsafe
python3-networkx python3-packaging python3-numpy"
# A fetch of another list keeps its debs and gets only those it lacks (and
# is unpacked again).
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$list" ]; then
        want=
        for p in $list; do
                set -- "$debs/${p}"_*.deb
                [ -f "$1" ] || want="$want $p"
        done
        rm -rf "$apt" "$dir/root" "$dir/.complete" "$debs/.new"
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$debs/.new"
        cat > "$apt/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main contrib non-free
SOURCES
        set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
                -o Dir::State::status=/dev/null -o APT::Architecture=amd64 -o APT::Sandbox::User=root
        start=$(date +%s)
        apt-get "$@" -q update >"$apt/update.log" 2>&1 ||
                { echo "fetch-torch.sh: apt-get update failed: $(tail -3 "$apt/update.log")" >&2; exit 1; }
        # Into a directory of their own, moved beside the others when all
        # came: an interrupted download leaves no deb that looks complete.
        # shellcheck disable=SC2086
        (cd "$debs/.new" && apt-get "$@" -q download $want) >"$apt/download.log" 2>&1 ||
                { echo "fetch-torch.sh: downloading failed: $(tail -3 "$apt/download.log")" >&2; exit 1; }
        mv "$debs/.new/"*.deb "$debs/"
        rmdir "$debs/.new"
        echo "$list" >"$dir/.complete"
        echo "fetch-torch.sh: $(echo $want | wc -w) packages fetched, $(ls "$debs" | wc -l) in all, $(du -sm "$debs" | cut -f1) MB, in $(( $(date +%s) - start )) s"
fi
# Unpacked once (1.4 GB of libtorch_cuda.so alone), beside its final place
# and moved there when complete.
if ! [ -f "$dir/root/.unpacked" ]; then
        start=$(date +%s)
        rm -rf "$dir/root" "$dir/root.tmp"
        mkdir "$dir/root.tmp"
        for d in "$debs"/*.deb; do dpkg -x "$d" "$dir/root.tmp"; done
        rm -rf "$dir/root.tmp/usr/share/doc" "$dir/root.tmp/usr/share/man"
        touch "$dir/root.tmp/.unpacked"
        mv "$dir/root.tmp" "$dir/root"
        echo "fetch-torch.sh: unpacked into $dir/root, $(du -sm "$dir/root" | cut -f1) MB, in $(( $(date +%s) - start )) s"
fi
