#!/usr/bin/env bash
# tests/faults/faults.sh: `cudamod generate` under injected faults.
#
# Tree: the demo installs plus a cuDNN 9.5 (CUDA 12) and an NCCL for CUDA
# 11. State A: config a.yaml (SITE_X=a on every module). State B: config
# b.yaml (SITE_X=b: every modulefile differs from A's, the modulercs aside),
# the extra cuDNN and NCCL gone and a CUDA 13.0 and its NCCL added, so that
# the A -> B regeneration (`generate --prune`) creates files in a new
# directory, updates files, keeps the modulercs, prunes files and removes a
# directory they emptied.
#
# 1. Sweeps (faultinject.so, an LD_PRELOAD library, see its header): for each
#    fault kind OP:WHAT, count the OP calls below OUT in a clean A -> B run,
#    then for N = 1, 2, ... every one of them, rewind OUT to A and run A -> B
#    with the Nth call failing (OP:WHAT:N; with "+", the Nth and all later
#    ones: a disk that stays full). Each time: exit status 1 (not a signal,
#    no sanitizer report), stderr names the path that failed (the target of
#    a temporary file) and the errno text, nothing on stdout, every
#    modulefile byte-identical to its A or B version, every .lua parses
#    (luac5.1 -p), no temporary file left, and the index describes the tree:
#    each file it lists holds the recorded sha256 and each file there is is
#    listed (tests/stress/treecheck.py "fault"), except where writing the
#    index is what failed: it is then the one before the run, and every
#    file not as it records is B's version, which the next run adopts
#    ("fault-stale"). Then a run without faults exits 0 and leaves exactly B
#    (index included) and no temporary file.
#    Two kinds of fault are absorbed, and the run must then succeed and
#    leave exactly B: syncfs failing (it reports errors of any file on the
#    filesystem; generate then fsyncs each of its files, and a failure of
#    those is swept too), and an open failing while the leftovers of an
#    earlier killed run are looked for (best effort; the writes that follow
#    open what they need themselves).
#    Signals at every OP call (OP:TERM:N...): SIGTERM, SIGINT and SIGHUP end
#    the run by that signal (status 128+N) with "interrupted by SIGxxx" on
#    stderr, every file A's or B's, no temporary file and an index that
#    describes the tree; SIGHUP ignored (nohup) is ignored; SIGKILL leaves
#    every file A's or B's and the index A's or B's.
# 2. A read-only output directory and subdirectory (chmod while generate
#    waits for the lock; as user nobody when run as root).
# 3. OUT replaced while generate waits for its lock (the script holds it):
#    by a regular file, a symlink to another directory, nothing: exit 1, a
#    message naming OUT, nothing written anywhere; a symlink to the same
#    directory: the run goes ahead.
# 4. Locks: one left by a generate killed with SIGKILL while it held it
#    (the next run neither waits nor fails); .cudamod.lock a directory, a
#    symlink, a dangling symlink or a FIFO: exit 1, a clear message, nothing
#    written; SIGTERM while waiting for the lock; the lock file is 0600 and
#    user nobody can neither open nor flock it, so a generate does not wait
#    (as root); a lock held by another process and --lock-timeout 1: exit 1
#    within seconds, the holder's PID on stderr, nothing written.
# 5. A directory removed while generate is stopped between staging its
#    files and renaming them (rename:STOP:1): exit 1, the message names the
#    file, its directory and the errno text (it said 'unknown error').
set -euo pipefail
# Under `meson test --setup valgrind`, bash itself would be the program
# checked (and it leaks): leave at once, without a leak check (exec).
[ "${CUDAMOD_UNDER_VALGRIND:-}" = 1 ] && exec sh -c 'echo "skipped under valgrind" >&2; exit 77'
. "$(dirname "$0")/../stress/lib.sh"

[ -n "${FAULTINJECT:-}" ] && [ -f "$FAULTINJECT" ] || skip "FAULTINJECT (faultinject.so) is not set"
command -v flock >/dev/null 2>&1 || skip "flock(1) is needed"

# Under AddressSanitizer its runtime must be the first library loaded.
preload=$FAULTINJECT
asan=$(ldd "$cudamod" 2>/dev/null | awk '/libasan/ { print $3; exit }')
[ -z "$asan" ] || preload="$asan $FAULTINJECT"

root=$work/root out=$work/out
write_ab_configs "$work/cfg"
mktree "$root" demo "cudnn:9.5.0:12@sw/cudnn-9.5.0" "nccl:2.18.3:11.0@sw/nccl-2.18.3"
gen_state a A
rm -rf "$root/sw/cudnn-9.5.0" "$root/sw/nccl-2.18.3"
mktree "$root" "cuda:13.0.0@sw/cuda-13.0.0" "nccl:2.27.3:13.0@sw/nccl-2.27.3"
gen_state b B
lua_syntax "$work/A" || fail "state A does not parse"
lua_syntax "$work/B" || fail "state B does not parse"
treecheck_start
tc load A "$work/A" || fail "loading A: $tc_reply"
nA=${tc_reply#ok }
tc load B "$work/B" || fail "loading B: $tc_reply"
note "A: $nA, B: ${tc_reply#ok } (the index included)"

declare -A strerr=(
        [ENOSPC]="No space left on device" [EIO]="Input/output error" [EACCES]="Permission denied"
        [EPERM]="Operation not permitted" [EROFS]="Read-only file system" [EDQUOT]="Disk quota exceeded"
)
declare -A signum=([TERM]=15 [INT]=2 [HUP]=1 [KILL]=9)
runs=0

# The state letter of process $1 (R, S, T, Z, ...), from /proc/PID/stat
# (its third field, after the name in parentheses): no ps needed, which a
# minimal system (a fresh trixie chroot) does not have.
proc_state() {
        local stat
        stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
        stat=${stat##*) }
        printf '%s' "${stat%% *}"
}

# faulty RULES [ignore-hup]: the A -> B run on OUT under the rules (with
# SIGHUP ignored, as nohup does, when asked); sets rc. (Few processes per
# run: on a busy machine each one costs more than a check.)
faulty() {
        : >"$work/fault.log"
        rc=0
        # The signal's disposition is the test's, not the caller's: a suite
        # started under nohup would otherwise ignore every SIGHUP sent (bash
        # cannot undo an ignore it inherited; env --default-signal can).
        local hup=--default-signal=HUP
        [ "${2:-}" != ignore-hup ] || hup=--ignore-signal=HUP
        # (bash's own "Killed", "Terminated"... notices to /dev/null)
        { (
                exec env "$hup" LD_PRELOAD="$preload" CUDAMOD_FAULT_DIR="$out" CUDAMOD_FAULT="$1" \
                        CUDAMOD_FAULT_LOG="$work/fault.log" \
                        "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root"
        ) >"$work/run.out" 2>"$work/run.err"; } 2>/dev/null || rc=$?
        runs=$((runs + 1))
        err=$(<"$work/run.err")
}

# scan_log OP: from the fault log, inj: the path of the first OP call made
# to fail; inj_index: 1 when a call on the index (or its temporary file)
# was made to fail; n_fsync: the fsync calls made.
scan_log() {
        local o n p r
        inj= inj_index=0 n_fsync=0
        while read -r o n p r; do
                [ "$o" != fsync ] || n_fsync=$((n_fsync + 1))
                [ "$r" != ok ] || continue
                [ -n "$inj" ] || [ "$o" != "$1" ] || inj=$p
                case $p in *cudamod-index.json*) inj_index=1 ;; esac
        done <"$work/fault.log"
}

has() { # STRING...: stderr holds one of them
        local s
        for s; do [[ $err == *"$s"* ]] && return 0; done
        return 1
}

no_crash() { # LABEL
        if has AddressSanitizer LeakSanitizer 'runtime error' 'Segmentation fault' 'faultinject:'; then
                printf '%s\n' "$err" >&2
                fail "$1: a crash report on stderr"
        fi
}

# lua_parse: luac5.1 -p on every .lua below OUT (no-op without luac5.1).
shopt -s globstar nullglob dotglob
have_luac=0
command -v luac5.1 >/dev/null 2>&1 && have_luac=1
lua_parse() {
        [ $have_luac = 1 ] || return 0
        local f files=()
        for f in "$out"/**/*.lua; do
                [ -f "$f" ] && [ ! -L "$f" ] && files+=("$f")
        done
        [ ${#files[@]} -eq 0 ] || luac5.1 -p -- "${files[@]}"
}

# target_of PATH: what a message about PATH (below OUT) names: the path
# relative to OUT, a temporary file's target for a temporary file, OUT
# itself for OUT.
target_of() {
        local p=$1 base dir
        if [ "$p" = "$out" ]; then
                echo "$out"
                return
        fi
        p=${p#"$out"/}
        base=${p##*/}
        dir=${p%/*}
        [ "$dir" != "$p" ] || dir=
        case $base in
        .cudamod-tmp.*)
                base=${base#.cudamod-tmp.}
                base=${base%.??????}
                ;;
        esac
        echo "${dir:+$dir/}$base"
}

# finish LABEL: a run without faults completes the tree: exactly B.
finish() {
        local r=0
        gen b --prune >"$work/finish.out" 2>&1 || r=$?
        [ $r -eq 0 ] || { cat "$work/finish.out" >&2; fail "$1: the next run without faults exits $r"; }
        tc check "$out" done || fail "$1: after the next run without faults: $tc_reply"
}

# A clean A -> B run, counted: how many calls of each kind a sweep covers.
tc rewind "$out" A || fail "rewind: $tc_reply"
faulty ""
[ $rc -eq 0 ] || { cat "$work/run.err" >&2; fail "the A -> B run under faultinject.so fails ($rc)"; }
tc check "$out" done || fail "the A -> B run does not give B: $tc_reply"
declare -A count=([write]=0 [fsync]=0 [syncfs]=0 [open]=0 [creat]=0 [mkdir]=0 [rename]=0 [unlink]=0 [fchmod]=0)
while read -r op _; do count[$op]=$((count[$op] + 1)); done <"$work/fault.log"
[ "${count[write]}" -gt 0 ] || fail "faultinject.so counted no write below OUT: it is not working"
cp "$work/fault.log" "$work/clean.log"
[ -z "${FAULTS_KEEP_LOG:-}" ] || cp "$work/clean.log" "$FAULTS_KEEP_LOG"
note "calls below OUT in an A -> B run: $(for op in "${!count[@]}"; do printf '%s %s, ' $op "${count[$op]}"; done)"
# The opens made while looking for leftovers: from the third open of the
# index (a peek at the directories it names) to the fourth (its real read);
# the first is generate reading the names the index records, the second
# the check for other tools' modulefiles before the write, which fails on
# any open that fails (what the tree holds is not known).
read -r leftover_first leftover_end < <(awk '$1 == "open" && $3 ~ /\/\.cudamod-index\.json$/ { n[++k] = $2 } END { print n[3], n[4] }' "$work/clean.log")
[ -n "$leftover_end" ] || fail "the index is not opened four times in an A -> B run (the names, the site check or the leftover scan moved?)"

# check_failed LABEL OP WHAT [ABSORBABLE]: the checks after a run with an
# injected errno.
check_failed() {
        local label=$1 op=$2 what=$3 absorbable=${4:-0} want mode=fault
        no_crash "$label"
        scan_log "$op"
        [ -n "$inj" ] || fail "$label: the fault was not injected (the run made fewer calls than a clean run)"
        if [ "$op" = syncfs ]; then
                # Alone, a failed syncfs falls back to an fsync of each file.
                [ $rc -eq 0 ] || { printf '%s\n' "$err" >&2; fail "$label: exit $rc: the fsync fallback did not take over"; }
                [ "$n_fsync" -gt "${count[fsync]}" ] || fail "$label: no more fsync calls than with syncfs working: no fallback"
        fi
        # Removing a directory that still holds files: its failure is the
        # expected one (the permission is checked before the emptiness).
        if [ "$op" = unlink ] && [ -d "$inj" ] && [ -n "$(ls -A "$inj")" ]; then
                absorbable=1
        fi
        if [ $rc -eq 0 ] && [ "$absorbable" = 1 ]; then
                tc check "$out" done || fail "$label: exit 0 after an absorbed fault, but: $tc_reply"
                absorbed=$((absorbed + 1))
                return
        fi
        [ $rc -lt 128 ] || fail "$label: killed by signal $((rc - 128))"
        [ $rc -eq 1 ] || { printf '%s\n' "$err" >&2; fail "$label: exit status $rc, expected 1"; }
        has "${strerr[$what]}" || { printf '%s\n' "$err" >&2; fail "$label: stderr does not say '${strerr[$what]}'"; }
        # Files in OUT itself are named by their full path, OUT by its path
        # (in quotes, or in front of the message).
        want=$(target_of "$inj")
        has "'$want'" "'$out/$want'" "$out/$want: " ||
                { [ "$want" = "$out" ] && has "'$out" "$out: "; } ||
                { printf '%s\n' "$err" >&2; fail "$label: stderr does not name '$want' (the call failed on $inj)"; }
        [ ! -s "$work/run.out" ] || { cat "$work/run.out" >&2; fail "$label: a report on stdout after a failure"; }
        # Writing the index failed: it may be the one before the run.
        if [ $inj_index = 1 ]; then
                mode=fault-stale
                stale=$((stale + 1))
        fi
        # Removing a temporary file failed: it may remain.
        case ${inj##*/} in .cudamod-tmp.*) [ "$op" != unlink ] || mode=fault-tmp ;; esac
        tc check "$out" $mode || { printf '%s\n' "$err" >&2; fail "$label: $tc_reply"; }
        lua_parse || fail "$label: a .lua file does not parse"
        [ "${tcf[state]}" != mixed ] || mixed=$((mixed + 1))
        failed=$((failed + 1))
}

# sweep OP WHAT [+] [EXTRA_RULES]: fail every OP call in turn.
sweep() {
        local op=$1 what=$2 plus=${3:-} extra=${4:-} total n rules absorbable label o
        failed=0 absorbed=0 stale=0 mixed=0
        total=${count[$op]}
        if [ -n "$extra" ]; then
                # The calls made once the extra rules apply.
                tc rewind "$out" A || fail "rewind: $tc_reply"
                faulty "$extra"
                total=0
                while read -r o _; do [ "$o" != "$op" ] || total=$((total + 1)); done <"$work/fault.log"
                extra=",$extra"
        fi
        [ "$total" -gt 0 ] || fail "$op:$what: no $op call to fail"
        for ((n = 1; n <= total; n++)); do
                rules="$op:$what:$n$plus$extra"
                label="$rules (of $total)"
                absorbable=0
                if [ "$op" = syncfs ]; then
                        absorbable=1
                elif [ "$op" = open ] && [ -z "$plus" ] && [ $n -ge "$leftover_first" ] && [ $n -lt "$leftover_end" ]; then
                        absorbable=1
                fi
                tc rewind "$out" A || fail "rewind: $tc_reply"
                faulty "$rules"
                check_failed "$label" "$op" "$what" $absorbable
                finish "$label"
        done
        note "$op:$what:N$plus${extra:+ (with ${extra#,})}: $total faults injected: $failed exit 1 ($mixed left a mix of A and B, $stale the index before the run), $absorbed absorbed (exit 0, exactly B)"
        total_faults=$((total_faults + total))
}

# sig_sweep OP SIG: raise SIG at every OP call in turn.
sig_sweep() {
        local op=$1 sig=$2 n total=${count[$1]} label mode
        local -A seen=()
        for ((n = 1; n <= total; n++)); do
                label="$op:$sig:$n (of $total)"
                tc rewind "$out" A || fail "rewind: $tc_reply"
                faulty "$op:$sig:$n"
                no_crash "$label"
                [ $rc -eq $((128 + ${signum[$sig]})) ] ||
                        { printf '%s\n' "$err" >&2; fail "$label: exit status $rc, expected $((128 + ${signum[$sig]})) (SIG$sig)"; }
                if [ $sig = KILL ]; then
                        mode=kill
                else
                        has "interrupted by SIG$sig" ||
                                { printf '%s\n' "$err" >&2; fail "$label: stderr does not say it was interrupted by SIG$sig"; }
                        mode=term-strict
                fi
                tc check "$out" $mode || { printf '%s\n' "$err" >&2; fail "$label: $tc_reply"; }
                lua_parse || fail "$label: a .lua file does not parse"
                # A signal while the new files are staged (not the index's):
                # none of them is put in place.
                scan_log "$op"
                case $op:$inj in
                *cudamod-index.json*) ;;
                write:* | creat:* | mkdir:* | syncfs:* | fchmod:*)
                        [ "${tcf[state]}" = A ] || fail "$label: SIG$sig while staging, yet the tree is ${tcf[state]}, not A"
                        ;;
                esac
                seen[${tcf[state]}]=$((${seen[${tcf[state]}]:-0} + 1))
                finish "$label"
        done
        note "$op:$sig:N: $total signals, each exit by SIG$sig; left A ${seen[A]:-0}, mixed ${seen[mixed]:-0}, B ${seen[B]:-0} times"
        total_signals=$((total_signals + total))
}

total_faults=0 total_signals=0
# --- 1. sweeps
sweep write ENOSPC
sweep write ENOSPC +
sweep write EIO
sweep fsync EIO
sweep fsync EIO +
sweep syncfs EIO
sweep fsync EIO "" "syncfs:EIO:1"
sweep creat EACCES
sweep creat ENOSPC +
sweep open EACCES
sweep mkdir EACCES
sweep rename EIO
sweep rename EACCES
sweep unlink EACCES
sweep fchmod EPERM
for op in write fsync syncfs creat mkdir rename unlink; do
        sig_sweep $op TERM
done
sig_sweep rename INT
sig_sweep rename HUP
for op in write rename unlink; do
        sig_sweep $op KILL
done
# SIGHUP ignored by whoever started generate (nohup) stays ignored.
tc rewind "$out" A || fail "rewind: $tc_reply"
faulty "rename:HUP:2" ignore-hup
[ $rc -eq 0 ] || { printf '%s\n' "$err" >&2; fail "SIGHUP ignored by the caller: generate exits $rc"; }
tc check "$out" done || fail "SIGHUP ignored by the caller: $tc_reply"
note "sweeps: $total_faults errors and $total_signals signals injected, $runs runs"

# wait_for_waiting PID: until generate says it waits for the lock (or ends).
# Empty run.err before starting that generate in the background: its own
# redirection truncates the file only once the job runs, and until then
# this would read the previous case's "waiting" (under load, the case went
# on before generate had even opened OUT).
wait_for_waiting() {
        while ! grep -q 'waiting' "$work/run.err"; do
                kill -0 "$1" 2>/dev/null || { cat "$work/run.err" >&2; fail "generate ended instead of waiting for the lock"; }
                sleep 0.02
        done
}
lock_hold() {
        exec 8<"$out/.cudamod.lock"
        flock -x 8
}
lock_release() {
        flock -u 8
        exec 8<&-
}

# --- 2. a read-only output directory, and subdirectory, mid-run
if ! unprivileged; then
        note "running as root and cannot run as an unprivileged user: the read-only cases are skipped"
else
        chmod -R a+rX "$root" "$work/cfg"
        for dir in Core/cuda .; do
                label="'$dir' made read-only while generate waited for the lock"
                tc rewind "$out" A || fail "rewind: $tc_reply"
                [ ${#as[@]} -eq 0 ] || chown -R nobody: "$out"
                lock_hold
                : >"$work/run.err"
                "${as[@]}" "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" \
                        >"$work/run.out" 2>"$work/run.err" &
                pid=$!
                wait_for_waiting $pid
                chmod 555 "$out/$dir"
                lock_release
                rc=0
                wait $pid || rc=$?
                chmod 755 "$out/$dir"
                no_crash "$label"
                [ $rc -eq 1 ] || { cat "$work/run.err" >&2; fail "$label: exit status $rc, expected 1"; }
                grep -qF "Permission denied" "$work/run.err" || fail "$label: stderr does not say 'Permission denied'"
                if [ "$dir" = . ]; then
                        # The modulefiles are written; the index is not.
                        grep -qF "'$out/.cudamod-index.json'" "$work/run.err" ||
                                { cat "$work/run.err" >&2; fail "$label: stderr does not name the index"; }
                        tc check "$out" fault-stale || fail "$label: $tc_reply"
                else
                        grep -qF "'$dir/" "$work/run.err" ||
                                { cat "$work/run.err" >&2; fail "$label: stderr does not name a file in '$dir'"; }
                        tc check "$out" fault || fail "$label: $tc_reply"
                fi
                lua_parse || fail "$label: a .lua file does not parse"
                note "$label: exit 1, $(tr '\n' ' ' <"$work/run.err" | head -c 200); left ${tc_reply#ok }"
                # Back to root, whose runs refuse a lock file of nobody's.
                [ ${#as[@]} -eq 0 ] || chown -R 0:0 "$out"
                finish "$label"
        done
fi

# --- 3. OUT replaced while generate waits for its lock
for how in file symlink-elsewhere gone symlink-same; do
        label="OUT replaced ($how) while generate waited for the lock"
        rm -rf "$out" "$work/moved" "$work/elsewhere"
        tc rewind "$out" A || fail "rewind: $tc_reply"
        cp -a "$work/A" "$work/elsewhere"
        lock_hold
        : >"$work/run.err"
        gen b --prune >"$work/run.out" 2>"$work/run.err" &
        pid=$!
        wait_for_waiting $pid
        mv "$out" "$work/moved"
        case $how in
        file) echo precious >"$out" ;;
        symlink-elsewhere) ln -s elsewhere "$out" ;;
        symlink-same) ln -s moved "$out" ;;
        gone) ;;
        esac
        moved_before=$(stat_list "$work/moved")
        elsewhere_before=$(stat_list "$work/elsewhere")
        lock_release
        rc=0
        wait $pid || rc=$?
        no_crash "$label"
        if [ $how = symlink-same ]; then
                [ $rc -eq 0 ] || { cat "$work/run.err" >&2; fail "$label: exit $rc; OUT still names the same directory"; }
                tc check "$work/moved" done || fail "$label: $tc_reply"
        else
                [ $rc -eq 1 ] || { cat "$work/run.err" >&2; fail "$label: exit status $rc, expected 1"; }
                grep -qF "'$out' was moved or replaced while this run waited for its lock" "$work/run.err" ||
                        { cat "$work/run.err" >&2; fail "$label: stderr does not say that '$out' was replaced"; }
                [ "$(stat_list "$work/moved")" = "$moved_before" ] || fail "$label: the directory moved away was written"
                [ "$(stat_list "$work/elsewhere")" = "$elsewhere_before" ] || fail "$label: another directory was written"
                [ $how != file ] || [ "$(cat "$out")" = precious ] || fail "$label: the file put in OUT's place changed"
                [ ! -s "$work/run.out" ] || fail "$label: a report on stdout"
        fi
        note "$label: exit $rc: $(tr '\n' ' ' <"$work/run.err" | head -c 240)"
done
rm -rf "$out" "$work/moved" "$work/elsewhere"

# --- 4. locks
# A generate killed while it holds the lock (stopped mid-write first, to be
# sure it does): the lock file stays, the lock does not.
label="a lock left by a generate killed with SIGKILL"
tc rewind "$out" A || fail "rewind: $tc_reply"
: >"$work/fault.log"
env LD_PRELOAD="$preload" CUDAMOD_FAULT_DIR="$out" CUDAMOD_FAULT="write:STOP:3" CUDAMOD_FAULT_LOG="$work/fault.log" \
        "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" >"$work/run.out" 2>"$work/run.err" &
pid=$!
until [ "$(proc_state $pid)" = T ]; do
        kill -0 $pid 2>/dev/null || { cat "$work/run.err" >&2; fail "$label: generate ended before it stopped"; }
        sleep 0.02
done
flock -n "$out/.cudamod.lock" true 2>/dev/null && fail "$label: the stopped generate does not hold the lock"
kill -9 $pid
rc=0
wait $pid 2>/dev/null || rc=$?
[ $rc -eq 137 ] || fail "$label: exit $rc, expected 137"
[ -f "$out/.cudamod.lock" ] || fail "$label: no lock file left (the test proves nothing)"
tc check "$out" kill || fail "$label: $tc_reply"
[ "${tcf[tmp]}" -gt 0 ] || fail "$label: no temporary file left by the kill (the test proves nothing)"
gen b --prune >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err" >&2; fail "$label: the next run fails"; }
grep -q 'waiting' "$work/run.err" && fail "$label: the next run waited for the dead run's lock"
tc check "$out" done || fail "$label: $tc_reply"
note "$label: the next run took the lock at once, removed the temporary files and wrote B"

# .cudamod.lock that is not a regular file.
echo keep >"$work/victim"
for kind in directory symlink dangling-symlink fifo; do
        label=".cudamod.lock a $kind"
        tc rewind "$out" A || fail "rewind: $tc_reply"
        rm -f "$out/.cudamod.lock"
        case $kind in
        directory) mkdir "$out/.cudamod.lock" ;;
        symlink) ln -s "$work/victim" "$out/.cudamod.lock" ;;
        dangling-symlink) ln -s "$work/nowhere" "$out/.cudamod.lock" ;;
        fifo) mkfifo "$out/.cudamod.lock" ;;
        esac
        before=$(stat_list "$out")
        rc=0
        # A guard against a hang on the FIFO, not a timing check.
        timeout 300 "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" \
                >"$work/run.out" 2>"$work/run.err" || rc=$?
        [ $rc -ne 124 ] || fail "$label: generate hangs"
        no_crash "$label"
        [ $rc -eq 1 ] || { cat "$work/run.err" >&2; fail "$label: exit status $rc, expected 1"; }
        grep -qF "'$out/.cudamod.lock' is a" "$work/run.err" && grep -qF "not a regular file" "$work/run.err" ||
                { cat "$work/run.err" >&2; fail "$label: stderr does not say what the lock file is"; }
        [ "$(stat_list "$out")" = "$before" ] || fail "$label: the tree changed"
        [ "$(cat "$work/victim")" = keep ] || fail "$label: the symlink's target changed"
        [ ! -e "$work/nowhere" ] || fail "$label: the dangling symlink's target was created"
        note "$label: exit 1: $(tr '\n' ' ' <"$work/run.err" | head -c 200)"
        rm -rf "$out/.cudamod.lock"
done

# SIGTERM while waiting for the lock: nothing written.
label="SIGTERM while waiting for the lock"
tc rewind "$out" A || fail "rewind: $tc_reply"
: >"$out/.cudamod.lock"
lock_hold
: >"$work/run.err"
"$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" >"$work/run.out" 2>"$work/run.err" &
pid=$!
wait_for_waiting $pid
kill -TERM $pid
rc=0
wait $pid || rc=$?
lock_release
[ $rc -eq 143 ] || { cat "$work/run.err" >&2; fail "$label: exit $rc, expected 143"; }
grep -qF "interrupted by SIGTERM" "$work/run.err" || { cat "$work/run.err" >&2; fail "$label: no message"; }
tc check "$out" term-strict || fail "$label: $tc_reply"
[ "${tcf[state]}" = A ] || fail "$label: the tree changed"
finish "$label"
note "$label: exit by SIGTERM, nothing written"
# A lock others cannot take.
label="the lock file"
tc rewind "$out" A || fail "rewind: $tc_reply"
chmod 644 "$out/.cudamod.lock" # as an earlier version left it
gen b --prune >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err" >&2; fail "$label: generate fails"; }
[ "$(stat -c %a "$out/.cudamod.lock")" = 600 ] || fail "$label: mode $(stat -c %a "$out/.cudamod.lock"), not 600"
if [ "$(id -u)" -eq 0 ] && unprivileged && [ ${#as[@]} -gt 0 ]; then
        # nobody tries to hold it for 30 s; generate must not notice.
        "${as[@]}" flock -x -n "$out/.cudamod.lock" sleep 30 >"$work/nobody.out" 2>&1 &
        holder=$!
        sleep 0.2
        rc=0
        timeout 20 "$cudamod" --config "$work/cfg/b.yaml" generate --prune -o "$out" "$root" \
                >"$work/run.out" 2>"$work/run.err" || rc=$?
        kill $holder 2>/dev/null || true
        wait $holder 2>/dev/null || true
        [ $rc -eq 0 ] || { cat "$work/run.err" "$work/nobody.out" >&2; fail "$label: generate exits $rc while nobody tries to hold the lock"; }
        grep -q 'waiting' "$work/run.err" && fail "$label: generate waited for a lock nobody cannot take"
        note "$label: 0600; nobody cannot take it: $(head -c 120 "$work/nobody.out")"
fi
label="--lock-timeout with the lock held"
# flock(1) holds it while its child sleeps: /proc/locks names flock.
flock -x "$out/.cudamod.lock" sleep 4 &
holder=$!
while flock -n "$out/.cudamod.lock" true; do sleep 0.02; done
rc=0
start=$(ms)
timeout 60 "$cudamod" --config "$work/cfg/b.yaml" generate --lock-timeout 1 -o "$out" "$root" \
        >"$work/run.out" 2>"$work/run.err" || rc=$?
took=$(( $(ms) - start ))
wait $holder || true
[ $rc -ne 124 ] || fail "$label: generate hangs"
[ $rc -eq 1 ] || { cat "$work/run.err" >&2; fail "$label: exit $rc, expected 1"; }
grep -qF "is still locked by PID $holder (flock) after 1 s" "$work/run.err" ||
        { cat "$work/run.err" >&2; fail "$label: stderr does not name PID $holder (flock)"; }
grep -q "another cudamod run" "$work/run.err" && fail "$label: flock(1) blamed as another cudamod run"
[ ! -s "$work/run.out" ] || fail "$label: a report on stdout"
note "$label: exit 1 after $took ms: $(tr '\n' ' ' <"$work/run.err" | head -c 240)"

# --- 5. a directory removed between staging and rename
for victim in Core/cuda CUDA/11/cudnn; do
        label="'$victim' removed between staging and rename"
        rm -rf "$out"
        : >"$work/fault.log"
        env LD_PRELOAD="$preload" CUDAMOD_FAULT_DIR="$out" CUDAMOD_FAULT="rename:STOP:1" CUDAMOD_FAULT_LOG="$work/fault.log" \
                "$cudamod" --config "$work/cfg/b.yaml" generate -o "$out" "$root" >"$work/run.out" 2>"$work/run.err" &
        pid=$!
        until [ "$(proc_state $pid)" = T ]; do
                kill -0 $pid 2>/dev/null || { cat "$work/run.err" >&2; fail "$label: generate ended before it stopped"; }
                sleep 0.02
        done
        rm -rf "${out:?}/$victim"
        kill -CONT $pid
        rc=0
        wait $pid || rc=$?
        no_crash "$label"
        [ $rc -eq 1 ] || { cat "$work/run.err" >&2; fail "$label: exit $rc, expected 1"; }
        grep -qF "its directory '$victim' went away: No such file or directory" "$work/run.err" ||
                { cat "$work/run.err" >&2; fail "$label: stderr does not name '$victim' and the errno"; }
        note "$label: exit 1: $(tr '\n' ' ' <"$work/run.err" | head -c 200)"
done
note "ok: $runs runs under faultinject.so"
