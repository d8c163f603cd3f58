#!/usr/bin/env bash
# bootstrap.sh: install what is missing, build, and run cudamod.
#
#   ./bootstrap.sh          install missing packages, build, run the main job
#   ./bootstrap.sh test     install missing packages, build, run the test suite
#   ./bootstrap.sh --deps-only
#
# Environment: BUILDDIR (default: build), MESON_ARGS (extra `meson setup`
# arguments, e.g. "--werror" or "-Db_sanitize=address,undefined"),
# TEST_ARGS (extra `meson test` arguments, e.g. "--setup=valgrind").
set -euo pipefail
cd "$(dirname "$0")"

packages=(meson ninja-build pkg-config gcc libc6-dev libelf-dev libjansson-dev liblua5.4-dev
          libyaml-dev check valgrind binutils)

install_missing() {
        local missing=()
        for p in "${packages[@]}"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "bootstrap: installing ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -q
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
        local dir="${BUILDDIR:-build}"
        # shellcheck disable=SC2086
        if [ ! -f "$dir/build.ninja" ]; then
                meson setup "$dir" ${MESON_ARGS:-}
        elif [ -n "${MESON_ARGS:-}" ]; then
                meson setup --reconfigure "$dir" ${MESON_ARGS}
        fi
        meson compile -C "$dir"
}

case "${1:-run}" in
--deps-only)
        install_missing
        ;;
run)
        install_missing
        build
        # The main job: what cudamod finds on this machine.
        "${BUILDDIR:-build}/src/cudamod" scan
        ;;
test)
        install_missing
        build
        # shellcheck disable=SC2086
        meson test -C "${BUILDDIR:-build}" --print-errorlogs ${TEST_ARGS:-}
        ;;
*)
        echo "usage: $0 [run|test|--deps-only]" >&2
        exit 2
        ;;
esac
