#!/usr/bin/env bash
# tests/real/nvcc.sh: validate's nvcc and cmake checks on real NVIDIA
# toolkits (ISSUE 16, finding 2), with the built cudamod:
#   - /usr/local/cuda-13.0 (where present): generate, validate: nvcc and
#     cmake pass (a .cu program built, linked with the module's cudart and
#     started; CMake found this toolkit, not another);
#   - CUDA 11.8 from Debian bookworm non-free (where present: the prefix in
#     CUDAMOD_REAL_CUDA_11_8, or the packages fetch.sh put in
#     CUDAMOD_REAL_DIR, laid out by unpack.sh): with the system gcc 12 the nvcc check
#     fails naming gcc 12 and the limit 11 (and so does cmake: CMake's
#     compiler check stops at the same #error); with host_compiler
#     {"11": /usr/bin/g++-11} (where g++-11 is installed) both pass.
# Exit 77 when neither toolkit is here. Timings per module go to stdout.
source "$(dirname "$0")/../valgrind.sh"
set -euo pipefail
export LC_ALL=C

: "${CUDAMOD_BIN:?CUDAMOD_BIN is not set (run through meson test)}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-real-nvcc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0 ran=0
fail() { echo "real-nvcc: FAIL: $*"; fails=$((fails + 1)); }
say() { echo "real-nvcc: $*"; }

# check_of JSON ID: "STATUS MESSAGE" of the first module's check ID.
check_of() {
        python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["modules"][0]["checks"]:
    if c["id"] == sys.argv[2]:
        print(c["status"], c["message"].replace("\n", " | "))
        break
else:
    print("missing")
EOF
}

# validate_one NAME CONFIG PREFIX: generate a module for PREFIX under
# CONFIG and validate it (JSON in $tmp/NAME.json); prints the seconds
# validate took.
validate_one() {
        local name=$1 cfg=$2 prefix=$3 out=$tmp/$1 t0 t1
        "$CUDAMOD_BIN" --config "$cfg" generate -o "$out" "$prefix" >"$tmp/$name.generate.log" 2>&1 ||
                { cat "$tmp/$name.generate.log"; fail "$name: generate failed"; return 1; }
        t0=$(date +%s.%N)
        "$CUDAMOD_BIN" validate --json --modulepath "$out/Core" cuda >"$tmp/$name.json" 2>"$tmp/$name.err" || true
        t1=$(date +%s.%N)
        say "$name: validate of the cuda module took $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s"
}

expect() { # NAME ID STATUS WORDS...
        local name=$1 id=$2 want=$3 got
        shift 3
        got=$(check_of "$tmp/$name.json" "$id")
        [ "${got%% *}" = "$want" ] || { fail "$name: $id is '${got%% *}', expected $want: ${got#* }"; return; }
        for w in "$@"; do
                [[ $got == *"$w"* ]] || fail "$name: $id: '$w' not in: ${got#* }"
        done
}

printf '{}\n' >"$tmp/empty.yaml"
have_cmake=0
command -v cmake >/dev/null && have_cmake=1

if [ -x /usr/local/cuda-13.0/bin/nvcc ]; then
        ran=1
        validate_one cuda13 "$tmp/empty.yaml" /usr/local/cuda-13.0
        expect cuda13 nvcc pass "/usr/local/cuda-13.0/bin/nvcc -cudart shared" "cudaGetDeviceCount" \
                "'/usr/local/cuda-13.0/lib/libcudart.so.13'"
        if [ $have_cmake = 1 ]; then
                expect cuda13 cmake pass "nvcc '/usr/local/cuda-13.0/bin/nvcc' 13.0" "cudart '/usr/local/cuda-13.0/"
        else
                expect cuda13 cmake skip "no cmake"
        fi
else
        say "no /usr/local/cuda-13.0: its part skipped"
fi

p118=${CUDAMOD_REAL_CUDA_11_8:-}
real=${CUDAMOD_REAL_DIR:-}
if [ -z "$p118" ] && [ -n "$real" ] && [ -f "$real/debs-bookworm/.complete" ]; then
        rc=0
        sh "$here/unpack.sh" "$real/debs-bookworm" "$real/apps" || rc=$?
        if [ $rc = 0 ]; then
                p118=$real/apps/cuda/11.8
        elif [ $rc != 77 ]; then
                fail "unpack.sh failed ($rc)"
        fi
fi
if [ -n "$p118" ] && [ -x "$p118/bin/nvcc" ]; then
        ran=1
        gcc_major=$(gcc -dumpversion | cut -d. -f1)
        validate_one cuda118 "$tmp/empty.yaml" "$p118"
        if [ "$gcc_major" -gt 11 ]; then
                expect cuda118 nvcc fail "is GCC $gcc_major." "accepts GCC up to 11" 'host_compiler: {"11":' \
                        "unsupported GNU version! gcc versions later than 11 are not supported"
                [ $have_cmake = 0 ] || expect cuda118 cmake fail "enable_language(CUDA)" "the toolkit refuses the host compiler"
        fi
        if [ -x /usr/bin/g++-11 ]; then
                printf 'host_compiler:\n  "11": /usr/bin/g++-11\n' >"$tmp/gcc11.yaml"
                validate_one cuda118-gcc11 "$tmp/gcc11.yaml" "$p118"
                expect cuda118-gcc11 nvcc pass "'/usr/bin/g++-11' (-ccbin in NVCC_PREPEND_FLAGS) is GCC 11." \
                        "cudaGetDeviceCount returned 35 cudaErrorInsufficientDriver" "$p118/lib64/libcudart.so.11.0"
                [ $have_cmake = 0 ] || expect cuda118-gcc11 cmake pass "CUDAToolkit 11.8" "host compiler '/usr/bin/g++-11'"
                # A CUDACXX left pointing at /usr/local/cuda (13.0 here):
                # CMake would build with that toolkit, not the module's: the
                # nvcc and cmake checks refuse it, naming it.
                if [ $have_cmake = 1 ] && [ -x /usr/local/cuda/bin/nvcc ]; then
                        printf 'host_compiler:\n  "11": /usr/bin/g++-11\nenv: { cuda: { setenv: { CUDACXX: /usr/local/cuda/bin/nvcc } } }\n' \
                                >"$tmp/stale.yaml"
                        validate_one cuda118-stale "$tmp/stale.yaml" "$p118"
                        expect cuda118-stale cmake fail "refused: the load sets CUDACXX='/usr/local/cuda/bin/nvcc', which is not an nvcc of the module's toolkit (below CUDA_HOME '$p118')"
                fi
        else
                say "no /usr/bin/g++-11: the host_compiler pass on CUDA 11.8 skipped"
        fi
else
        say "no CUDA 11.8 (set CUDAMOD_REAL_CUDA_11_8, or run tests/real/fetch.sh DIR bookworm and set CUDAMOD_REAL_DIR=DIR): its part skipped"
fi

if [ $ran = 0 ]; then
        say "no real CUDA toolkit here: skipped"
        [ "${CUDAMOD_REQUIRE_REAL:-}" != 1 ] || { fail "CUDAMOD_REQUIRE_REAL=1 and no real CUDA toolkit"; exit 1; }
        exit 77
fi
[ -n "$p118" ] || [ "${CUDAMOD_REQUIRE_REAL:-}" != 1 ] || fail "CUDAMOD_REQUIRE_REAL=1 and no CUDA 11.8"
[ $fails = 0 ] || exit 1
say "all assertions passed"
