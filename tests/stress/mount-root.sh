#!/usr/bin/env bash
# tests/stress/mount-root.sh: a root the config marks a mount
# (search: [{path: DIR, mount: true}]) with a real mount on it, and without.
# As root, in a private mount namespace (unshare -m), with a tmpfs on
# $work/apps beside the demo under $work/root/sw:
#
#  1. Mounted, with NCCL 2.20.3 and cuDNN 9.6.0 on it: generate writes their
#     modules, no warning.
#  2. Unmounted, the mount point's own directory holding a stale NCCL
#     2.19.3: generate --prune exits 1 ("not a mount point", "not pruning"),
#     the tree is unchanged and 2.19.3 gets no module; without --prune the
#     same, exit 0.
#  3. A bind mount of a directory of the same filesystem (same st_dev as
#     its parent: known from /proc/self/mountinfo) holding the same installs:
#     a complete scan, --prune exits 0 and prunes nothing.
#  4. The root left plain (no mount: true), its mount gone, the mount point
#     empty: --prune exits 1 too (an empty root the index records modules
#     from), naming the modules kept; the tree is unchanged.
#
# Skips (77) when not root or when unshare -m or mount fail here.
set -euo pipefail
. "$(dirname "$0")/../valgrind.sh"

if [ "${CUDAMOD_MOUNT_NS:-}" != 1 ]; then
        if [ "$(id -u)" != 0 ]; then
                echo "mount-root: SKIP: needs root to mount" >&2
                exit 77
        fi
        if ! unshare -m --propagation private true 2>/dev/null; then
                echo "mount-root: SKIP: unshare -m fails here" >&2
                exit 77
        fi
        CUDAMOD_MOUNT_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi

. "$(dirname "$0")/lib.sh"

apps=$work/apps out=$work/out
unmount_apps() {
        while mountpoint -q "$apps" 2>/dev/null; do umount "$apps"; done
}
# The namespace's mounts go with it, but lib.sh's cleanup removes $work first.
trap 'rc=$?; unmount_apps || true; (exit $rc); stress_cleanup' EXIT

mkdir -p "$apps" "$work/bindsrc"
mount -t tmpfs -o size=64m cudamod-test "$apps" 2>/dev/null || skip "cannot mount a tmpfs here"
mountpoint -q "$apps" || skip "mountpoint does not see the tmpfs"

mktree "$work/root" demo
mktree "$work" "nccl:2.20.3:12.4@apps/nccl_2.20.3-1+cuda12.4_x86_64" \
        "cudnn:9.6.0:12@apps/cudnn-linux-x86_64-9.6.0.74_cuda12-archive"
config() { # MOUNT(true|false)
        printf 'output: %s\nsearch:\n  - %s\n  - {path: %s, mount: %s}\n' "$out" "$work/root/sw" "$apps" "$1" \
                >"$work/site.yaml"
}
run() { # NAME EXPECTED_STATUS ARGS...: keep stdout/stderr in $work/NAME.{out,err}
        local name=$1 want=$2 rc=0
        shift 2
        "$cudamod" --config "$work/site.yaml" generate "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
        if [ $rc -ne "$want" ]; then
                cat "$work/$name.out" "$work/$name.err" >&2
                fail "$name: exit status $rc, expected $want"
        fi
}
has() { # NAME TEXT: stderr of NAME holds TEXT
        grep -qF -- "$2" "$work/$1.err" || { cat "$work/$1.err" >&2; fail "$1: no '$2' on stderr"; }
}

# 1. Mounted.
config true
run mounted 0
[ -f "$out/CUDA/12/nccl/2.20.3.lua" ] || fail "mounted: no CUDA/12/nccl/2.20.3.lua"
[ -f "$out/CUDA/12/cudnn/9.6.0.lua" ] || fail "mounted: no CUDA/12/cudnn/9.6.0.lua"
! grep -q "mount point" "$work/mounted.err" || fail "mounted: $(cat "$work/mounted.err")"
manifest "$out" >"$work/sums.before"
note "mounted: $(tail -n 1 "$work/mounted.out")"

# 2. Unmounted, a stale install below the mount point.
unmount_apps
mktree "$work" "nccl:2.19.3:12.4@apps/nccl_2.19.3-1+cuda12.4_x86_64"
run unmounted-prune 1 --prune
has unmounted-prune "'$apps' is not a mount point, but the config's search says it is one (mount: true)"
has unmounted-prune "not pruning: the scan could not read '$apps': not a mount point (search: mount: true)"
manifest "$out" | diff -u "$work/sums.before" - >&2 || fail "unmounted-prune: the tree changed"
run unmounted 0
has unmounted "'$apps' is not a mount point"
manifest "$out" | diff -u "$work/sums.before" - >&2 || fail "unmounted: the tree changed"
[ ! -e "$out/CUDA/12/nccl/2.19.3.lua" ] || fail "unmounted: a module from the mount point's own directory"
note "unmounted: --prune refused, the tree unchanged"

# 3. A bind mount within one filesystem: told by /proc/self/mountinfo.
rm -rf "${apps:?}"/*
mktree "$work" "nccl:2.20.3:12.4@bindsrc/nccl_2.20.3-1+cuda12.4_x86_64" \
        "cudnn:9.6.0:12@bindsrc/cudnn-linux-x86_64-9.6.0.74_cuda12-archive"
mount --bind "$work/bindsrc" "$apps" || skip "cannot bind-mount here"
[ "$(stat -c %d "$apps")" = "$(stat -c %d "$work")" ] || note "bind mount: another st_dev than its parent here"
run bind-prune 0 --prune
! grep -q "mount point" "$work/bind-prune.err" || fail "bind-prune: $(cat "$work/bind-prune.err")"
grep -qF " 0 pruned" "$work/bind-prune.out" || fail "bind-prune: $(cat "$work/bind-prune.out")"
[ -f "$out/CUDA/12/nccl/2.20.3.lua" ] || fail "bind-prune: CUDA/12/nccl/2.20.3.lua is gone"
note "bind mount: $(tail -n 1 "$work/bind-prune.out")"

# 4. A plain root whose mount is gone: its empty mount point.
unmount_apps
config false
manifest "$out" >"$work/sums.before"
run empty-prune 1 --prune
has empty-prune "'$apps' is an empty directory, but the index of '$out' records 2 modules from it"
has empty-prune "'CUDA/12/nccl/2.20.3'"
has empty-prune "not pruning: the scan could not read '$apps': an empty directory"
manifest "$out" | diff -u "$work/sums.before" - >&2 || fail "empty-prune: the tree changed"
note "empty mount point: --prune refused, the tree unchanged"
