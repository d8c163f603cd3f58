#!/usr/bin/env bash
# tests/slurm/validate.sh: `cudamod validate` with targets, through a real
# Slurm (tests/slurm/cluster.sh: one node, two fake GPUs, partitions a100,
# h100 and hang) and the fake driver that answers per partition
# (tests/fakecuda CUDA_BY_PARTITION: two Fake A100 cc 8.0 on a100, two Fake
# H100 cc 9.0 on h100, a cuInit that never returns on hang; driver 12080,
# CUDA_VISIBLE_DEVICES honoured).
#
# The modules: `mkfixture doctor` (CUDA 12.4 and 13.0, cuDNN 9.1.0 and NCCL
# 2.21.5 for CUDA 12), generated hierarchically, then the stub libraries the
# probe loads replaced by the fakes of the same versions. Expected: cuda/12.4,
# cudnn/9.1.0 and nccl/2.21.5 pass on both targets; cuda/13.0 fails on both
# (driver 12080 is too old for the 13.0 runtime: a module problem, not a
# target's). Asserted:
#   - the JSON matrix, the targets (status, launcher argv, driver, ONE GPU
#     each: --gres=gpu:1 gives the step a single CUDA_VISIBLE_DEVICES
#     ordinal), the per-target device checks, the arch list 8.0;9.0, and the
#     "validation" key in the output directory's .cudamod-index.json;
#   - the human report: a column per target, each target's GPUs;
#   - --target a100 keeps that target only; an unknown --target is a usage
#     error (2);
#   - a request Slurm refuses (--gres=gpu:3), from the config and from
#     --launcher: that target launcher-failed, its cells too, the modules not
#     failed, exit 1, the human report says the launcher failed;
#   - a step that hangs (partition hang) with --timeout 5: launcher-failed,
#     "timed out", well before the step's own 1-minute limit, and no job left
#     in squeue a few seconds later;
#   - --arch-list prints exactly 8.0;9.0;
#   - pytorch.cuda_arch_list: detect + generate writes TORCH_CUDA_ARCH_LIST
#     "8.0;9.0" into the cuda modules, from the last validation.
# Every daemon is stopped and every file removed on exit, pass or fail.
#
# Runs in a UTS namespace named localhost where it can (see below).
# Skips (77) without root (mknod of the fake GPUs), CAP_MKNOD, the Slurm and
# munge programs or python3, unless CUDAMOD_REQUIRE_SLURM=1 (CI, after the
# packages were installed), which makes that a failure. CUDAMOD_KEEP_TMP=1 keeps the
# scratch directory and the cluster's (logs included).
set -euo pipefail
export LC_ALL=C
# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh); the daemons and srun are not ours.
. "$(dirname "$0")/../valgrind.sh"

SELF=slurm-validate
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER=$HERE/cluster.sh
FAILS=0
FAILED=()

say() { printf '%s: %s\n' "$SELF" "$*"; }
# A failed assertion: reported, counted, and the test goes on, so that one
# run shows every difference; finish turns the count into the status.
fail() {
        printf '%s: FAIL: %s\n' "$SELF" "$*"
        FAILS=$((FAILS + 1))
        local m="$*"
        FAILED+=("${m:0:240}")
}
die() {
        printf '%s: ERROR: %s\n' "$SELF" "$*"
        exit 1
}
skip() {
        if [ "${CUDAMOD_REQUIRE_SLURM:-}" = 1 ]; then
                die "CUDAMOD_REQUIRE_SLURM=1 and Slurm cannot run here: $*"
        fi
        say "SKIP: $*"
        exit 77
}
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

: "${CUDAMOD_BIN:?CUDAMOD_BIN is not set (run through meson test)}"
: "${MKFIXTURE:?MKFIXTURE is not set (run through meson test)}"
for v in CUDART12 CUDART13 CUDNN91 NCCL2 CUDA_BY_PARTITION; do
        eval ": \"\${CUDAMOD_FAKE_$v:?CUDAMOD_FAKE_$v is not set (run through meson test)}\""
done

# --- can Slurm run here? -----------------------------------------------------
# Debian installs the daemons in /usr/sbin, which a CI shell may lack.
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac
missing=()
for cmd in slurmctld slurmd srun scontrol sinfo squeue scancel munged mungekey munge unmunge; do
        command -v "$cmd" > /dev/null || missing+=("$cmd")
done
[ ${#missing[@]} -eq 0 ] ||
        skip "not installed: ${missing[*]} (Debian: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)"
command -v python3 > /dev/null || skip "python3 is not installed"
[ "$(id -u)" -eq 0 ] || skip "not root: the daemons run as root and the fake GPUs are made with mknod"

# Slurm finds srun again by the name of the machine: slurmctld resolves the
# host name srun sends (its gethostname) to answer it. Where that name does
# not resolve (a chroot or a container without it in /etc/hosts: CI's
# Debian trixie chroot), slurmctld 24.11 retries for 10 s at each job's end
# ("_xgetaddrinfo: getaddrinfo() failed ... attempt number -4" to 5) while
# the job stays allocated, so the next srun waited out its --immediate and
# failed with "Requested nodes are busy", and a cancelled step stayed
# RUNNING; 22.05 gives up at once and passed. So the test and its cluster
# run in a UTS namespace of their own, named localhost, which resolves
# everywhere (the machine's own name is not changed).
if [ -z "${SLURMCI_UTS_NS:-}" ] && unshare --uts true 2> /dev/null; then
        SLURMCI_UTS_NS=1 exec unshare --uts -- "$BASH" "$0" "$@"
fi
if [ -n "${SLURMCI_UTS_NS:-}" ]; then
        echo localhost > /proc/sys/kernel/hostname
else
        say "no UTS namespace here (unshare --uts fails): the host name '$(hostname)' must resolve"
fi

T_START=$(now)
W=$(mktemp -d /tmp/cudamod-slurm.XXXXXX)
SLURMCI_DIR=
cleanup() {
        local rc=$?
        trap - EXIT
        if [ -n "$SLURMCI_DIR" ]; then
                local t
                t=$(now)
                SLURMCI_KEEP=${CUDAMOD_KEEP_TMP:-0} "$CLUSTER" stop "$SLURMCI_DIR" || rc=1
                say "cluster stopped in $(dt "$t" "$(now)") s"
        fi
        if [ "${CUDAMOD_KEEP_TMP:-}" = 1 ]; then
                say "scratch kept: $W${SLURMCI_DIR:+, cluster: $SLURMCI_DIR}"
        else
                rm -rf "$W"
        fi
        exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mknod "$W/probe-mknod" c 195 0 2> /dev/null || skip "mknod fails here (no CAP_MKNOD?): the fake GPUs need char devices"
rm -f "$W/probe-mknod"

# --- the cluster ---------------------------------------------------------------
t=$(now)
ENV=$("$CLUSTER" start) || die "the Slurm cluster did not start (its logs are above)"
eval "$ENV" # SLURM_CONF, SLURMCI_DIR
T_CLUSTER=$(dt "$t" "$(now)")
say "cluster started in $T_CLUSTER s ($SLURMCI_DIR)"

# --- the modules ---------------------------------------------------------------
fx=$W/fx
mf=$W/mf
mp=$mf/Core
drv=$W/drv
"$MKFIXTURE" doctor "$fx" > /dev/null || die "mkfixture doctor failed"
# Generated from the stub libraries (detection reads their version strings),
# then the libraries the probe loads swapped for the fakes of the same
# versions; the stubs come back before the last generate.
"$CUDAMOD_BIN" generate -o "$mf" "$fx/sw" > "$W/generate1.out" 2>&1 ||
        die "generate failed: $(cat "$W/generate1.out")"
swaps=(
        "sw/cuda/12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127 CUDART12"
        "sw/cuda/13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96 CUDART13"
        "sw/cudnn/9.1.0/lib/libcudnn.so.9.1.0 CUDNN91"
        "sw/nccl/2.21.5/lib/libnccl.so.2.21.5 NCCL2"
)
mkdir -p "$W/stubs"
for s in "${swaps[@]}"; do
        read -r rel var <<< "$s"
        [ -f "$fx/$rel" ] || die "the fixture has no $rel"
        mkdir -p "$W/stubs/$(dirname "$rel")"
        cp -p "$fx/$rel" "$W/stubs/$rel"
        v=CUDAMOD_FAKE_$var
        cp "${!v}" "$fx/$rel"
done
mkdir -p "$drv"
cp "$CUDAMOD_FAKE_CUDA_BY_PARTITION" "$drv/libcuda.so.1"

srun1="--gres=gpu:1 -t 1 --immediate=20"
cat > "$W/site.yaml" << EOF
validate:
  targets:
    - { name: a100, launcher: "srun -p a100 $srun1" }
    - { name: h100, launcher: "srun -p h100 $srun1" }
pytorch:
  cuda_arch_list: detect
EOF
cat > "$W/bad.yaml" << EOF
validate:
  targets:
    - { name: a100, launcher: "srun -p a100 $srun1" }
    - { name: toomany, launcher: "srun -p a100 --gres=gpu:3 -t 1 --immediate=5" }
    - { name: hang, launcher: "srun -p hang $srun1" }
EOF

# cm NAME ARGS...: run cudamod; NAME.out, NAME.err, NAME.rc, NAME.time in $W.
cm() {
        local name=$1 rc=0 t
        shift
        t=$(now)
        "$CUDAMOD_BIN" "$@" > "$W/$name.out" 2> "$W/$name.err" || rc=$?
        echo "$rc" > "$W/$name.rc"
        dt "$t" "$(now)" > "$W/$name.time"
        say "$name: exit $rc in $(cat "$W/$name.time") s: cudamod $*"
}
rc_of() { cat "$W/$1.rc"; }
# expect_rc NAME WANT: the exit status, with the output when it differs.
expect_rc() {
        [ "$(rc_of "$1")" = "$2" ] ||
                fail "$1: exit $(rc_of "$1"), want $2; stderr: $(head -c 1500 "$W/$1.err"); stdout: $(head -c 1500 "$W/$1.out")"
}

# pycheck NAME < SNIPPET: Python assertions on NAME.out (the JSON document
# d; or the text, t), after expect.py. The snippet calls fail(msg); each
# message is a failure here. A snippet that raises (a key the document
# lacks) is one failure with the exception; the other snippets still run.
cat > "$W/check.py" << 'PY'
import json, sys, traceback
out_path, snippet_path = sys.argv[1], sys.argv[2]
text = open(out_path, encoding="utf-8", errors="replace").read()
fails = []
def fail(m):
    fails.append(str(m).replace("\n", " "))
try:
    d = json.loads(text)
except ValueError:
    d = None
def doc():
    if d is None:
        raise AssertionError("not JSON: " + text[:600])
    return d
def target(name):
    for t in doc().get("targets") or []:
        if t.get("name") == name:
            return t
    raise AssertionError("no target %r in %r" % (name, [t.get("name") for t in doc().get("targets") or []]))
def module(name):
    for m in doc().get("modules") or []:
        if m.get("module") == name:
            return m
    raise AssertionError("no module %r in %r" % (name, [m.get("module") for m in doc().get("modules") or []]))
env = {"d": d, "t": text, "fail": fail, "doc": doc, "target": target, "module": module, "json": json}
try:
    for f in sys.argv[3:] + [snippet_path]:
        exec(compile(open(f).read(), f, "exec"), env)
except Exception as e:
    fail("%s: %s (at %s)" % (type(e).__name__, e, traceback.extract_tb(e.__traceback__)[-1].lineno))
for f in fails:
    print(f)
PY
pycheck() {
        local name=$1 out line
        cat > "$W/snippet.py"
        out=$(python3 "$W/check.py" "$W/$name.out" "$W/snippet.py" "$W/expect.py" 2>&1) || true
        while IFS= read -r line; do
                [ -n "$line" ] && fail "$name: $line"
        done <<< "$out"
        return 0
}

common=(--modulepath "$mp" --driver-libdir "$drv" --no-compile)
# What every module should be on a working target (see the header), the
# GPU each target's step sees, and the matrix rows of a human report.
cat > "$W/expect.py" << 'PY'
import re
EXPECT = {"cuda/12.4": "pass", "cudnn/9.1.0": "pass", "nccl/2.21.5": "pass", "cuda/13.0": "fail"}
GPUS = {"a100": ("Fake A100", "8.0", 40536), "h100": ("Fake H100", "9.0", 81559)}
def argv(target, extra="--gres=gpu:1 -t 1 --immediate=20"):
    return ["srun", "-p", target] + extra.split()
# module -> the verdict words of its row (the first line naming it with two
# verdicts or more); the per-target cells end the row, in target order.
def rows(text):
    verdict = re.compile(r"(?<![\w-])(pass|warn|fail|launcher-failed)(?![\w-])")
    r = {}
    for l in text.splitlines():
        words = verdict.findall(l)
        mod = next((w for w in l.split() if re.fullmatch(r"[a-z]+/[0-9][0-9.]*", w)), None)
        if mod and len(words) >= 2 and mod not in r:
            r[mod] = words
    return r
PY

# --- 1. both targets, JSON ------------------------------------------------------
cm main --config "$W/site.yaml" validate "${common[@]}" --json
expect_rc main 1 # cuda/13.0 fails (driver too old), nothing else
pycheck main << 'PY'
if d is not None and (d.get("cudamod"), d.get("format")) != ("validate", 1):
    fail("document head %r" % ((d.get("cudamod"), d.get("format")),))
names = [x.get("name") for x in doc()["targets"]]
if names != ["a100", "h100"]:
    fail("targets %r, want ['a100', 'h100']" % names)
for name, (gpu, cc, mib) in GPUS.items():
    x = target(name)
    for k, want in (("status", "ok"), ("message", None), ("driver_version", 12080), ("launcher", argv(name))):
        if x.get(k) != want:
            fail("target %s: %s is %r, want %r" % (name, k, x.get(k), want))
    devs = x.get("devices")
    want = [{"index": 0, "name": gpu, "compute_capability": cc, "memory_mib": mib}]
    if devs != want:
        fail("target %s: devices %r, want %r (ONE: --gres=gpu:1 gives the step one CUDA_VISIBLE_DEVICES ordinal)" % (name, devs, want))
    if x.get("visible_devices") not in ("0", "1"):
        fail("target %s: visible_devices (the step's CUDA_VISIBLE_DEVICES) %r, want '0' or '1'" % (name, x.get("visible_devices")))
    if not isinstance(x.get("host"), str) or not x.get("host"):
        fail("target %s: host %r, want the step's host name" % (name, x.get("host")))
if d.get("arch_list") != "8.0;9.0":
    fail("arch_list %r, want '8.0;9.0'" % d.get("arch_list"))
mods = sorted(m.get("module") for m in d["modules"])
if mods != sorted(EXPECT):
    fail("modules %r, want %r" % (mods, sorted(EXPECT)))
for name, want in EXPECT.items():
    m = module(name)
    cells = m.get("targets")
    if cells != {"a100": want, "h100": want}:
        fail("%s: cells %r, want a100 and h100 %s" % (name, cells, want))
    if m.get("status") != want:
        fail("%s: status %r, want %r" % (name, m.get("status"), want))
    for tn, (gpu, cc, mib) in GPUS.items():
        dev = [c for c in m.get("checks", []) if c.get("id") == "device" and c.get("target") == tn]
        run = [c for c in m.get("checks", []) if c.get("id") == "run" and c.get("target") == tn]
        if len(dev) != 1 or len(run) != 1:
            fail("%s: %d device and %d run checks for target %s, want one each: %r" % (name, len(dev), len(run), tn, m.get("checks")))
            continue
        if run[0].get("status") != "pass":
            fail("%s on %s: run check %r: %s" % (name, tn, run[0].get("status"), run[0].get("message")))
        if want == "pass" and (dev[0].get("status") != "pass" or gpu not in (dev[0].get("message") or "")):
            fail("%s on %s: device check %r, want pass naming %s: %s" % (name, tn, dev[0].get("status"), gpu, dev[0].get("message")))
        if want == "fail" and (dev[0].get("status") != "fail" or "older" not in (dev[0].get("message") or "")):
            fail("%s on %s: device check %r, want fail (driver older than the runtime): %s" % (name, tn, dev[0].get("status"), dev[0].get("message")))
PY
if python3 -c 'import json,sys; sys.exit(0 if "validation" in json.load(open(sys.argv[1])) else 1)' "$mf/.cudamod-index.json" 2> /dev/null; then
        :
else
        fail "the output directory's .cudamod-index.json has no \"validation\" key after validate: $(head -c 600 "$mf/.cudamod-index.json")"
fi

# --- 2. the same, human report -------------------------------------------------------
cm human --config "$W/site.yaml" validate "${common[@]}"
expect_rc human 1
pycheck human << 'PY'
lines = t.splitlines()
header = [l for l in lines if re.search(r"\ba100\b", l) and re.search(r"\bh100\b", l) and "Fake" not in l
          and l.find("a100") < l.find("h100")]
if not header:
    fail("no matrix header (a line naming the targets a100 then h100):\n" + t[:1500])
got = rows(t)
for name, want in EXPECT.items():
    if got.get(name, [])[-2:] != [want, want]:
        fail("the matrix row of %s ends in %r, want [%r, %r] (a100, h100)" % (name, got.get(name), want, want))
for gpu, cc in (("Fake A100", "8.0"), ("Fake H100", "9.0")):
    if not any(gpu in l and cc in l for l in lines):
        fail("no line names the GPU %s with compute capability %s:\n%s" % (gpu, cc, t[:1500]))
if "12080" not in t and "12.8" not in t:
    fail("the driver version (12080, CUDA 12.8) is not reported")
PY

# --- 3. --target ----------------------------------------------------------------------
cm only-a100 --config "$W/site.yaml" validate "${common[@]}" --json --target a100
expect_rc only-a100 1
pycheck only-a100 << 'PY'
names = [x.get("name") for x in doc()["targets"]]
if names != ["a100"]:
    fail("targets %r, want ['a100']" % names)
if d.get("arch_list") != "8.0":
    fail("arch_list %r, want '8.0'" % d.get("arch_list"))
for name, want in EXPECT.items():
    if module(name).get("targets") != {"a100": want}:
        fail("%s: cells %r, want {'a100': %r}" % (name, module(name).get("targets"), want))
    if any(c.get("target") not in (None, "a100") for c in module(name).get("checks", [])):
        fail("%s: checks of other targets than a100: %r" % (name, module(name).get("checks")))
PY
cm no-such-target --config "$W/site.yaml" validate "${common[@]}" --json --target nosuch
expect_rc no-such-target 2
grep -qF nosuch "$W/no-such-target.err" || fail "no-such-target: the error does not name the target: $(cat "$W/no-such-target.err")"

# --- 4. a request Slurm refuses -----------------------------------------------------------
good=(cuda/12.4 cudnn nccl) # the modules that pass: exit 1 comes from the target only
cm toomany --config "$W/bad.yaml" validate "${common[@]}" --json --target a100 --target toomany "${good[@]}"
expect_rc toomany 1
pycheck toomany << 'PY'
if [x.get("name") for x in doc()["targets"]] != ["a100", "toomany"]:
    fail("targets %r, want ['a100', 'toomany']" % [x.get("name") for x in d["targets"]])
x = target("toomany")
if x.get("status") != "launcher-failed":
    fail("toomany: status %r, want launcher-failed" % x.get("status"))
if "node configuration is not available" not in (x.get("message") or ""):
    fail("toomany: message %r does not pass on why srun refused (Requested node configuration is not available)" % x.get("message"))
if x.get("devices") not in ([], None) or x.get("driver_version") is not None:
    fail("toomany: devices %r, driver %r, want none" % (x.get("devices"), x.get("driver_version")))
if target("a100").get("status") != "ok":
    fail("a100: status %r next to a failing target" % target("a100").get("status"))
if d.get("arch_list") != "8.0":
    fail("arch_list %r, want '8.0' (a100's; toomany saw nothing)" % d.get("arch_list"))
for name in ("cuda/12.4", "cudnn/9.1.0", "nccl/2.21.5"):
    m = module(name)
    if m.get("targets") != {"a100": "pass", "toomany": "launcher-failed"}:
        fail("%s: cells %r, want a100 pass, toomany launcher-failed" % (name, m.get("targets")))
    if m.get("status") == "fail":
        fail("%s: the module failed because a target's launcher failed: %r" % (name, [c for c in m.get("checks", []) if c.get("status") == "fail"]))
PY
cm toomany-text --config "$W/bad.yaml" validate "${common[@]}" --target a100 --target toomany "${good[@]}"
expect_rc toomany-text 1
pycheck toomany-text << 'PY'
if not any("toomany" in l and re.search(r"launcher.*fail", l, re.I) for l in t.splitlines()):
    fail("no line says that the launcher of target toomany failed:\n" + t[:2000])
for name in ("cuda/12.4", "cudnn/9.1.0", "nccl/2.21.5"):
    if rows(t).get(name, [])[-2:] != ["pass", "launcher-failed"]:
        fail("the matrix row of %s ends in %r, want ['pass', 'launcher-failed'] (a100, toomany)" % (name, rows(t).get(name)))
PY
cm launcher-cli validate "${common[@]}" --json --launcher "srun -p a100 --gres=gpu:3 -t 1 --immediate=5" cuda/12.4
expect_rc launcher-cli 1
pycheck launcher-cli << 'PY'
x = doc()["targets"]
if [y.get("name") for y in x] != ["launcher"] or x[0].get("status") != "launcher-failed":
    fail("targets %r, want one 'launcher', launcher-failed" % [(y.get("name"), y.get("status")) for y in x])
if x and x[0].get("launcher") != ["srun", "-p", "a100", "--gres=gpu:3", "-t", "1", "--immediate=5"]:
    fail("launcher argv %r" % x[0].get("launcher"))
m = module("cuda/12.4")
if m.get("targets") != {"launcher": "launcher-failed"} or m.get("status") == "fail":
    fail("cuda/12.4: cells %r, status %r; want launcher-failed, not fail" % (m.get("targets"), m.get("status")))
PY

# --- 5. a step that hangs --------------------------------------------------------------------
cm hang --config "$W/bad.yaml" validate "${common[@]}" --json --target hang --timeout 5 cuda/12.4
expect_rc hang 1
took=$(cat "$W/hang.time")
awk -v s="$took" 'BEGIN { exit !(s >= 4.5 && s < 30) }' ||
        fail "hang: took $took s, want the 5-s timeout, well before the step's 60-s limit"
pycheck hang << 'PY'
x = target("hang")
if x.get("status") != "launcher-failed" or "timed out" not in (x.get("message") or ""):
    fail("hang: status %r, message %r; want launcher-failed, 'timed out'" % (x.get("status"), x.get("message")))
m = module("cuda/12.4")
if m.get("targets") != {"hang": "launcher-failed"} or m.get("status") == "fail":
    fail("cuda/12.4: cells %r, status %r; want launcher-failed, not fail" % (m.get("targets"), m.get("status")))
PY
# The killed srun must not leave its job behind (srun cancels the job on
# SIGTERM/SIGINT; a SIGKILLed srun cannot, and the job keeps its GPU until
# its time limit).
left=
for _ in $(seq 1 50); do
        left=$(squeue -h -o '%i %P %T' 2> /dev/null) || left="squeue failed"
        [ -z "$left" ] && break
        sleep 0.1
done
if [ -n "$left" ]; then
        fail "hang: 5 s after the timeout, Slurm still has the job: $left (the launcher was not stopped so that srun could cancel it)"
        # shellcheck disable=SC2046
        scancel $(squeue -h -o %i) 2> /dev/null || true
        for _ in $(seq 1 50); do
                [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break
                sleep 0.1
        done
fi

# --- 6. --arch-list (also the last validation: generate reads it) ---------------------
cm arch-list --config "$W/site.yaml" validate "${common[@]}" --arch-list cuda/12.4
expect_rc arch-list 0
if [ "$(cat "$W/arch-list.out")" != "8.0;9.0" ] || [ "$(wc -l < "$W/arch-list.out")" -ne 1 ]; then
        fail "arch-list: stdout '$(cat "$W/arch-list.out")', want exactly the line 8.0;9.0; stderr: $(head -c 600 "$W/arch-list.err")"
fi

# --- 7. pytorch.cuda_arch_list: detect -----------------------------------------------------------
for s in "${swaps[@]}"; do
        read -r rel _ <<< "$s"
        cp -p "$W/stubs/$rel" "$fx/$rel"
done
cm generate --config "$W/site.yaml" generate -o "$mf" "$fx/sw"
expect_rc generate 0
for f in "$mp/cuda/12.4.lua" "$mp/cuda/13.0.lua"; do
        line=$(grep -F TORCH_CUDA_ARCH_LIST "$f" || true)
        [[ $line == *'"8.0;9.0"'* ]] ||
                fail "generate: $(basename "$f"): TORCH_CUDA_ARCH_LIST line '$line', want \"8.0;9.0\" (from the last validation); stderr: $(head -c 600 "$W/generate.err")"
done

say "timings: cluster start $T_CLUSTER s, whole test (before teardown) $(dt "$T_START" "$(now)") s"
if [ "$FAILS" -ne 0 ]; then
        # Again in short at the end: meson shows only the tail of a log.
        say "$FAILS assertion(s) failed (details above):"
        printf '  - %s\n' "${FAILED[@]%%$'\n'*}"
        exit 1
fi
say "all assertions passed"
