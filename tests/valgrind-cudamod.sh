#!/usr/bin/env bash
# tests/valgrind-cudamod.sh: cudamod under valgrind, for the script tests
# under `meson test --setup=valgrind` (tests/valgrind.sh points CUDAMOD_BIN
# here). exec, so the process a test starts, signals or waits for is the
# one valgrind runs cudamod in. Any error or definite/indirect leak makes
# the run exit 99 and leaves a report in CUDAMOD_VALGRIND_LOGS, which
# tests/valgrind.sh prints and fails on when the test ends.
# Debian's /usr/bin/valgrind is a script that appends /usr/lib/debug to
# LD_LIBRARY_PATH, which show, validate and doctor read: valgrind.bin, the
# program itself, when it is there.
vg=$(command -v valgrind.bin || command -v valgrind)
exec "$vg" --quiet --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --track-fds=no --trace-children=no \
        --log-file="${CUDAMOD_VALGRIND_LOGS:?}/cudamod.%p.log" \
        "${CUDAMOD_VALGRIND_REAL:?}" "$@"
