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
