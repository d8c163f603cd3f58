#!/usr/bin/env bash
# tests/stress/output-errors.sh: `generate -o DIR` where DIR cannot be
# written fails cleanly: exit status 1, a message on stderr naming the path,
# nothing on stdout that claims files were written, no crash (no signal, no
# sanitizer report), and nothing written anywhere.
#
# Cases: DIR a read-only directory; DIR to be created inside a read-only
# directory (both run as an unprivileged user when this runs as root, through
# setpriv or runuser; skipped when neither can drop privileges); DIR a regular
# file; DIR below a regular file; DIR a symlink to a regular file;
# --dry-run / --check on a regular file (still an error, exit 1); a symlinked
# directory inside OUT (refused, nothing written through it); a symlinked
# modulefile (left alone even with --force --prune; DIR itself may be a
# symlink to a directory); a corrupt index, and an index naming a path
# outside OUT (refused, nothing touched).
set -euo pipefail
# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh).
. "$(dirname "$0")/../valgrind.sh"
. "$(dirname "$0")/lib.sh"

root=$work/root
mktree "$root" demo
cases=0

# run_fail NAME PATH_IN_MESSAGE [AS...] -- ARGS...: run cudamod, expect exit 1
# and PATH_IN_MESSAGE on stderr.
run_fail() {
        local name=$1 want=$2 rc=0
        shift 2
        local as=()
        while [ "$1" != -- ]; do as+=("$1"); shift; done
        shift
        "${as[@]}" "$cudamod" "$@" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
        note "$name: exit $rc: $(tr '\n' ' ' <"$work/err.txt" | head -c 300)"
        [ $rc -lt 128 ] || fail "$name: killed by signal $((rc - 128))"
        [ $rc -eq 1 ] || fail "$name: exit status $rc, expected 1"
        [ -s "$work/err.txt" ] || fail "$name: nothing on stderr"
        grep -qF -- "$want" "$work/err.txt" || fail "$name: stderr does not name '$want'"
        if grep -qiE 'AddressSanitizer|runtime error|Segmentation' "$work/err.txt"; then
                fail "$name: a crash report on stderr"
        fi
        grep -qE '[1-9][0-9]* created' "$work/out.txt" && fail "$name: stdout claims files were created"
        cases=$((cases + 1))
}

# nothing_below DIR: DIR holds nothing (no modulefile, lock, index or temp).
nothing_below() {
        [ -z "$(find "$1" -mindepth 1 -print -quit 2>/dev/null)" ] || {
                find "$1" -mindepth 1 >&2
                fail "files were written below $1"
        }
}

# A regular file.
echo "precious" >"$work/file"
run_fail "-o a regular file" "$work/file" -- generate -o "$work/file" "$root"
[ "$(cat "$work/file")" = precious ] || fail "the regular file was changed"
run_fail "-o a regular file, --dry-run" "$work/file" -- generate --dry-run -o "$work/file" "$root"
run_fail "-o a regular file, --check" "$work/file" -- generate --check -o "$work/file" "$root"
run_fail "-o below a regular file" "$work/file" -- generate -o "$work/file/sub/out" "$root"
[ "$(cat "$work/file")" = precious ] || fail "the regular file was changed"
ln -s file "$work/link-to-file"
run_fail "-o a symlink to a regular file" "$work/link-to-file" -- generate -o "$work/link-to-file" "$root"
[ "$(cat "$work/file")" = precious ] || fail "the regular file was changed"

# Read-only directories: as root, only a user without privileges is stopped.
if unprivileged; then
        ro_ok=1
else
        ro_ok=0
        note "running as root and no unprivileged user can run $cudamod: read-only cases skipped"
fi
if [ "$ro_ok" -gt 0 ]; then
        mkdir -p "$work/ro"
        chmod 555 "$work/ro"
        chmod -R a+rX "$root"
        run_fail "-o a read-only directory" "$work/ro" "${as[@]}" -- generate -o "$work/ro" "$root"
        nothing_below "$work/ro"
        run_fail "-o a new directory in a read-only one" "$work/ro/new" "${as[@]}" -- generate -o "$work/ro/new" "$root"
        nothing_below "$work/ro"
        # A tree generated earlier, now read-only: an update fails the same way.
        "$cudamod" generate -o "$work/ro2" "$root" >/dev/null
        rm -rf "$root/sw/nccl_2.21.5-1+cuda12.4_x86_64"
        mktree "$root" "nccl:2.20.3:12.4@sw/nccl_2.20.3-1+cuda12.4_x86_64"
        chmod -R a+rX "$root"
        chmod -R a-w "$work/ro2"
        before=$(stat_list "$work/ro2")
        run_fail "-o a read-only generated tree" "$work/ro2" "${as[@]}" -- generate --prune -o "$work/ro2" "$root"
        [ "$(stat_list "$work/ro2")" = "$before" ] || fail "the read-only tree changed"
        chmod -R u+w "$work/ro2" "$work/ro"
fi
# Symlinks in and around OUT, and a corrupt index.
mkdir -p "$work/evil" "$work/real"
echo secret >"$work/evil/target"
ln -s real "$work/outlink"
"$cudamod" generate -o "$work/outlink" "$root" >/dev/null 2>&1 || fail "-o a symlink to a directory fails"
[ -f "$work/real/Core/cuda/12.9.lua" ] || fail "-o a symlink to a directory: nothing written in the directory"
mkdir -p "$work/out-sub"
ln -s "$work/evil" "$work/out-sub/CUDA"
run_fail "a directory inside OUT is a symlink" "CUDA" -- generate -o "$work/out-sub" "$root"
[ "$(ls "$work/evil")" = target ] || fail "generate wrote through a symlinked directory"
mkdir -p "$work/out-link/Core/cuda"
ln -s "$work/evil/target" "$work/out-link/Core/cuda/12.9.lua"
"$cudamod" generate --force --prune -o "$work/out-link" "$root" >"$work/out.txt" 2>&1 || true
[ "$(cat "$work/evil/target")" = secret ] || fail "generate --force wrote through a symlinked modulefile"
[ -L "$work/out-link/Core/cuda/12.9.lua" ] || fail "generate replaced a symlink it did not write"
grep -qE '^foreign +Core/cuda/12\.9\.lua$' "$work/out.txt" || note "note: the symlinked modulefile is not reported foreign"
"$cudamod" generate -o "$work/out-index" "$root" >/dev/null 2>&1
echo '{"files": garbage' >"$work/out-index/.cudamod-index.json"
before=$(stat_list "$work/out-index")
run_fail "a corrupt index" "$work/out-index/.cudamod-index.json" -- generate -o "$work/out-index" "$root"
[ "$(stat_list "$work/out-index")" = "$before" ] || fail "a run with a corrupt index changed the tree"
echo '{"files": {"../../evil/target": {"sha256": "00"}}}' >"$work/out-index/.cudamod-index.json"
run_fail "an index naming a path outside OUT" ".cudamod-index.json" -- generate --prune --force -o "$work/out-index" "$root"
[ "$(cat "$work/evil/target")" = secret ] || fail "a hostile index made generate touch a file outside OUT"
note "ok: $cases cases"
