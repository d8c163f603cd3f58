#!/usr/bin/env bash
# tests/real/magma.sh: Debian trixie's own MAGMA 2.9 for CUDA 12 (libmagma2,
# libmagma-sparse2, libmagma-dev from contrib; fetch.sh), laid out by
# unpack.sh as a trixie machine has it (APPS/trixie/usr: /usr/lib/libmagma.so.2,
# /usr/include/magma*.h, /usr/lib/pkgconfig/magma.pc; its BLAS and LAPACK
# in the multiarch directory) beside the real CUDA 12.4 (APPS/cuda/12.4):
#   - scan finds it: version 2.9.0, CUDA 12 from its DT_NEEDED
#     libcudart.so.12, layout system, no problem;
#   - its module (hierarchical, under CUDA/12, with pytorch.build_env)
#     loads after cuda/12.4 with Debian's Lmod and Lmod 9.2, and sets
#     MAGMA_HOME (the only variable PyTorch's FindMAGMA reads) and
#     USE_MAGMA=1, and prepends nothing (a system install's directories
#     are the loader's and the compiler's);
#   - doctor --build in that environment finds magma.h and libmagma.so
#     through MAGMA_HOME, 2.9.0 for CUDA 12, with no finding about MAGMA;
#     and with nothing but cuda loaded, the root as the system root
#     (CUDAMOD_TEST_ROOT), through the default /usr prefix as FindMAGMA
#     does (the verdict on that: one marked place below);
#   - the seed's run-time check: cudamod-probe, as validate starts it for a
#     magma module, loads libmagma.so with the modules' LD_LIBRARY_PATH
#     (cuda/12.4's libcudart, libcublas, libcusparse) and the root's own
#     library directories in place of the loader's defaults, and reads
#     2.9.0 from magma_version. libmagma.so.2 needs glibc 2.38: on an
#     older C library (bookworm) that check is skipped, saying so; the
#     trixie pass runs it. validate itself leaves a system install's
#     module unchecked (nothing of it on LD_LIBRARY_PATH): asserted, so
#     that a change there is seen.
#
# Environment: as real.sh (CUDAMOD_REAL_DIR, CUDAMOD_REQUIRE_REAL), and
# CUDAMOD_PROBE (the built cudamod-probe).
# shellcheck source=../modules/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../modules/lib.sh"

real=${CUDAMOD_REAL_DIR:-}
skip() {
        say "SKIP: $*"
        [ "${CUDAMOD_REQUIRE_REAL:-}" = 1 ] && die "CUDAMOD_REQUIRE_REAL=1: $*"
        exit 77
}
need lmods
command -v dpkg-deb >/dev/null || skip "no dpkg-deb to unpack the packages"
command -v python3 >/dev/null || skip "no python3 to read the JSON"
[ -n "$real" ] && [ -f "$real/debs-trixie/.complete" ] ||
        skip "no trixie packages (run tests/real/fetch.sh DIR trixie; set CUDAMOD_REAL_DIR=DIR)"
[ -f "$(echo "$real"/debs-trixie/libmagma2_*.deb)" ] ||
        skip "no Debian MAGMA in $real/debs-trixie (fetched before it was added: run tests/real/fetch.sh DIR trixie again)"
apps=$real/apps
sh "$MT_LIB_DIR/../real/unpack.sh" "$real/debs-trixie" "$apps" || die "unpack.sh $real/debs-trixie failed"
cuda=$apps/cuda/12.4 root=$apps/trixie usr=$apps/trixie/usr
[ -e "$cuda/lib64/libcudart.so.12" ] && [ -e "$usr/lib/libmagma.so.2" ] || die "unpack.sh made no CUDA 12.4 or MAGMA"
glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
glibc_at_least() { [ "$(printf '%s\n%s\n' "$1" "$glibc" | sort -V | head -n 1)" = "$1" ]; }

# --- scan ---------------------------------------------------------------------------
run_cudamod scan --json "$root" >"$MT_TMP/scan.json" 2>"$MT_TMP/scan.err" || fail "scan $root: $(cat "$MT_TMP/scan.err")"
python3 - "$MT_TMP/scan.json" "$usr" <<'EOF' || fail "scan of Debian's MAGMA: $(head -c 1500 "$MT_TMP/scan.json")"
import json, sys

ins = json.load(open(sys.argv[1]))["installs"]
usr = sys.argv[2]
want = {"component": "magma", "cuda_major": 12, "layout": "system", "prefix": usr, "lib_dir": usr + "/lib",
        "include_dir": usr + "/include", "static_only": False, "problems": []}
if len(ins) != 1:
    sys.exit(f"{len(ins)} installs, want MAGMA alone")
bad = [f"{k}: {ins[0].get(k)!r}, want {v!r}" for k, v in want.items() if ins[0].get(k) != v]
if not ins[0]["version"].startswith("2.9."):
    bad.append(f"version {ins[0]['version']!r}, want 2.9.x")
for b in bad:
    print("scan:", b)
sys.exit(1 if bad else 0)
EOF

# --- its module, loaded with each Lmod -----------------------------------------------
cfg=$MT_TMP/site.yaml
echo "pytorch: {build_env: true}" >"$cfg"
out=$MT_TMP/mf
run_cudamod --config "$cfg" generate -o "$out" --format lua --layout hierarchical "$cuda" "$root" \
        >"$out.log" 2>&1 || die "generate: $(cat "$out.log")"
[ -f "$out/CUDA/12/magma/2.9.0.lua" ] || fail "no CUDA/12/magma/2.9.0.lua: $(cat "$out.log")"
n=0
while IFS=$'\t' read -r v init; do
        n=$((n + 1))
        dir=$MT_TMP/lmod-$v
        CUDAMOD_LMOD_INIT=$init session lmod "$dir" "$out/Core" <<'EOF'
step load load cuda/12.4 magma/2.9.0
EOF
        rc_is "$dir/load" 0 || { fail "Lmod $v: module load cuda/12.4 magma/2.9.0: $(cat "$dir/load.out")"; continue; }
        env_value "$dir/load.env" MAGMA_HOME || true
        [ "$VAL" = "$usr" ] || fail "Lmod $v: MAGMA_HOME '$VAL', want $usr"
        [ -f "$VAL/include/magma.h" ] && [ -e "$VAL/lib/libmagma.so" ] ||
                fail "Lmod $v: no include/magma.h and lib/libmagma.so in MAGMA_HOME '$VAL' (FindMAGMA's places)"
        env_value "$dir/load.env" USE_MAGMA || true
        [ "$VAL" = 1 ] || fail "Lmod $v: USE_MAGMA '$VAL', want 1"
        for var in LD_LIBRARY_PATH LIBRARY_PATH CPATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH; do
                env_value "$dir/load.env" "$var" || true
                [[ ":$VAL:" != *":$root/"* ]] || fail "Lmod $v: $var has a directory of the system install: $VAL"
        done
        env_value "$dir/load.env" LD_LIBRARY_PATH || true
        [[ ":$VAL:" == *":$cuda/lib64:"* ]] || fail "Lmod $v: LD_LIBRARY_PATH lacks cuda/12.4's lib64: $VAL"
        cp "$dir/load.env" "$MT_TMP/load.env"
        say "Lmod $v: cuda/12.4 magma/2.9.0 loaded"
done < <(lmod_inits)
[ "$n" -ge 1 ] || die "no Lmod"
[ -f "$MT_TMP/load.env" ] || die "no module environment to go on with"

# The environment the modules made, as NAME=VALUE lines for env -i.
mapfile -d '' modenv <"$MT_TMP/load.env"

# --- doctor --build ------------------------------------------------------------------
# USE_CUDNN=0: no cuDNN for CUDA 12 here, and the host's /usr/local/cuda
# may hold CUDA 13's; MAGMA is what this test looks at.
rc=0
env -i "${modenv[@]}" HOME="$MT_TMP" USE_CUDNN=0 "$CUDAMOD_BIN" doctor --build --json \
        >"$MT_TMP/build.json" 2>"$MT_TMP/build.err" || rc=$?
env -i "${modenv[@]}" HOME="$MT_TMP" USE_CUDNN=0 "$CUDAMOD_BIN" doctor --build >"$MT_TMP/build.txt" 2>&1 || true
say "doctor --build with cuda/12.4 magma/2.9.0 (exit $rc):"
grep -i -A2 magma "$MT_TMP/build.txt"
[ -s "$MT_TMP/build.json" ] || fail "doctor --build wrote no JSON (exit $rc): $(cat "$MT_TMP/build.err")"
# default: whether the verdict expects the default places (below); the
# module's environment gives MAGMA_HOME.
magma_report() { # JSON FROM DEFAULT
        python3 - "$1" "$usr" "$2" "$3" <<'EOF'
import json, sys

d = json.load(open(sys.argv[1]))
usr, want_from, default = sys.argv[2], sys.argv[3], sys.argv[4] == "default"
m = [c for c in d["components"] if c["name"] == "magma"]
bad = []
if len(m) != 1:
    sys.exit(f"{len(m)} magma components")
m = m[0]
if m["state"] != "found" or m["version"] != "2.9.0" or m["cuda_major"] != 12:
    bad.append(f"state {m['state']!r}, version {m['version']!r}, CUDA {m['cuda_major']!r}: want found 2.9.0 for 12")
for part, path in (("header", usr + "/include/magma.h"), ("library", usr + "/lib/libmagma.so")):
    p = m[part] or {}
    if p.get("path") != path or p.get("from") != want_from.replace("@", part == "header" and "include" or "lib") \
            or p.get("default") != default:
        bad.append(f"{part} {p}, want {path} from {want_from} (default {default})")
if not default:
    for f in d["findings"]:
        if "MAGMA" in f["what"]:
            bad.append(f"finding about MAGMA: {f}")
for b in bad:
    print("doctor --build:", b)
sys.exit(1 if bad else 0)
EOF
}
magma_report "$MT_TMP/build.json" MAGMA_HOME module || fail "doctor --build with the modules: see above"

# Nothing but cuda/12.4 loaded, the unpacked root as the system root:
# PyTorch's FindMAGMA finds Debian's MAGMA in /usr (CMake's default
# prefixes), and so does doctor.
rc=0
env -i "${modenv[@]}" HOME="$MT_TMP" USE_CUDNN=0 USE_MAGMA=1 MAGMA_HOME= CUDAMOD_TEST_ROOT="$root" \
        "$CUDAMOD_BIN" doctor --build --json >"$MT_TMP/default.json" 2>"$MT_TMP/default.err" || rc=$?
magma_report "$MT_TMP/default.json" "default /usr + @" default || fail "doctor --build, MAGMA in the system root: see above"
# A MAGMA found only in the default places is taken by the configure as
# it should be: doctor --build gives a note, not a problem.
python3 - "$MT_TMP/default.json" "${rc:-0}" <<'EOF' || fail "the default-places verdict: see above"
import json, sys

d = json.load(open(sys.argv[1]))
about = [f for f in d["findings"] if "MAGMA" in f["what"]]
notes = [n for n in d.get("notes", []) if "MAGMA" in json.dumps(n)]
if about or not notes:
    sys.exit(f"doctor --build: want a note about MAGMA and no finding: {about} notes {d.get('notes')}")
# What else doctor finds is about the toolkit (on trixie, CUDA 12.4 refuses
# gcc 14 and glibc 2.41: fatal); with nothing found, the status is ok and
# the exit status 0.
if not d["findings"] and (d["status"] != "ok" or sys.argv[2] != "0"):
    sys.exit(f"doctor --build: want status ok and exit 0, got {d['status']} and {sys.argv[2]}")
EOF

# --- the seed's run-time check -----------------------------------------------------------
# validate: cuda/12.4's checks are real.sh's; a system install's module
# puts nothing on LD_LIBRARY_PATH, so validate does not start the probe.
run_cudamod --config "$cfg" validate --json --modulepath "$out/Core" magma/2.9.0 \
        >"$MT_TMP/validate.json" 2>"$MT_TMP/validate.err" || true
python3 - "$MT_TMP/validate.json" <<'EOF' || fail "validate magma/2.9.0: $(cat "$MT_TMP/validate.err")"
import json, sys

mods = {m["module"]: m for m in json.load(open(sys.argv[1]))["modules"]}
m = mods.get("magma/2.9.0")
if not m:
    sys.exit(f"no magma/2.9.0 in {sorted(mods)}")
checks = {c["id"]: c for c in m["checks"]}
bad = [f"{i}: {checks[i]['status']}" for i in ("syntax", "paths") if checks[i]["status"] != "pass"]
if checks["run"]["status"] != "skip" or "LD_LIBRARY_PATH" not in checks["run"]["message"]:
    bad.append(f"run: {checks['run']}")
if m["status"] == "fail":
    bad.append("status fail")
for b in bad:
    print("validate magma/2.9.0:", b)
sys.exit(1 if bad else 0)
EOF
# The probe, as validate starts it for a magma module, with the modules'
# LD_LIBRARY_PATH and the root's library directories for the loader's
# defaults (nothing of the host's: its libblas is not trixie's).
if ! glibc_at_least 2.38; then
        say "SKIP the run-time check: libmagma.so.2 needs glibc 2.38 (GLIBC_2.38), this C library is $glibc (the trixie pass runs it)"
else
        env_value "$MT_TMP/load.env" LD_LIBRARY_PATH || true
        env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$VAL:$usr/lib:$usr/lib/x86_64-linux-gnu" \
                "$CUDAMOD_PROBE" --cuda-major 12 --no-cudnn --no-nccl --no-driver \
                --library "magma=libmagma.so:magma_version:magma" >"$MT_TMP/probe.json" 2>"$MT_TMP/probe.err" ||
                fail "the probe failed: $(cat "$MT_TMP/probe.err")"
        python3 - "$MT_TMP/probe.json" "$usr" "$cuda" <<'EOF' || fail "the probe: $(cat "$MT_TMP/probe.json")"
import json, sys

p = json.load(open(sys.argv[1]))
usr, cuda = sys.argv[2], sys.argv[3]
m, rt = p["magma"], p["cudart"]
if not m["loaded"] or m["version"] != 20900 or m["realpath"] != usr + "/lib/libmagma.so.2":
    sys.exit(f"libmagma: {m}")
if not rt["loaded"] or not rt["path"].startswith(cuda + "/"):
    sys.exit(f"libcudart: {rt}")
EOF
        say "run-time check: libmagma.so.2 2.9.0 loaded with cuda/12.4's libraries"
fi
mt_finish
