# tests/real/real.sh: cudamod on real NVIDIA software, without a GPU.
#   - CUDA 11.8 from Debian bookworm's non-free, laid out as a site
#     installs it (fetch.sh, unpack.sh): its runtime cannot tell its version
#     without a driver, and its nvcc refuses gcc > 11;
#   - CUDA 12.4 and NCCL 2.22.3 from trixie's non-free and contrib (NCCL
#     needs glibc 2.38: checked only where the C library is that new);
#   - /usr/local/cuda-13.0 where the machine has it.
# (Debian trixie's own MAGMA 2.9 for CUDA 12, fetched and unpacked with
# them as a trixie system has it, is magma.sh's: scan, its module under
# both Lmods, doctor --build, the probe's run-time check.)
# Each is scanned, its modules are generated (Lua and Tcl), loaded with the
# real Lmod and Environment Modules, a .cu program is built with nvcc and
# started with each CUDA module alone, and validate must report no false
# failure and no false pass: the checks that can run here (closure, build,
# nvcc, cmake, run) pass, and where nvcc cannot build (a host compiler the
# toolkit refuses; CUDA 12's math headers on glibc 2.41) validate fails
# the module, saying why.
#
# Environment: CUDAMOD_REAL_DIR (where fetch.sh put the packages; unpacked
# below it once), CUDAMOD_REQUIRE_REAL=1 (CI): nothing to test is a
# failure instead of a skip (77).
# shellcheck source=../modules/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../modules/lib.sh"

real=${CUDAMOD_REAL_DIR:-}
skip() {
        say "SKIP: $*"
        [ "${CUDAMOD_REQUIRE_REAL:-}" = 1 ] && die "CUDAMOD_REQUIRE_REAL=1: $*"
        exit 77
}
need lmod em
command -v dpkg-deb >/dev/null || skip "no dpkg-deb to unpack the packages"

# --- what there is to test ------------------------------------------------------
apps=
if [ -n "$real" ]; then
        apps=$real/apps
        for suite in bookworm trixie; do
                [ -f "$real/debs-$suite/.complete" ] || continue
                sh "$MT_LIB_DIR/../real/unpack.sh" "$real/debs-$suite" "$apps" ||
                        die "unpack.sh $real/debs-$suite failed"
        done
fi
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
glibc_at_least() { [ "$(printf '%s\n%s\n' "$1" "$glibc" | sort -V | head -n 1)" = "$1" ]; }
prefixes=()
for p in "$apps/cuda/11.8" "$apps/cuda/12.4"; do
        [ -n "$apps" ] && [ -x "$p/bin/nvcc" ] && prefixes+=("$p")
done
[ -x /usr/local/cuda-13.0/bin/nvcc ] && prefixes+=(/usr/local/cuda-13.0)
nccl=
if [ -n "$apps" ] && [ -e "$apps/nccl/2.22.3/lib/libnccl.so.2" ] && glibc_at_least 2.38; then
        nccl=$apps/nccl/2.22.3
fi
[ ${#prefixes[@]} -gt 0 ] || skip "no real CUDA here (run tests/real/fetch.sh DIR bookworm trixie; set CUDAMOD_REAL_DIR=DIR)"
say "CUDA prefixes: ${prefixes[*]}; NCCL: ${nccl:-none (glibc $glibc)}"

# The accepted host compiler for a CUDA major when the system's gcc is
# refused: g++-11 for 11.x, g++-12 for 12.x (accepted from 12.0), where
# installed. The config gives it as host_compiler.
gcc_major=$(gcc -dumpversion | cut -d. -f1)
cfg=$MT_TMP/site.yaml
{
        echo "defaults: {cuda: latest, cudnn: latest, nccl: latest}"
        compilers=
        for m in 11 12; do
                [ -x "/usr/bin/g++-$m" ] && compilers+="${compilers:+, }\"$m\": /usr/bin/g++-$m"
        done
        [ -z "$compilers" ] || echo "host_compiler: {$compilers}"
} >"$cfg"
max_gcc() { # the CUDA X.Y's limit, from its own header
        sed -n 's/^#if __GNUC__ > \([0-9]*\).*/\1/p' "$1/include/crt/host_config.h" | head -n 1
}
# What building CUDA code with the toolkit at $1 (X.Y) does here, which
# validate must report, no better and no worse:
#   refused  its limit is below the system's gcc and no g++ it accepts is
#            given (11.8 on trixie, whose gcc is 14 and which has no g++-11)
#   glibc    glibc 2.41 or newer declares C23 math functions (cospi, ...)
#            noexcept and CUDA 12's crt/math_functions.h does not: nvcc's
#            host pass stops whatever the compiler (12.4 on trixie;
#            13.0's headers match)
#   builds   otherwise
build_outcome() {
        local p=$1 v=$2 major=${2%%.*}
        if [ "$gcc_major" -gt "$(max_gcc "$p")" ] && [ ! -x "/usr/bin/g++-$major" ]; then
                echo refused
        elif glibc_at_least 2.41 && [ "$major" -lt 13 ]; then
                echo glibc
        else
                echo builds
        fi
}

# --- scan -------------------------------------------------------------------------
for p in "${prefixes[@]}"; do
        json=$(run_cudamod scan --json "$p") || fail "scan $p failed"
        v=$(basename "$p" | sed 's/^cuda-//')
        printf '%s' "$json" | grep -q "\"version\": *\"$v\"" ||
                fail "scan $p: version $v not reported: ${json:0:400}"
        printf '%s' "$json" | grep -q '"cudart"' || fail "scan $p: no cudart component: ${json:0:400}"
        printf '%s' "$json" | grep -q '"problems": *\[\]' || fail "scan $p: problems: ${json:0:600}"
done

# --- generate, load, build and run a .cu program with each module alone ------
cat >"$MT_TMP/probe.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void touch(int *p) { *p = 1; }
int main()
{
        int n = -1, v = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        cudaRuntimeGetVersion(&v);
        std::printf("built-and-started devices=%d error=%d\n", n, (int)e);
        return 0;
}
EOF
roots=("${prefixes[@]}")
[ -n "$nccl" ] && roots+=("$nccl")
for tool in lmod em; do
        out=$MT_TMP/mf-$tool
        if ! run_cudamod --config "$cfg" generate -o "$out" --format "$(tool_format "$tool")" "${roots[@]}" \
                >"$out.log" 2>&1; then
                fail "$tool: generate failed: $(cat "$out.log")"
                continue
        fi
        for p in "${prefixes[@]}"; do
                v=$(basename "$p" | sed 's/^cuda-//')
                major=${v%%.*}
                dir=$MT_TMP/s-$tool-$v
                session "$tool" "$dir" "$out/Core" <<EOF
step load load cuda/$v
run nvcc nvcc -cudart shared -o "$dir/probe" "$MT_TMP/probe.cu"
run start "$dir/probe"
run ldd ldd "$dir/probe"
EOF
                rc_is "$dir/load" 0 || { fail "$tool: module load cuda/$v: $(cat "$dir/load.out")"; continue; }
                env_value "$dir/load.env" PATH
                [[ $VAL == "$p/bin:"* ]] || fail "$tool: cuda/$v: PATH does not start with $p/bin: $VAL"
                outcome=$(build_outcome "$p" "$v")
                case $outcome in
                refused | glibc)
                        # nvcc must fail, for that reason; validate must too (below).
                        rc_is "$dir/nvcc" 0 && fail "$tool: cuda/$v: nvcc built, although $outcome was expected"
                        [ "$outcome" = refused ] && want="unsupported GNU version" || want="exception specification is incompatible"
                        grep -q "$want" "$dir/nvcc.out" ||
                                fail "$tool: cuda/$v: nvcc did not fail with '$want': $(head -c 800 "$dir/nvcc.out")"
                        say "$tool: cuda/$v: nvcc fails here ($outcome), as expected"
                        continue
                        ;;
                esac
                rc_is "$dir/nvcc" 0 || { fail "$tool: cuda/$v: nvcc failed: $(head -c 800 "$dir/nvcc.out")"; continue; }
                rc_is "$dir/start" 0 || fail "$tool: cuda/$v: the program did not start: $(cat "$dir/start.out")"
                grep -q "built-and-started devices=-1 error=\(35\|100\)" "$dir/start.out" ||
                        grep -q "built-and-started devices=[1-9]" "$dir/start.out" ||
                        fail "$tool: cuda/$v: unexpected answer: $(cat "$dir/start.out")"
                grep -q "libcudart.so.$major.* => $p/" "$dir/ldd.out" ||
                        fail "$tool: cuda/$v: the program does not load the module's libcudart: $(cat "$dir/ldd.out")"
        done
done

# --- validate: no false failure, no false pass ----------------------------------
out=$MT_TMP/mf-lmod
start=$(date +%s%N)
rc=0
run_cudamod --config "$cfg" validate --json --modulepath "$out/Core" >"$MT_TMP/validate.json" 2>"$MT_TMP/validate.err" || rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
n=$(grep -o '"module": "' "$MT_TMP/validate.json" | wc -l)
say "validate of $n modules (${#prefixes[@]} cuda modules with the nvcc and cmake checks): $elapsed ms (exit $rc)"
outcomes=()
for p in "${prefixes[@]}"; do
        v=$(basename "$p" | sed 's/^cuda-//')
        outcomes+=("$p=$(build_outcome "$p" "$v")")
done
python3 - "$MT_TMP/validate.json" "${outcomes[@]}" <<'EOF' || fail "validate: $(cat "$MT_TMP/validate.err")"
import json, os, re, shutil, sys

doc = json.load(open(sys.argv[1]))
mods = {m["module"]: m for m in doc["modules"]}
bad = []

def check(m, cid):
    for c in m["checks"]:
        if c["id"] == cid:
            return c
    bad.append(f"{m['module']}: no check {cid}")
    return {"status": "?", "message": ""}

for arg in sys.argv[2:]:
    p, outcome = arg.rsplit("=", 1)
    v = os.path.basename(p).replace("cuda-", "")
    major = v.split(".")[0]
    m = mods.get(f"cuda/{v}")
    if not m:
        bad.append(f"no module cuda/{v} in {sorted(mods)}")
        continue
    limit = int(re.search(r"^#if __GNUC__ > (\d+)", open(f"{p}/include/crt/host_config.h").read(), re.M).group(1))
    code = int(major) * 1000 + int(v.split(".")[1]) * 10
    for cid in ("syntax", "paths", "closure", "build"):
        c = check(m, cid)
        if c["status"] != "pass":
            bad.append(f"cuda/{v}: {cid} {c['status']}: {c['message']}")
    run = check(m, "run")
    if run["status"] != "pass" or f"({code})" not in run["message"]:
        bad.append(f"cuda/{v}: run {run['status']}, not pass with {code}: {run['message']}")
    nvcc = check(m, "nvcc")
    if outcome == "refused":
        if nvcc["status"] != "fail" or f"up to {limit}" not in nvcc["message"] or "host_compiler" not in nvcc["message"]:
            bad.append(f"cuda/{v}: nvcc {nvcc['status']} (limit gcc {limit}), not a failure naming the limit and host_compiler: {nvcc['message']}")
    elif outcome == "glibc":
        if nvcc["status"] != "fail" or "no host compiler helps" not in nvcc["message"] or "cospi" not in nvcc["message"]:
            bad.append(f"cuda/{v}: nvcc {nvcc['status']}, not a failure quoting nvcc and saying why: {nvcc['message']}")
    if outcome != "builds":
        if m["status"] != "fail":
            bad.append(f"cuda/{v}: status {m['status']} although nvcc cannot build here ({outcome})")
    else:
        if nvcc["status"] != "pass":
            bad.append(f"cuda/{v}: nvcc {nvcc['status']}: {nvcc['message']}")
        cm = check(m, "cmake")
        want = "pass" if shutil.which("cmake") else "skip"
        if cm["status"] != want or (want == "pass" and p not in cm["message"]):
            bad.append(f"cuda/{v}: cmake {cm['status']}, not {want} naming {p}: {cm['message']}")
        if m["status"] != "pass":
            bad.append(f"cuda/{v}: status {m['status']}, not pass")
for name, m in mods.items():
    if name.startswith("nccl/"):
        x, y, z = (int(n) for n in name.split("/")[1].split(".")[:3])
        code = f"({x * 10000 + y * 100 + z})"
        run = check(m, "run")
        if run["status"] != "pass" or code not in run["message"]:
            bad.append(f"{name}: run {run['status']}: {run['message']}")
        if m["status"] != "pass":
            bad.append(f"{name}: status {m['status']}")
for b in bad:
    print("validate:", b)
sys.exit(1 if bad else 0)
EOF
mt_finish
