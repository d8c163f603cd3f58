# shellcheck shell=bash
# tests/valgrind.sh: sourced first by every script test (bash). Under
# `meson test --setup=valgrind` meson runs the test's program, bash, under
# valgrind: that would check bash, which leaks. So the script re-executes
# natively (valgrind does not follow an exec with --trace-children=no) as
# a child of this file run as a program, with CUDAMOD_BIN pointing at
# tests/valgrind-cudamod.sh: every cudamod the test runs is checked
# instead. When the test ends, a valgrind report of any run fails it (even
# a run whose exit status the test did not look at). Elsewhere, and in the
# re-executed script, sourcing this does nothing.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
        # Run as a program: valgrind.sh SCRIPT ARGS...
        script=$1
        shift
        rc=0
        bash "$script" "$@" || rc=$?
        runs=$(find "$CUDAMOD_VALGRIND_LOGS" -name 'cudamod.*.log' | wc -l)
        bad=0
        for log in "$CUDAMOD_VALGRIND_LOGS"/cudamod.*.log; do
                # Errors and leaks are the "==PID==" lines; "--PID--" ones
                # are valgrind's own notes (an unknown syscall, such as
                # pidfd_open on valgrind 3.19, which cudamod falls back from).
                grep -q '^==[0-9]*==' "$log" 2>/dev/null || continue
                echo "valgrind: a cudamod run had errors or leaks ($log):" >&2
                cat "$log" >&2
                bad=1
        done
        echo "valgrind: $runs cudamod runs checked$([ $bad = 0 ] && echo ", no error, no leak")" >&2
        rm -rf "$CUDAMOD_VALGRIND_LOGS"
        if [ $bad = 1 ] && { [ $rc = 0 ] || [ $rc = 77 ]; }; then
                rc=1
        fi
        exit $rc
elif [ "${CUDAMOD_UNDER_VALGRIND:-}" = 1 ] && [ -z "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
        # A test that runs another cudamod (an installed one) sets
        # CUDAMOD_VALGRIND_REAL for that call (see tests/install.sh).
        CUDAMOD_VALGRIND_REAL=${CUDAMOD_BIN:-}
        case $CUDAMOD_VALGRIND_REAL in
        */* | "") ;;
        *) CUDAMOD_VALGRIND_REAL=$(command -v "$CUDAMOD_VALGRIND_REAL") ;;
        esac
        case $CUDAMOD_VALGRIND_REAL in
        /* | "") ;;
        *) CUDAMOD_VALGRIND_REAL=$PWD/$CUDAMOD_VALGRIND_REAL ;; # the test may cd
        esac
        CUDAMOD_VALGRIND_WRAPPER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/valgrind-cudamod.sh
        CUDAMOD_VALGRIND_LOGS=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-valgrind.XXXXXX")
        chmod 1777 "$CUDAMOD_VALGRIND_LOGS" # tests run cudamod as another user too
        export CUDAMOD_VALGRIND_REAL CUDAMOD_VALGRIND_WRAPPER CUDAMOD_VALGRIND_LOGS
        # CUDAMOD_BIN: a script that carries all of this itself, for tests
        # that run cudamod in a cleared environment (a module session).
        CUDAMOD_BIN=$CUDAMOD_VALGRIND_LOGS/cudamod
        {
                echo "#!$(command -v bash)"
                # shellcheck disable=SC2016 # $PATH is the generated script's
                printf 'export PATH=%q:"$PATH" CUDAMOD_VALGRIND_REAL=%q CUDAMOD_VALGRIND_LOGS=%q\n' \
                        "$(dirname "$(command -v valgrind)")" "$CUDAMOD_VALGRIND_REAL" "$CUDAMOD_VALGRIND_LOGS"
                printf 'exec %q "$@"\n' "$CUDAMOD_VALGRIND_WRAPPER"
        } >"$CUDAMOD_BIN"
        chmod 755 "$CUDAMOD_BIN"
        export CUDAMOD_BIN
        exec bash "${BASH_SOURCE[0]}" "$0" "$@"
fi
