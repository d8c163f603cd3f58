#!/usr/bin/env bash
# tests/modules/hier-swap.sh TOOL: changing the CUDA of a hierarchical tree
# with cuDNN and NCCL loaded (and cuSPARSELt, for CUDA 12 only) (doc/guide.md, "What a module sets": "module swap cuda/11.8 swaps them
# to the CUDA 11 builds"), on the demo tree (expect/demo.txt).
#
# Lmod (LMOD.md §2.1, §2.2): when MODULEPATH changes it reloads what it can
# from the new level and marks the rest inactive:
#   load cuda/12.9 cudnn nccl; swap cuda cuda/11.8
#     -> cuda/11.8 cudnn/8.9.7 (CUDA 11 build), nccl inactive, and exactly the
#        environment of `load cuda/11.8 cudnn/8.9.7`
#   load cuda/12.9 (family auto-swap back)
#     -> cudnn/9.7.1 again and nccl active again: `load cuda/12.9 cudnn/9.7.1 nccl/2.21.5`
#   load cuda/11.8 instead of swap: the same as the swap
#   unload cuda -> cudnn and nccl inactive, the environment back to the start
#
# Environment Modules 5.2.0 and 5.5.0 (verified: Debian 12's and 13's): it
# does not unload what a level made reachable when the level goes, so
# cudamod's Tcl cuDNN/NCCL modules carry `prereq cuda@N:N.999999`, which
# makes them dependents of the cuda module:
#   load cuda/11.8 while cuda/12.9 is loaded -> refused (family conflict),
#     nothing changes
#   switch cuda cuda/11.8 -> "Unloading dependent: nccl/2.21.5 cudnn/9.7.1",
#     and exactly cuda/11.8 is left: never a CUDA 12 cuDNN beside a CUDA 11.
#     The status depends on the release: 5.2.0 tries to reload them from
#     the CUDA 11 level, says that it cannot ("Reload of dependent
#     cudnn/9.7.1 failed") and returns 1; 5.5.0 no longer tries a dependent
#     that the new MODULEPATH lacks and returns 0. Releases in between (not
#     tried) may do either, but the status must match what they said.
#   load cudnn -> the CUDA 11 build, cudnn/8.9.7
#   unload cuda -> cudnn goes with it ("Unloading dependent")
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: hier-swap.sh lmod|em}
MT_SELF="$tool-hier-swap"
need "$tool"
demo_tree "$tool" hier
X_MP=$X_OUT/Core
sdir=$MT_TMP/s

if [ "$tool" = lmod ]; then
        session lmod "$sdir" "$X_MP" <<'EOF'
snap base
step load load cuda/12.9 cudnn nccl
step swap swap cuda cuda/11.8
step list --terse list
step back load cuda/12.9
step purge1 purge
step load2 load cuda/12.9 cudnn nccl
step load11 load cuda/11.8
step unload unload cuda
step list2 --terse list
step purge2 purge
step loadlt load cuda/12.9 cusparselt
step swaplt swap cuda cuda/11.8
step backlt load cuda/12.9
EOF
        check_state "load cuda/12.9 cudnn nccl" "$sdir" load hier cuda/12.9 cudnn/9.7.1 nccl/2.21.5
        check_state "then swap cuda cuda/11.8" "$sdir" swap hier cuda/11.8 cudnn/8.9.7
        grep -q 'cudnn/9.7.1 => cudnn/8.9.7' "$sdir/swap.out" ||
                fail "swap: Lmod did not report reloading cudnn/9.7.1 => cudnn/8.9.7: $(cat "$sdir/swap.out")"
        grep -A2 'Inactive Modules' "$sdir/swap.out" | grep nccl >/dev/null ||
                fail "swap: Lmod did not report nccl inactive: $(cat "$sdir/swap.out")"
        check_state "then load cuda/12.9 (back)" "$sdir" back hier cuda/12.9 cudnn/9.7.1 nccl/2.21.5
        grep -A2 'Activating Modules' "$sdir/back.out" | grep nccl/2.21.5 >/dev/null ||
                fail "back to cuda/12.9: Lmod did not report nccl/2.21.5 active again: $(cat "$sdir/back.out")"
        check_state "then purge" "$sdir" purge1 hier
        check_state "load cuda/12.9 cudnn nccl (again)" "$sdir" load2 hier cuda/12.9 cudnn/9.7.1 nccl/2.21.5
        check_state "then load cuda/11.8 (family swap)" "$sdir" load11 hier cuda/11.8 cudnn/8.9.7
        check_state "then unload cuda" "$sdir" unload hier
        grep -A3 'Inactive Modules' "$sdir/unload.out" | grep cudnn >/dev/null ||
                fail "unload cuda: Lmod did not report cudnn inactive: $(cat "$sdir/unload.out")"
        check_state "then purge" "$sdir" purge2 hier
        # The rest of the stack the same way: the demo's cuSPARSELt is for
        # CUDA 12 only, so a swap to 11.8 leaves it inactive, and the way
        # back activates it.
        check_state "load cuda/12.9 cusparselt" "$sdir" loadlt hier cuda/12.9 cusparselt/0.8.1
        check_state "then swap cuda cuda/11.8" "$sdir" swaplt hier cuda/11.8
        grep -A2 'Inactive Modules' "$sdir/swaplt.out" | grep cusparselt >/dev/null ||
                fail "swap: Lmod did not report cusparselt inactive: $(cat "$sdir/swaplt.out")"
        check_state "then load cuda/12.9 (back)" "$sdir" backlt hier cuda/12.9 cusparselt/0.8.1
        grep -A2 'Activating Modules' "$sdir/backlt.out" | grep cusparselt/0.8.1 >/dev/null ||
                fail "back to cuda/12.9: Lmod did not report cusparselt/0.8.1 active again: $(cat "$sdir/backlt.out")"
else
        em_ver=$(em_version) || die "cannot tell the release of Environment Modules ($(em_modulecmd))"
        say "Environment Modules $em_ver"
        # check_switch STEP DEPENDENT...: the status and messages of a
        # switch that unloads the DEPENDENTs, as this release does it.
        check_switch() {
                local step=$1 d out rc want
                shift
                out=$(cat "$sdir/$step.out")
                rc=$(rc_of "$sdir/$step")
                grep -q "Unloading dependent: $*\$" <<<"$out" ||
                        fail "$step: no 'Unloading dependent: $*': $out"
                if version_lt "$em_ver" 5.3; then
                        want=1 # tries the reload, which fails
                elif version_lt "$em_ver" 5.5; then
                        want=$(grep -q 'Reload of dependent .* failed' <<<"$out" && echo 1 || echo 0)
                else
                        want=0 # the reload is not tried
                fi
                [ "$rc" = "$want" ] ||
                        fail "$step: Environment Modules $em_ver returned $rc, want $want: $out"
                for d; do
                        if [ "$want" = 1 ]; then
                                grep -q "Reload of dependent $d failed" <<<"$out" ||
                                        fail "$step: rc 1 without 'Reload of dependent $d failed': $out"
                        elif grep -q "ERROR\|Reload of dependent" <<<"$out"; then
                                fail "$step: rc 0, but an error or a failed reload of $d is reported: $out"
                        fi
                done
        }
        session em "$sdir" "$X_MP" <<'EOF'
snap base
step load load cuda/12.9 cudnn nccl
step load11 load cuda/11.8
step switch switch cuda cuda/11.8
step cudnn11 load cudnn
step unload unload cuda
step purge1 purge
step loadlt load cuda/12.9 cusparselt
step switchlt switch cuda cuda/11.8
EOF
        check_state "load cuda/12.9 cudnn nccl" "$sdir" load hier cuda/12.9 cudnn/9.7.1 nccl/2.21.5
        # Refused: rc 1, and nothing changed.
        if rc_is "$sdir/load11" 0; then
                fail "load cuda/11.8 with cuda/12.9 loaded: EM 5.2.0 refuses it (family conflict), but it succeeded"
        fi
        grep -q 'conflict' "$sdir/load11.out" ||
                fail "load cuda/11.8 with cuda/12.9 loaded: no conflict error: $(cat "$sdir/load11.out")"
        env_delta "$sdir/load.env" "$sdir/load11.env"
        check_unchanged "load cuda/11.8 with cuda/12.9 loaded (refused)" || true
        check_switch switch nccl/2.21.5 cudnn/9.7.1
        CHECK_ANY_RC=1 check_state "then switch cuda cuda/11.8" "$sdir" switch hier cuda/11.8
        check_state "then load cudnn" "$sdir" cudnn11 hier cuda/11.8 cudnn/8.9.7
        check_state "then unload cuda" "$sdir" unload hier
        grep -q 'Unloading dependent: cudnn/8.9.7' "$sdir/unload.out" ||
                fail "unload cuda: cudnn/8.9.7 was not unloaded with it: $(cat "$sdir/unload.out")"
        check_state "then purge" "$sdir" purge1 hier
        # cuSPARSELt (CUDA 12 only) goes with its CUDA on a switch.
        check_state "load cuda/12.9 cusparselt" "$sdir" loadlt hier cuda/12.9 cusparselt/0.8.1
        check_switch switchlt cusparselt/0.8.1
        CHECK_ANY_RC=1 check_state "then switch cuda cuda/11.8" "$sdir" switchlt hier cuda/11.8
fi
no_pwned || true
mt_finish
