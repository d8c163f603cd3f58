# shellcheck shell=bash
# tests/pytorch/lib.sh: what the PyTorch tests share, sourced first:
# tests/modules/lib.sh, `here` (the tests' directory), `real`
# (CUDAMOD_REAL_DIR), skip(), and the skip outside Debian trixie, whatever
# CUDAMOD_REQUIRE_REAL says (.ci/run exports it for the bookworm passes
# too; PyTorch's source package and torch are trixie's).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../modules/lib.sh
. "$here/../modules/lib.sh"

# A missing prerequisite: a skip, a failure under CUDAMOD_REQUIRE_REAL=1.
skip() {
        say "SKIP: $*"
        [ "${CUDAMOD_REQUIRE_REAL:-}" = 1 ] && die "CUDAMOD_REQUIRE_REAL=1: $*"
        exit 77
}
if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" != trixie ]; then
        say "SKIP: not Debian trixie (CI's trixie pass runs this test)"
        exit 77
fi
# shellcheck disable=SC2034 # used by the scripts that source this
real=${CUDAMOD_REAL_DIR:-}
