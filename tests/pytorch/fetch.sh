#!/bin/sh
# fetch.sh DIR: download the source package of PyTorch 2.6 from Debian
# trixie (pytorch_*.dsc, its .orig tarball and .debian.tar) into DIR, with
# a private apt state (DIR/apt: a deb-src line of its own, as
# tests/real/fetch.sh does for the binary packages): the system's apt
# sources are not touched. The files are kept, so a rerun fetches nothing;
# the tree unpacked from them with Debian's patches (DIR/pytorch) is made
# once. Exit 0 when DIR/pytorch is
# there, 1 when the archive cannot be reached.
set -eu
dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
apt=$dir/apt
if ! [ -f "$dir/.complete" ]; then
        rm -rf "$apt"
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
        cat > "$apt/sources.list" <<SOURCES
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main contrib
SOURCES
        set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
                -o Dir::State::status=/dev/null -o APT::Sandbox::User=root
        start=$(date +%s)
        apt-get "$@" -q update >"$apt/update.log" 2>&1 ||
                { echo "fetch.sh: apt-get update failed: $(tail -3 "$apt/update.log")" >&2; exit 1; }
        (cd "$dir" && apt-get "$@" -q source --download-only pytorch) >"$apt/download.log" 2>&1 ||
                { echo "fetch.sh: downloading pytorch's source failed: $(tail -3 "$apt/download.log")" >&2; exit 1; }
        ls "$dir"/pytorch_*.dsc >/dev/null
        touch "$dir/.complete"
        echo "fetch.sh: pytorch source: $(du -cm "$dir"/pytorch_* | tail -1 | cut -f1) MB in $(( $(date +%s) - start )) s"
fi
# Unpacked with Debian's patches (they make the configure take the system's
# libraries where the dfsg tarball lacks third_party/).
if ! [ -f "$dir/pytorch/.unpacked" ]; then
        command -v dpkg-source >/dev/null || { echo "fetch.sh: no dpkg-source (dpkg-dev) to unpack the source" >&2; exit 1; }
        rm -rf "$dir/pytorch"
        (cd "$dir" && dpkg-source -q -x pytorch_*.dsc pytorch) >"$dir/unpack.log" 2>&1 ||
                { echo "fetch.sh: dpkg-source -x failed: $(tail -3 "$dir/unpack.log")" >&2; exit 1; }
        touch "$dir/pytorch/.unpacked"
fi
