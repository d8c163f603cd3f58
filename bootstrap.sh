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
          lmod lua5.1 tcl python3 bash-completion)
# g++: validate's build check compiles C++ for cuSPARSELt and NVSHMEM
# (tests/test-validate-probe.c); strace: tests/readers checks what is opened;
# procps: ps, pgrep, pkill for the Slurm and stress tests (a minimal system has none).
# scdoc builds the man pages (doc/); without it they are not built.
# bash-completion is what completion/test-completion.sh drives.
# lmod, lua5.1 (luac5.1) and tcl (tclsh) are for the module-tool tests
# (tests/modules); so is Environment Modules, which is unpacked, not
# installed: see provide_environment_modules. python3 builds the big
# synthetic trees of tests/stress and bench/.

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
