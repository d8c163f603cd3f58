#!/usr/bin/env bash
# tests/modules/driver-check.sh TOOL: the cuda module's driver check
# (config driver_check) under the real tool (lmod: Debian's Lmod or, as
# lmod9-driver-check, Lmod 9.2; em: Environment Modules). The driver's
# version file is provided in a private mount namespace (a tmpfs over
# /proc/driver or /sys/module holding nvidia/version), never by editing the
# module. A driver older than CUDA 12.9's major needs: the message, once,
# and `module load` succeeds under `set -e`; with driver_check: error the
# load is refused; older than the release (535, and the open kernel
# module's line of 570): the PTX message; newer: silent; no file (a login
# node): silent; driver_check: off: no check in the module at all.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: driver-check.sh lmod|em}
MT_SELF=$tool-driver-check
need "$tool"
need_driver_ns

fx=$MT_TMP/fx
"$MKFIXTURE" demo "$fx" >/dev/null
for mode in warn error off; do
        printf 'defaults: { cuda: latest }\ndriver_check: %s\n' "$mode" >"$MT_TMP/$mode.yaml"
        run_cudamod --config "$MT_TMP/$mode.yaml" generate -o "$MT_TMP/$mode" --format "$(tool_format "$tool")" \
                "$fx" >"$MT_TMP/$mode.log" 2>&1 || { cat "$MT_TMP/$mode.log"; die "generate ($mode) failed"; }
done
# Lmod reads Tcl modules too (tcl2lua): the same checks, the same refusal.
if [ "$tool" = lmod ]; then
        for mode in warn error; do
                run_cudamod --config "$MT_TMP/$mode.yaml" generate -o "$MT_TMP/$mode-tcl" --format tcl \
                        "$fx" >"$MT_TMP/$mode-tcl.log" 2>&1 || { cat "$MT_TMP/$mode-tcl.log"; die "generate ($mode, tcl) failed"; }
        done
fi
grep -q 'nvidia/version' "$MT_TMP/off/Core/cuda/$(mod_file "$tool" 12.9)" &&
        fail "driver_check: off: the module still reads the driver's version"

printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n' >"$MT_TMP/proc-535"
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 16 01:26:46 UTC 2025\n' >"$MT_TMP/proc-570-open"
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n' >"$MT_TMP/proc-470"
printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.82.07  Wed Aug 27 18:52:37 UTC 2025\n' >"$MT_TMP/proc-580"
printf '470.256.02\n' >"$MT_TMP/sys-470"

# load NAME TREE WHERE FILE: `module load cuda/12.9` from TREE under `set -e`
# in a clean environment of a private mount namespace where FILE is
# /proc/driver/nvidia/version (WHERE proc) or /sys/module/nvidia/version
# (WHERE sys), or neither (WHERE none; lib.sh's with_driver); NAME.out/.rc.
load() {
        local name=$1 tree=$2 where=$3 file=${4:-} rc=0
        local proc="" sys=""
        case $where in
        proc) proc=$(<"$file") ;;
        sys) sys=$(<"$file") ;;
        esac
        with_driver "$proc" "$sys" env -i \
                HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$tree/Core" \
                MT_TOOL="$tool" MT_LMOD_INIT="$(lmod_init)" MT_EM_CMD="$(em_modulecmd || true)" \
                MT_TCLSH="$(tclsh_path || true)" bash --noprofile --norc -c '
                        set -e
                        if [ "$MT_TOOL" = lmod ]; then
                                source "$MT_LMOD_INIT"
                        else
                                module() { eval "$("$MT_TCLSH" "$MT_EM_CMD" bash "$@")"; }
                        fi
                        module load cuda/12.9
                        echo "loaded CUDA_HOME=${CUDA_HOME:-}"' >"$MT_TMP/$name.out" 2>&1 || rc=$?
        echo "$rc" >"$MT_TMP/$name.rc"
        [ "$rc" != 99 ] || die "$name: the driver file could not be mounted"
}
# expect NAME RC WANT: the load's status, and WANT ("" for silence: no
# line about the driver) once in its output.
expect() {
        local name=$1 want_rc=$2 want=$3 rc n out
        rc=$(rc_of "$MT_TMP/$name")
        out=$(<"$MT_TMP/$name.out")
        out=${out//$'\n'/ }
        out=$(printf '%s' "$out" | tr -s ' ')
        [ "$rc" = "$want_rc" ] || fail "$name: exit status $rc, want $want_rc: $out"
        n=$({ grep -o 'the NVIDIA driver on this node' "$MT_TMP/$name.out" || true; } | wc -l)
        if [ -z "$want" ]; then
                [ "$n" = 0 ] || fail "$name: a driver message where none was due: $out"
        else
                [ "$n" = 1 ] || fail "$name: the driver message $n times, want once: $out"
                [[ $out == *"$want"* ]] || fail "$name: want '$want' in: $out"
        fi
        if [ "$want_rc" = 0 ]; then
                grep -q '^loaded CUDA_HOME=/' "$MT_TMP/$name.out" || fail "$name: the module did not load: $out"
        else
                grep -q '^loaded' "$MT_TMP/$name.out" && fail "$name: the load went on after the refusal: $out"
        fi
        return 0
}

too_old='the NVIDIA driver on this node (470.256.02) is older than CUDA 12.9 needs (525.60.13 or newer): programs built with it fail with cudaErrorInsufficientDriver'
load old-warn "$MT_TMP/warn" proc "$MT_TMP/proc-470"
expect old-warn 0 "$too_old"
load old-sys "$MT_TMP/warn" sys "$MT_TMP/sys-470"
expect old-sys 0 "$too_old"
load old-error "$MT_TMP/error" proc "$MT_TMP/proc-470"
[ "$(rc_of "$MT_TMP/old-error")" != 0 ] || fail "old-error: driver_check: error did not refuse the load"
grep -q '^loaded' "$MT_TMP/old-error.out" && fail "old-error: the load went on after the refusal"
grep -q 'older than CUDA 12.9 needs (525.60.13 or newer)' "$MT_TMP/old-error.out" ||
        fail "old-error: no reason given: $(<"$MT_TMP/old-error.out")"
load old-off "$MT_TMP/off" proc "$MT_TMP/proc-470"
expect old-off 0 ""
load ptx-535 "$MT_TMP/warn" proc "$MT_TMP/proc-535"
expect ptx-535 0 "(535.104.05) is older than CUDA 12.9 shipped with (575.51.03): programs run through minor-version compatibility, but PTX of this toolkit will not JIT on this driver"
load ptx-570-open "$MT_TMP/error" proc "$MT_TMP/proc-570-open"
expect ptx-570-open 0 "(570.86.15) is older than CUDA 12.9 shipped with (575.51.03)"
load new "$MT_TMP/error" proc "$MT_TMP/proc-580"
expect new 0 ""
load none "$MT_TMP/error" none
expect none 0 ""
if [ "$tool" = lmod ]; then
        load tcl-old-warn "$MT_TMP/warn-tcl" proc "$MT_TMP/proc-470"
        expect tcl-old-warn 0 "$too_old"
        load tcl-ptx-535 "$MT_TMP/warn-tcl" proc "$MT_TMP/proc-535"
        expect tcl-ptx-535 0 "(535.104.05) is older than CUDA 12.9 shipped with (575.51.03)"
        # tcl2lua ends the file at a break and the load succeeds with nothing
        # set: the refusal must be an error there.
        load tcl-old-error "$MT_TMP/error-tcl" proc "$MT_TMP/proc-470"
        [ "$(rc_of "$MT_TMP/tcl-old-error")" != 0 ] || fail "tcl-old-error: Lmod loaded the Tcl module despite driver_check: error: $(<"$MT_TMP/tcl-old-error.out")"
        grep -q '^loaded' "$MT_TMP/tcl-old-error.out" && fail "tcl-old-error: the load went on after the refusal"
        tr -s '\n ' '  ' <"$MT_TMP/tcl-old-error.out" | grep -q 'older than CUDA 12.9 needs (525.60.13 or newer)' ||
                fail "tcl-old-error: no reason given: $(<"$MT_TMP/tcl-old-error.out")"
        load tcl-none "$MT_TMP/error-tcl" none
        expect tcl-none 0 ""
fi
mt_finish
