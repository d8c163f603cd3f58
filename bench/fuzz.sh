#!/usr/bin/env bash
# bench/fuzz.sh TARGET SECONDS: run one libFuzzer target (config, render,
# version, elf, sandbox, escape, modulefile, show) for SECONDS under ASan+UBSan, starting
# from its committed seed corpus (tests/fuzz/corpus/TARGET) and the inputs
# it found before (BUILD/fuzz-corpus/TARGET, kept between runs). Builds
# BUILD (default build-fuzz; FUZZ_BUILDDIR overrides) with clang first.
# Prints libFuzzer's final statistics and a summary line:
#   fuzz TARGET: N executions in S s (wall), cov C, ft F, corpus K inputs
# and exits non-zero when the target crashed, leaked, timed out or ran out
# of memory; the input is then in BUILD/fuzz-artifacts/, to be copied
# into tests/fuzz/regressions/TARGET once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
        echo "usage: bench/fuzz.sh TARGET SECONDS" >&2
        exit 2
fi
target=$1 seconds=$2
build=${FUZZ_BUILDDIR:-build-fuzz}
if [ ! -f "tests/fuzz/fuzz-$target.c" ]; then
        echo "bench/fuzz.sh: no target '$target' (tests/fuzz/fuzz-$target.c)" >&2
        exit 2
fi
if [ ! -f "$build/build.ninja" ]; then
        CC=clang meson setup "$build" -Dfuzzers=true -Dtests=false \
                -Db_sanitize=address,undefined -Db_lundef=false \
                --buildtype=debugoptimized >/dev/null
fi
ninja -C "$build" "tests/fuzz/fuzz-$target" >/dev/null

work="$build/fuzz-corpus/$target" artifacts="$build/fuzz-artifacts"
mkdir -p "$work" "$artifacts"
log="$build/fuzz-$target.log"
# The sandbox also starts from the generated reference trees (read
# recursively), rather than from copies of them.
extra_seeds=()
[ "$target" != sandbox ] || extra_seeds=(modulefiles/lua-flat modulefiles/lua-hierarchical)
rc=0 start=$(date +%s)
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        "$build/tests/fuzz/fuzz-$target" -max_total_time="$seconds" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/$target-" \
        "$work" "tests/fuzz/corpus/$target" "${extra_seeds[@]}" >"$log" 2>&1 || rc=$?
elapsed=$(($(date +%s) - start))
grep -E '^stat::|ERROR|SUMMARY|^fuzz-|Test unit written' "$log" || true
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
echo "fuzz $target: ${execs:-?} executions in $elapsed s, cov ${cov:-?}, ft ${ft:-?}," \
        "corpus $(find "$work" -type f | wc -l) inputs$([ "$rc" -eq 0 ] || echo ", FAILED (exit $rc, log $log)")"
exit "$rc"
