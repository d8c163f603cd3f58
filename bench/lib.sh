# bench/lib.sh: what bench/validate.sh and bench/doctor.sh share, sourced.
#
# bench_setup NAME RUNS "$@": parse --builddir DIR (default build, relative
# to the source tree), --runs N (default RUNS) and --keep; check that
# hyperfine and python3 are there; set src, builddir, runs, cudamod and work
# (a scratch directory, removed at exit unless --keep).
# bench_paths: set src, and builddir (made absolute) and cudamod from
# $builddir (for a script that parses its own options).
# bench_scratch NAME: set work, a scratch directory removed at exit unless
# $keep is set.
# bench_need FILE...: each built file is there and executable.

bench_setup() {
        local name=$1
        builddir=build runs=$2 keep=
        shift 2
        while [ $# -gt 0 ]; do
                case $1 in
                --builddir) builddir=$2; shift 2 ;;
                --runs) runs=$2; shift 2 ;;
                --keep) keep=1; shift ;;
                *) echo "usage: bench/$name.sh [--builddir DIR] [--runs N] [--keep]" >&2; exit 2 ;;
                esac
        done
        bench_paths
        command -v hyperfine >/dev/null || { echo "hyperfine is missing (Debian package hyperfine)" >&2; exit 1; }
        command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
        bench_scratch "$name"
}

bench_paths() {
        src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        case $builddir in /*) ;; *) builddir=$src/$builddir ;; esac
        cudamod=$builddir/src/cudamod
}

bench_scratch() {
        work=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-bench-$1-XXXXXX")
        if [ -z "$keep" ]; then
                trap 'rm -rf "$work"' EXIT
        else
                echo "keeping $work"
        fi
}

bench_need() {
        local f
        for f; do
                [ -x "$f" ] || { echo "$f is missing: build first (ninja -C $builddir)" >&2; exit 1; }
        done
}

# bench_module_env MP MODULE...: the environment a probe or a user gets
# after `module load MODULE...` from MP, one NAME=value per line: PATH/HOME
# basics, then what the modules set (from `cudamod show --json`).
bench_module_env() {
        local mp=$1
        shift
        env -i PATH=/usr/bin:/bin HOME="$work" "$cudamod" show --json --modulepath "$mp" "$@" |
                python3 -c '
import json, sys
env = {"PATH": "/usr/bin:/bin", "HOME": sys.argv[1]}
for v in json.load(sys.stdin)["environment"]:
    if v["action"] == "unset":
        env.pop(v["name"], None)
    elif v["name"] != "MODULEPATH":
        env[v["name"]] = v["value"]
for k, v in env.items():
    print(f"{k}={v}")
' "$work"
}

# bench_syscalls NAME=COMMAND...: the system calls of each command, counted
# once with strace -c -f (deterministic, so one run), as a markdown table
# by call (failing calls in parentheses) with the totals. Each argument is
# "label=command line" (split on spaces). Skipped without strace.
bench_syscalls() {
        local arg label cmd i=0 files=()
        if ! command -v strace >/dev/null; then
                echo "(no strace: system calls not counted)"
                return 0
        fi
        for arg; do
                label=${arg%%=*} cmd=${arg#*=}
                # shellcheck disable=SC2086
                strace -f -c -o "$work/syscalls.$i" $cmd >/dev/null 2>&1 || true
                files+=("$label" "$work/syscalls.$i")
                i=$((i + 1))
        done
        python3 - "${files[@]}" <<'PY'
import sys
args = sys.argv[1:]
labels, counts = args[0::2], []
for f in args[1::2]:
    c = {}
    for line in open(f):
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit():
            c[p[-1]] = (int(p[3]), int(p[4]) if len(p) == 6 else 0)
    counts.append(c)
names = sorted({k for c in counts for k in c} - {"total"}, key=lambda k: -sum(c.get(k, (0, 0))[0] for c in counts))
print("| system call | " + " | ".join(labels) + " |")
print("|---|" + "---:|" * len(labels))
for k in names:
    if sum(c.get(k, (0, 0))[0] for c in counts) < 50:
        continue
    print("| %s | " % k + " | ".join("%d (%d)" % c.get(k, (0, 0)) for c in counts) + " |")
print("| **total** | " + " | ".join("**%d** (%d)" % c.get("total", (0, 0)) for c in counts) + " |")
PY
}
