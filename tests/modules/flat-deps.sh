#!/usr/bin/env bash
# tests/modules/flat-deps.sh TOOL: in the flat layout cuDNN and NCCL require
# a cuda module of their CUDA major (doc/guide.md, "What a module sets"; Lmod
# depends_on(between("cuda", "N", "N.999999")), Tcl prereq cuda@N:N.999999),
# on the demo tree (expect/demo.txt):
#
# Lmod (LMOD.md §1.2):
#   load cudnn/8.9.7 with nothing loaded -> cuda/11.8 loaded for it; unload
#     cudnn/8.9.7 unloads that cuda again
#   load cuda/12.9, then cudnn/8.9.7 -> cuda swapped to cuda/11.8
#   load cudnn/9.7.1 nccl with nothing loaded -> cuda/12.9 once
# Environment Modules 5.2.0 (auto_handling, on by default; LMOD.md §3):
#   load cudnn/8.9.7 with nothing loaded -> "Loading requirement": cuda/11.8;
#     unload cudnn/8.9.7 -> "Unloading useless requirement" cuda/11.8
#   load cuda/12.9, then cudnn/8.9.7 -> refused (cuda/11.8 would conflict
#     with the loaded cuda/12.9), nothing changes
#   load cudnn/9.7.1 nccl with nothing loaded -> cuda/12.9 once
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: flat-deps.sh lmod|em}
MT_SELF="$tool-flat-deps"
need "$tool"
demo_tree "$tool" flat
X_MP=$X_OUT
sdir=$MT_TMP/s

session "$tool" "$sdir" "$X_MP" <<'EOF'
snap base
step cudnn8 load cudnn/8.9.7
step unload8 unload cudnn/8.9.7
step cuda12 load cuda/12.9
step swap load cudnn/8.9.7
step purge1 purge
step cudnn9 load cudnn/9.7.1 nccl
step unload9 unload nccl cudnn/9.7.1
step purge2 purge
EOF
check_state "load cudnn/8.9.7 (nothing loaded)" "$sdir" cudnn8 flat cuda/11.8 cudnn/8.9.7
check_state "then unload cudnn/8.9.7" "$sdir" unload8 flat
check_state "load cuda/12.9" "$sdir" cuda12 flat cuda/12.9
if [ "$tool" = lmod ]; then
        check_state "then load cudnn/8.9.7 (a CUDA 11 build)" "$sdir" swap flat cuda/11.8 cudnn/8.9.7
else
        if rc_is "$sdir/swap" 0; then
                fail "load cudnn/8.9.7 with cuda/12.9 loaded: EM 5.2.0 refuses it, but it succeeded"
        fi
        grep -qi 'conflict' "$sdir/swap.out" ||
                fail "load cudnn/8.9.7 with cuda/12.9 loaded: no conflict error: $(cat "$sdir/swap.out")"
        env_delta "$sdir/cuda12.env" "$sdir/swap.env"
        check_unchanged "load cudnn/8.9.7 with cuda/12.9 loaded (refused)" || true
        env_value "$sdir/swap.env" LOADEDMODULES || true
        [ "$VAL" = cuda/12.9 ] || fail "load cudnn/8.9.7 with cuda/12.9 loaded (refused): LOADEDMODULES is '$VAL'"
fi
check_state "then purge" "$sdir" purge1 flat
check_state "load cudnn/9.7.1 nccl (nothing loaded)" "$sdir" cudnn9 flat cuda/12.9 cudnn/9.7.1 nccl/2.21.5
check_state "then unload nccl cudnn/9.7.1" "$sdir" unload9 flat
check_state "then purge" "$sdir" purge2 flat
no_pwned || true
mt_finish
