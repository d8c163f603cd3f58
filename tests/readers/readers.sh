#!/bin/bash
# readers.sh: what scan, generate and doctor open, and what they do when a
# file changes under them (doc/HACKING.md "Reliability").
#
# 1. A version.json that is a character device (a FIFO without root), an
#    include/cuda.h that is a FIFO and a bin/nvcc that is a symlink to
#    /dev/null: scan reports each as not-regular-file, and strace shows that
#    none of them is ever opened but with O_PATH (which acts on nothing).
# 1c. A truncated spec.json and easyconfig: `cudamod -v scan` names each,
#    the scan exits 0 and finds every install.
# 2. A library truncated right after cudamod first reads or maps it
#    (shrinkinject.so, an LD_PRELOAD library: certain, not a race): scan
#    reports file-changed, generate still writes the module, doctor notes
#    it; none dies by a signal (SIGBUS was exit 135).
# 3. The same as a race, bounded: a loop truncates and restores the library
#    and a big nvcc while scan runs 30 times, generate and doctor 10 times
#    each; no run ends by a signal.
#
# Needs CUDAMOD_BIN, MKELFSTUB, MKFIXTURE and SHRINKINJECT (meson sets them); strace
# for part 1 (skipped without it).

# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh).
. "$(dirname "$0")/../valgrind.sh"
# shellcheck source=../stress/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../stress/lib.sh"

[ -n "${SHRINKINJECT:-}" ] && [ -f "$SHRINKINJECT" ] || skip "SHRINKINJECT is not set"

root=$work/root
mktree "$root" cuda:12.4.1@cuda-12.4 cuda:12.6.2@special

# --- 1. special files are not opened -------------------------------------------
sp=$root/special
rm -f "$sp/version.json" "$sp/targets/x86_64-linux/include/cuda.h" "$sp/bin/nvcc"
if [ "$(id -u)" -eq 0 ]; then
        mknod "$sp/version.json" c 1 3
        json_kind="a character device"
else
        mkfifo "$sp/version.json"
        json_kind="a FIFO"
fi
mkfifo "$sp/targets/x86_64-linux/include/cuda.h"
ln -s /dev/null "$sp/bin/nvcc"

if command -v strace >/dev/null 2>&1; then
        # LeakSanitizer cannot run under ptrace (the ASan build).
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                timeout 60 strace -f -qq -e trace=open,openat,openat2 -o "$work/strace.log" \
                "$cudamod" scan --json "$sp" >"$work/scan.json" 2>"$work/scan.err" ||
                fail "scan under strace: exit $?: $(cat "$work/scan.err")"
        # The special install alone: the detectors open by names relative to
        # its descriptor, which would not tell its files from another's.
        # Every open of these names (or of what they lead to) is an O_PATH one.
        opened=$(grep -E '"([^"]*/)?(version\.json|cuda\.h|nvcc|/dev/null)"' "$work/strace.log" |
                 grep -v 'O_PATH' || true)
        [ -z "$opened" ] || fail "special files opened for reading:
$opened"
        grep -q 'O_PATH' "$work/strace.log" || fail "no O_PATH open in the trace: the check is not looking"
        # Where fs.protected_hardlinks is 1, a file the listing says is
        # regular (the other install's version.json) is opened once, beneath
        # the install's descriptor (util-file.h's one-open path), not
        # resolved by O_PATH first.
        [ "$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null)" = 1 ] || note "fs.protected_hardlinks is not 1: no one-open path to check"
        [ "$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null)" != 1 ] || {
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                timeout 60 strace -f -qq -e trace=open,openat,openat2 -o "$work/strace-reg.log" \
                "$cudamod" scan --json "$root/cuda-12.4" >/dev/null 2>"$work/scan.err" ||
                fail "scan under strace: exit $?: $(cat "$work/scan.err")"
        grep -qE 'openat\([0-9]+, "version\.json", O_RDONLY\|O_NOCTTY\|O_NONBLOCK\|O_NOFOLLOW\|O_CLOEXEC\) = [0-9]' "$work/strace-reg.log" ||
                fail "a regular version.json was not opened by the one-open path: $(grep -F version.json "$work/strace-reg.log")"
        ! grep -F '"version.json"' "$work/strace-reg.log" | grep -q O_PATH ||
                fail "a version.json listed as regular was resolved through O_PATH too"
        # A soname link in a listed library directory: read with
        # readlinkat, and the regular file it names beside it opened once
        # with O_NOFOLLOW relative to that directory, never through O_PATH.
        reg_real=$(readlink "$root/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12")
        grep -qE "openat\([0-9]+, \"${reg_real//./\\.}\", O_RDONLY\|O_NOCTTY\|O_NONBLOCK\|O_NOFOLLOW\|O_CLOEXEC\) = [0-9]" "$work/strace-reg.log" ||
                fail "the library libcudart.so.12 leads to ($reg_real) was not opened by the one-open path: $(grep -F libcudart "$work/strace-reg.log")"
        ! grep -F 'libcudart' "$work/strace-reg.log" | grep -q O_PATH ||
                fail "a libcudart listed beside its soname link was resolved through O_PATH: $(grep -F libcudart "$work/strace-reg.log" | grep O_PATH)"
        }
else
        note "no strace: the not-opened check is skipped"
        timeout 60 "$cudamod" scan --json "$root" >"$work/scan.json" 2>"$work/scan.err" ||
                fail "scan: exit $?: $(cat "$work/scan.err")"
fi
for want in "'$sp/version.json' is $json_kind, not a regular file" \
            "'$sp/targets/x86_64-linux/include/cuda.h' is a FIFO, not a regular file" \
            "'$sp/bin/nvcc' is a character device, not a regular file"; do
        grep -qF "$want" "$work/scan.json" || fail "scan does not say \"$want\": $(cat "$work/scan.json")"
done
rm -rf "$sp"
note "special files: reported, never opened"

# --- 1b. a modulefile that is a device is not opened ---------------------------
# show and doctor --modulepath read modulefiles: one planted as a character
# device (a FIFO without root) is refused by type, never opened but O_PATH.
# (Regression coverage: discovery already skipped it by stat; what changed
# is that the read also opens through an O_PATH check.)
if command -v strace >/dev/null 2>&1; then
        mp=$work/mp
        mkdir -p "$mp/cuda"
        printf 'setenv("CUDA_HOME", "/x")\n' >"$mp/cuda/12.4.lua"
        if [ "$(id -u)" -eq 0 ]; then mknod "$mp/cuda/12.9.lua" c 1 3; else mkfifo "$mp/cuda/12.9.lua"; fi
        rc=0
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                timeout 60 strace -f -qq -e trace=open,openat,openat2 -o "$work/strace-show.log" \
                "$cudamod" show --modulepath "$mp" cuda/12.9 >"$work/show.out" 2>"$work/show.err" || rc=$?
        # Discovery takes only regular files; the read itself checks again
        # (a file swapped for a device after the listing is refused too).
        [ $rc -ne 0 ] || fail "show of a device modulefile succeeded: $(cat "$work/show.out")"
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                timeout 60 strace -f -qq -e trace=open,openat,openat2 -o "$work/strace-doctor.log" \
                "$cudamod" doctor --modulepath "$mp" "$root/cuda-12.4/targets/x86_64-linux/lib" \
                >"$work/doctor.out" 2>&1 || true
        opened=$(grep -hE '"[^"]*/cuda/12\.9\.lua"' "$work/strace-show.log" "$work/strace-doctor.log" |
                 grep -v 'O_PATH' || true)
        [ -z "$opened" ] || fail "a device modulefile was opened for reading:
$opened"
        note "a modulefile that is a device: refused, never opened"
fi

# --- 1c. metadata that cannot be parsed is left, said with -v ----------------------
# The metadata fixture's Spack NVSHMEM 3.0.6 has a spec.json cut off in a
# string; its EasyBuild NVSHMEM gets an easyconfig cut off in its
# description here. `cudamod -v scan` names each file, where and why, and
# that it was ignored; the scan exits 0 and finds every install, those two
# with what their own files tell (the spec.json's NVSHMEM: no CUDA; the
# easyconfig's: CUDA 12.6 from its prefix's name), the rest as without -v.
meta=$work/metadata
"$MKFIXTURE" metadata "$meta" || fail "mkfixture metadata: exit $?"
spec=$meta/spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0/nvshmem-3.0.6-4-a2g3sd4lm5xw6fxq7eqlb4rr7mjsoqhv/.spack/spec.json
ebdir=$meta/easybuild/software/NVSHMEM/3.2.5-gompi-2024a-CUDA-12.6.0
eb=$ebdir/easybuild/NVSHMEM-3.2.5-gompi-2024a-CUDA-12.6.0.eb
[ -f "$spec" ] && [ -f "$eb" ] || fail "the metadata fixture has moved: no $spec or $eb"
"$cudamod" scan --json "$meta/spack" "$meta/easybuild" >"$work/meta-whole.json" 2>/dev/null ||
        fail "scan of the metadata fixture: exit $?"
head -c 200 "$eb" >"$eb.cut" && mv "$eb.cut" "$eb"
rc=0
"$cudamod" -v scan --json "$meta/spack" "$meta/easybuild" >"$work/meta.json" 2>"$work/meta.err" || rc=$?
[ $rc -eq 0 ] || fail "scan with a truncated spec.json and easyconfig: exit $rc: $(cat "$work/meta.err")"
grep -qxF "cudamod: $spec:5:28: premature end of input near '\"vers': ignored" "$work/meta.err" ||
        fail "no -v line for the truncated spec.json:
$(cat "$work/meta.err")"
grep -qxF "cudamod: $eb:8: unterminated string: ignored" "$work/meta.err" ||
        fail "no -v line for the truncated easyconfig:
$(cat "$work/meta.err")"
# Without -v, not a word of either.
"$cudamod" scan --json "$meta/spack" "$meta/easybuild" >/dev/null 2>"$work/meta-quiet.err" ||
        fail "scan without -v: exit $?"
! grep -qE 'spec\.json|\.eb' "$work/meta-quiet.err" || fail "a metadata line without -v: $(cat "$work/meta-quiet.err")"
python3 - "$work/meta-whole.json" "$work/meta.json" "$ebdir" <<'PY' || fail "the scan with unreadable metadata"
import json, sys
whole = {i["prefix"]: i for i in json.load(open(sys.argv[1]))["installs"]}
cut = {i["prefix"]: i for i in json.load(open(sys.argv[2]))["installs"]}
assert set(whole) == set(cut), (sorted(whole), sorted(cut))
eb = cut[sys.argv[3]]
assert eb["cuda_version"] == "12.6" and eb["evidence"] == {}, eb
assert whole[sys.argv[3]]["cuda_version"] == "12.6.0", whole[sys.argv[3]]
for p, i in cut.items():
    if p != sys.argv[3]:
        assert i == whole[p], (p, i, whole[p])
broken = [i for p, i in cut.items() if "nvshmem-3.0.6" in p][0]
assert broken["cuda_major"] is None, broken
PY
note "a truncated spec.json and easyconfig: named with -v, left, the scan exits 0"

# --- 2. a library truncated while it is read (certain) ----------------------------
libdir=$root/cuda-12.4/targets/x86_64-linux/lib
lib=$(readlink -f "$libdir/libcudart.so.12")
orig=$work/libcudart.orig
# Bigger than a page: a mapping of it truncated to 64 bytes faults.
"$MKELFSTUB" --soname libcudart.so.12 --pad 1000000 "$orig"
cp "$orig" "$lib"

# Under ASan its runtime must come first among the preloaded libraries.
preload=$SHRINKINJECT
asan=$(ldd "$cudamod" 2>/dev/null | awk '/libasan/ { print $3; exit }')  || asan=""
[ -z "$asan" ] || preload="$asan $SHRINKINJECT"
shrunk() {
        cp "$orig" "$lib"
        LD_PRELOAD=$preload CUDAMOD_SHRINK_FILE=$lib "$@"
}
signalled() {
        [ "$1" -ge 128 ] && [ "$1" -ne 255 ]
}

rc=0
shrunk "$cudamod" scan --json "$root" >"$work/s.json" 2>"$work/s.err" || rc=$?
signalled $rc && fail "scan of a shrinking library: exit $rc (signal $((rc - 128)))"
[ $rc -eq 0 ] || fail "scan of a shrinking library: exit $rc: $(cat "$work/s.err")"
grep -q '"file-changed"' "$work/s.json" || fail "no file-changed problem: $(cat "$work/s.json")"
grep -qF "'$libdir/libcudart.so.12' changed while it was read" "$work/s.json" ||
        fail "the problem does not name the library: $(cat "$work/s.json")"

rc=0
shrunk "$cudamod" generate -o "$work/out" "$root" >"$work/g.out" 2>"$work/g.err" || rc=$?
signalled $rc && fail "generate over a shrinking library: exit $rc (signal $((rc - 128)))"
[ $rc -eq 0 ] || fail "generate over a shrinking library: exit $rc: $(cat "$work/g.err")"
grep -qF "changed while it was read" "$work/g.err" || fail "generate does not warn: $(cat "$work/g.err")"

rc=0
shrunk "$cudamod" doctor "$libdir" >"$work/d.out" 2>"$work/d.err" || rc=$?
signalled $rc && fail "doctor of a shrinking library: exit $rc (signal $((rc - 128)))"
[ $rc -le 1 ] || fail "doctor of a shrinking library: exit $rc: $(cat "$work/d.err")"
grep -qF "changed while it was read" "$work/d.out" || fail "doctor does not note it: $(cat "$work/d.out")"
note "a library truncated while read: a problem, no signal"

# --- 3. the race, bounded ---------------------------------------------------------------
# nvcc with 8 MB of .rodata (scan searches it for its release string): the
# old mapping reader died in some 1 run of 10 here.
nvcc=$root/cuda-12.4/bin/nvcc
nvcc_orig=$work/nvcc.orig
"$MKELFSTUB" --string "Cuda compilation tools, release 12.4, V12.4.131" --pad 8000000 "$nvcc_orig"
cp "$orig" "$lib"
(
        while :; do
                cat "$orig" >"$lib"
                cat "$nvcc_orig" >"$nvcc"
                sleep 0.003
                truncate -s 100 "$lib" "$nvcc"
        done
) &
racer=$!
# Under valgrind each run takes a second or more: fewer rounds (the
# certain case above is what valgrind checks; this one is for the race).
scans=30 others=10
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || scans=6 others=2
runs=0
for i in $(seq "$scans"); do
        rc=0
        "$cudamod" scan "$root" >/dev/null 2>&1 || rc=$?
        signalled $rc && { kill "$racer"; fail "scan run $i: exit $rc (signal $((rc - 128)))"; }
        runs=$((runs + 1))
done
for i in $(seq "$others"); do
        rc=0
        "$cudamod" generate -o "$work/race-out" "$root" >/dev/null 2>&1 || rc=$?
        signalled $rc && { kill "$racer"; fail "generate run $i: exit $rc (signal $((rc - 128)))"; }
        rc=0
        "$cudamod" doctor "$libdir" >/dev/null 2>&1 || rc=$?
        signalled $rc && { kill "$racer"; fail "doctor run $i: exit $rc (signal $((rc - 128)))"; }
        runs=$((runs + 2))
done
kill "$racer"
wait "$racer" 2>/dev/null || true
note "$runs runs against a library truncated and restored in a loop: no signal"
