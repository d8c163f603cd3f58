# tests/stress/lib.sh: shared by the stress scripts (sourced, not run).
#
# Needs CUDAMOD_BIN and MKELFSTUB (meson's test_env sets them). Makes $work
# (a fresh directory, removed on exit unless STRESS_KEEP=1), copies the
# cudamod binary into it (a rebuild during the run must not swap it), and
# defines the helpers below.

set -euo pipefail

stress_name=$(basename "$0" .sh)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() {
        echo "$stress_name: FAIL: $*" >&2
        exit 1
}
skip() {
        echo "$stress_name: SKIP: $*" >&2
        exit 77
}
note() {
        echo "$stress_name: $*"
}

[ -n "${CUDAMOD_BIN:-}" ] && [ -x "$CUDAMOD_BIN" ] || skip "CUDAMOD_BIN is not set or not executable"
[ -n "${MKELFSTUB:-}" ] && [ -x "$MKELFSTUB" ] || skip "MKELFSTUB is not set or not executable"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed to build the fixture trees"

work=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-$stress_name-XXXXXX")
work=$(cd "$work" && pwd -P)
chmod 755 "$work"
stress_cleanup() {
        local rc=$?
        # Background runs of this script's own (by pid) are gone or killed here.
        for p in $(jobs -p); do kill -9 "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
        if [ "${STRESS_KEEP:-0}" = 1 ] || { [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "${STRESS_KEEP_ON_FAIL:-0}" = 1 ]; }; then
                echo "$stress_name: kept $work" >&2
        else
                chmod -R u+rwX "$work" 2>/dev/null || true
                rm -rf -- "$work"
        fi
}
trap stress_cleanup EXIT
mkdir -p "$work/bin"
if [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        # Under valgrind (tests/valgrind.sh): the binary and the wrapper are
        # copied too, so that another user can run them from here.
        cp "$CUDAMOD_VALGRIND_REAL" "$work/bin/cudamod.real"
        cp "$CUDAMOD_VALGRIND_WRAPPER" "$work/bin/valgrind-cudamod.sh"
        {
                echo "#!$(command -v bash)"
                printf 'export CUDAMOD_VALGRIND_REAL=%q CUDAMOD_VALGRIND_LOGS=%q\n' \
                        "$work/bin/cudamod.real" "$CUDAMOD_VALGRIND_LOGS"
                printf 'exec %q "$@"\n' "$work/bin/valgrind-cudamod.sh"
        } >"$work/bin/cudamod"
        chmod 755 "$work/bin/cudamod.real" "$work/bin/valgrind-cudamod.sh"
else
        cp "$CUDAMOD_BIN" "$work/bin/cudamod"
fi
chmod 755 "$work/bin" "$work/bin/cudamod"
cudamod=$work/bin/cudamod

# mktree ROOT SPEC...: fake installs (tests/stress/mktree.py).
mktree() {
        MKTREE_STUBS=$work/.stubs python3 "$here/mktree.py" "$MKELFSTUB" "$@"
}

# manifest DIR: "sha256  relative/path" of every regular file below DIR,
# sorted, without the lock file. Other entries (symlinks, fifos...) are
# listed as "OTHER  path" so that they show up as unexpected.
manifest() {
        (cd "$1" && {
                find . -mindepth 1 -type f ! -name .cudamod.lock -printf '%P\0' | xargs -0 -r sha256sum --
                find . -mindepth 1 ! -type d ! -type f -printf 'OTHER  %P\n'
        } | LC_ALL=C sort -k2)
}

# stat_list DIR: "path inode mtime(ns)" of every entry below DIR, sorted.
stat_list() {
        (cd "$1" && find . -mindepth 1 -printf '%P %i %T@\n' | LC_ALL=C sort)
}

# index_files DIR: the file paths the index lists, sorted, one per line;
# exit 1 (with a message) when the index is missing or not valid JSON.
index_files() {
        python3 - "$1/.cudamod-index.json" <<'PY'
import json, sys
try:
    with open(sys.argv[1], "rb") as f:
        doc = json.load(f)
except Exception as e:
    sys.exit("index %s: %s" % (sys.argv[1], e))
files = doc.get("files") if isinstance(doc, dict) else doc
if isinstance(files, dict):
    names = list(files)
elif isinstance(files, list):
    names = [x.get("path") or x.get("file") for x in files if isinstance(x, dict)]
else:
    sys.exit("index %s: no 'files' object or list" % sys.argv[1])
for n in sorted(names):
    print(n)
PY
}

# lua_syntax DIR: luac5.1 -p on every .lua below DIR (no-op without luac5.1).
lua_syntax() {
        command -v luac5.1 >/dev/null 2>&1 || return 0
        local files
        mapfile -d '' files < <(find "$1" -name '*.lua' -type f -print0)
        [ ${#files[@]} -eq 0 ] || luac5.1 -p -- "${files[@]}"
}

# ms: milliseconds since the epoch.
ms() {
        date +%s%3N
}

# write_ab_configs DIR: DIR/a.yaml and DIR/b.yaml, two site configs that
# differ in every module (SITE_X=a or b), so each file tells which run
# wrote it.
write_ab_configs() {
        local v
        mkdir -p "$1"
        for v in a b; do
                cat >"$1/$v.yaml" <<EOF
env:
  cuda: { setenv: { SITE_X: "$v" } }
  cudnn: { setenv: { SITE_X: "$v" } }
  nccl: { setenv: { SITE_X: "$v" } }
EOF
        done
}

# gen CONFIG [ARGS...]: `cudamod --config $work/cfg/CONFIG.yaml generate
# ARGS... -o $out $root` (the configs of write_ab_configs $work/cfg; $root
# and $out are the script's).
gen() {
        local cfg=$1
        shift
        "$cudamod" --config "$work/cfg/$cfg.yaml" generate "$@" -o "$out" "$root"
}

# gen_state CONFIG NAME: generate $out with CONFIG and keep it as
# $work/NAME (fails the test when generate fails).
gen_state() {
        gen "$1" >"$work/$1.log" 2>&1 || { cat "$work/$1.log" >&2; fail "generate $2 failed"; }
        mv "$out" "$work/$2"
}

# unprivileged: set the array `as` to the command prefix that runs a
# command as a user whom file permissions stop: none when not root, else
# setpriv or runuser to nobody, who must be able to run $cudamod. Returns 1
# (with `as` empty) when root has no such way.
unprivileged() {
        as=()
        [ "$(id -u)" -eq 0 ] || return 0
        if command -v setpriv >/dev/null 2>&1 && setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
                as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
        elif command -v runuser >/dev/null 2>&1 && runuser -u nobody -- true 2>/dev/null; then
                as=(runuser -u nobody --)
        else
                return 1
        fi
        "${as[@]}" test -x "$cudamod" || { as=(); return 1; }
}

# treecheck_start: start tests/stress/treecheck.py as a co-process (one
# python for the whole script: a check is then a few milliseconds).
# tc CMD ARG...: send it a command (see treecheck.py); the reply is in
# $tc_reply and its NAME=VALUE fields in ${tcf[NAME]}; returns 1 when the
# reply is not "ok ...". (No subshell: on a busy machine each costs.)
treecheck_start() {
        coproc TREECHECK { exec python3 -u "$here/treecheck.py"; }
}
declare -A tcf
tc() {
        local IFS=$'\t' f
        printf '%s\n' "$*" >&"${TREECHECK[1]}"
        IFS= read -r tc_reply <&"${TREECHECK[0]}" || fail "treecheck.py is gone"
        tcf=()
        IFS=' '
        for f in $tc_reply; do
                case $f in *=*) tcf[${f%%=*}]=${f#*=} ;; esac
        done
        [ "${tc_reply%% *}" = ok ]
}
