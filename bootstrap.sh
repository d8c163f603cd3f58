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

packages=(meson ninja-build pkg-config gcc g++ libc6-dev libelf-dev libjansson-dev liblua5.4-dev
          libyaml-dev nettle-dev check valgrind binutils scdoc strace procps
          lmod lua5.1 tcl python3 bash-completion
          make lua5.3 liblua5.3-dev lua-posix lua-term tcl-dev bc)
# g++: validate's build check compiles C++ for cuSPARSELt and NVSHMEM
# (tests/test-validate-probe.c); strace: tests/readers checks what is opened;
# procps: ps, pgrep, pkill for the Slurm and stress tests (a minimal system has none).
# scdoc builds the man pages (doc/); without it they are not built.
# bash-completion is what completion/test-completion.sh drives.
# lmod, lua5.1 (luac5.1) and tcl (tclsh) are for the module-tool tests
# (tests/modules); so is Environment Modules, which is unpacked, not
# installed: see provide_environment_modules. python3 builds the big
# synthetic trees of tests/stress and bench/.
# make, lua5.3, liblua5.3-dev, lua-posix, lua-term, tcl-dev and bc build
# Lmod 9.2 for the module-tool tests (see provide_lmod9): its configure
# requires bc and luaposix, and liblua5.3-dev and tcl-dev are for its
# tcl2lua.so (Lmod's fast Tcl reader, which Debian's Lmod uses too), built
# against the Lua it runs with (lua5.3, as Debian's bookworm Lmod).

# A real one-node Slurm for tests/slurm (with their dependencies, a few
# small packages, 3.2 MB). Optional: where they cannot be installed, those
# tests skip.
optional_packages=(slurmctld slurmd slurm-client munge)
# For the real-CUDA tests (tests/real): cmake and make, its default
# generator's build tool (validate's cmake check; a minimal trixie has no
# make), and
# the older g++ that the real toolkits accept where the distribution has
# them (CUDA 11.8 takes gcc <= 11, 12.4 gcc <= 13; bookworm's gcc is 12,
# trixie's 14). Optional too: without them those checks say so.
real_packages=(cmake make g++-11 g++-12)

# The packages of $@ that are not installed.
not_installed() {
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
        done
}

install_missing() {
        local missing optional updated=""
        mapfile -t missing < <(not_installed "${packages[@]}")
        mapfile -t optional < <(not_installed "${optional_packages[@]}" "${real_packages[@]}")
        [ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && return 0
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        if [ ${#missing[@]} -ne 0 ]; then
                echo "bootstrap: installing ${missing[*]}"
                $sudo apt-get update -q
                updated=1
                DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
        fi
        [ ${#optional[@]} -ne 0 ] || return 0
        { [ -n "$updated" ] || $sudo apt-get update -q; } || true
        # Only what this distribution has: a candidate to install (trixie
        # has no g++-11, only packages that provide the name).
        # (The policy is read whole: grep -q ending the pipe early would
        # make apt-cache die of SIGPIPE, and pipefail call that "none".)
        local p policy have=()
        for p in "${optional[@]}"; do
                policy=$(apt-cache policy "$p" 2>/dev/null) || continue
                [[ $policy == *$'\n  Candidate: '[!\(]* ]] && have+=("$p")
        done
        [ ${#have[@]} -ne 0 ] || return 0
        echo "bootstrap: installing ${have[*]} (optional)"
        if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${have[@]}"; then
                echo "bootstrap: cannot install ${have[*]}; the Slurm tests (tests/slurm) and some real-CUDA checks will be skipped" >&2
        fi
        return 0
}

# Environment Modules 5 for tests/modules. Its Debian package conflicts
# with lmod's, so it is downloaded (apt-get download) and unpacked (dpkg -x)
# into .cache/environment-modules, where tests/meson.build tells the tests to
# look (CUDAMOD_EM_PREFIX overrides both). Nothing is run from it but
# modulecmd.tcl with tclsh. Done once: skipped when already unpacked.
em_prefix="${CUDAMOD_EM_PREFIX:-$PWD/.cache/environment-modules}"
provide_environment_modules() {
        local debs=.cache/debs deb tmp sudo=""
        if [ -n "$(find "$em_prefix" -name modulecmd.tcl -type f 2>/dev/null | head -n 1)" ]; then
                return 0
        fi
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        mkdir -p "$debs"
        deb=$(find "$debs" -name 'environment-modules_*.deb' | sort | tail -n 1)
        if [ -z "$deb" ]; then
                echo "bootstrap: downloading environment-modules (unpacked into $em_prefix, not installed: it conflicts with lmod)"
                if ! (cd "$debs" && apt-get download environment-modules) &&
                   ! { $sudo apt-get update -q && (cd "$debs" && apt-get download environment-modules); }; then
                        echo "bootstrap: cannot download environment-modules; the Environment Modules tests will be skipped" >&2
                        [ "${CUDAMOD_REQUIRE_MODULE_TOOLS:-}" != 1 ] || return 1
                        return 0
                fi
                deb=$(find "$debs" -name 'environment-modules_*.deb' | sort | tail -n 1)
        fi
        tmp="$em_prefix.tmp.$$"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        dpkg -x "$deb" "$tmp"
        rm -rf "$em_prefix"
        mv "$tmp" "$em_prefix"
        echo "bootstrap: Environment Modules unpacked: $(find "$em_prefix" -name modulecmd.tcl -type f | head -n 1)"
}

# Lmod 9.2 for tests/modules, beside Debian's Lmod (8.6 on bookworm, 8.7 on
# trixie): no Debian release ships Lmod 9, so it is built from the tarball
# in ../shared/vendor (see its README.md; sha256 checked; no network) into
# .cache/lmod-9.2 (CUDAMOD_LMOD9_PREFIX), where tests/meson.build points the
# lmod9 tests. A few seconds to half a minute; done once: skipped when a
# build of the same tarball is there (.cudamod-built holds its sha256). The
# prefix is written into Lmod's scripts, so it is built in place, and a
# build that did not finish has no .cudamod-built and is done again. Lua
# 5.3 runs it (liblua5.3-dev: its tcl2lua.so and lfs.so are built against
# the same Lua). Without the tarball, or when it does not build, the lmod9
# tests skip; with CUDAMOD_REQUIRE_MODULE_TOOLS=1 (CI) that is an error.
lmod9_prefix="${CUDAMOD_LMOD9_PREFIX:-$PWD/.cache/lmod-9.2}"
lmod9_tarball="${CUDAMOD_LMOD9_TARBALL:-../shared/vendor/Lmod-9.2.9-4-gd4d27f9c.tar.gz}"
lmod9_sha256=741735afeafbc2d2442da77907a5568c08bcf2951f8c11682e1276885d05483b
lmod9_unavailable() {
        if [ "${CUDAMOD_REQUIRE_MODULE_TOOLS:-}" = 1 ]; then
                echo "bootstrap: $*; CUDAMOD_REQUIRE_MODULE_TOOLS=1 needs Lmod 9.2" >&2
                return 1
        fi
        echo "bootstrap: $*; the Lmod 9.2 tests (lmod9) will be skipped" >&2
}
provide_lmod9() {
        local init="$lmod9_prefix/lmod/lmod/init/bash" tmp log dir version
        if [ -r "$init" ] && [ "$(cat "$lmod9_prefix/.cudamod-built" 2>/dev/null)" = "$lmod9_sha256" ]; then
                return 0
        fi
        if [ ! -r "$lmod9_tarball" ]; then
                lmod9_unavailable "no $lmod9_tarball"
                return
        fi
        if ! echo "$lmod9_sha256  $lmod9_tarball" | sha256sum -c --quiet - >/dev/null 2>&1; then
                lmod9_unavailable "$lmod9_tarball: sha256 is not $lmod9_sha256"
                return
        fi
        echo "bootstrap: building Lmod 9.2 from $lmod9_tarball into $lmod9_prefix"
        rm -rf "$lmod9_prefix"
        mkdir -p "$lmod9_prefix"
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-lmod9-XXXXXX")
        log="$lmod9_prefix/build.log"
        dir=$(basename "$lmod9_tarball" .tar.gz)
        if ! { tar xzf "$lmod9_tarball" -C "$tmp" &&
               (cd "$tmp/$dir" && ./configure --prefix="$lmod9_prefix" \
                        --with-lua=/usr/bin/lua5.3 --with-luac=/usr/bin/luac5.3 \
                        --with-lua_include=/usr/include/lua5.3 && make install); } >"$log" 2>&1; then
                rm -rf "$tmp"
                tail -n 20 "$log" >&2
                lmod9_unavailable "Lmod 9.2 did not build (log: $log)"
                return
        fi
        rm -rf "$tmp"
        # It must run: `module --version` in a clean shell.
        # shellcheck disable=SC2016
        version=$(env -i HOME=/nonexistent PATH=/usr/bin:/bin bash --noprofile --norc -c \
                '. "$1" && module --version' _ "$init" 2>&1 | sed -n 's/.*Version \([0-9][0-9.]*\).*/\1/p') || true
        if [ "${version%.*}" != 9.2 ]; then
                lmod9_unavailable "the Lmod built in $lmod9_prefix does not run (module --version: '$version')"
                return
        fi
        echo "$lmod9_sha256" >"$lmod9_prefix/.cudamod-built"
        echo "bootstrap: Lmod $version built: $init"
}

# The real NVIDIA packages of tests/real (CUDA 11.8 from bookworm's
# non-free, CUDA 12.4 and NCCL 2.22.3 from trixie's non-free and contrib,
# 2.6 GB, about 30 s here), downloaded once into .cache/real with a private
# apt state (tests/real/fetch.sh): nothing is installed and the system's
# apt sources are not changed. CUDAMOD_NO_REAL=1 leaves them out (tests/real
# then skips); CUDAMOD_REQUIRE_REAL=1 (CI) makes a failed download an error.
provide_real_cuda() {
        [ "${CUDAMOD_NO_REAL:-}" != 1 ] || return 0
        if ! tests/real/fetch.sh .cache/real bookworm trixie; then
                echo "bootstrap: cannot download the real NVIDIA packages; tests/real will be skipped" >&2
                [ "${CUDAMOD_REQUIRE_REAL:-}" != 1 ] || return 1
        fi
        return 0
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
        provide_environment_modules
        provide_lmod9
        provide_real_cuda
        ;;
run)
        install_missing
        build
        # The main job: modulefiles for what is installed on this machine,
        # with the built-in default config, into a directory of the build.
        out="$PWD/${BUILDDIR:-build}/modulefiles"
        "${BUILDDIR:-build}/src/cudamod" generate -o "$out"
        if [ -d "$out/Core" ]; then
                echo "bootstrap: modulefiles written; to use them: module use $out/Core"
        else
                echo "bootstrap: no CUDA, cuDNN or NCCL found, so no modulefiles; a tree to try: ${BUILDDIR:-build}/tests/mkfixture demo /tmp/demo && ${BUILDDIR:-build}/src/cudamod generate -o /tmp/demo/modulefiles /tmp/demo/sw"
        fi
        ;;
test)
        install_missing
        provide_environment_modules
        provide_lmod9
        provide_real_cuda
        build
        # shellcheck disable=SC2086
        meson test -C "${BUILDDIR:-build}" --print-errorlogs ${TEST_ARGS:-}
        ;;
*)
        echo "usage: $0 [run|test|--deps-only]" >&2
        exit 2
        ;;
esac
