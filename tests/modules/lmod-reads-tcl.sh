#!/usr/bin/env bash
# tests/modules/lmod-reads-tcl.sh: Lmod reads the Tcl tree written for
# Environment Modules (LMOD.md §3, "Dual-format trees"): the demo's
# hierarchical Tcl tree gives Lmod users exactly the environment of the Lua
# tree (expect/demo.txt), including the CUDA swap. The Tcl cuDNN/NCCL files
# carry an Environment-Modules-only `prereq cuda@N:N.999999`, which Lmod's
# Tcl reader cannot take and must skip.
source "$(dirname "$0")/lib.sh"

MT_SELF=lmod-reads-tcl
need lmod
X_ROOT=$MT_TMP/fx
mkdir -p "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }
X_OUT=$MT_TMP/out-hier
generate em hierarchical "$X_OUT" "$X_ROOT/sw"
load_expect "$MT_LIB_DIR/expect/demo.txt"
X_MP=$X_OUT/Core
sdir=$MT_TMP/s

session lmod "$sdir" "$X_MP" <<'EOS'
snap base
step load load cuda/12.9 cudnn nccl
step swap swap cuda cuda/11.8
step purge purge
EOS
check_state "Tcl tree: load cuda/12.9 cudnn nccl" "$sdir" load hier cuda/12.9 cudnn/9.7.1 nccl/2.21.5
check_state "Tcl tree: then swap cuda cuda/11.8" "$sdir" swap hier cuda/11.8 cudnn/8.9.7
check_state "Tcl tree: then purge" "$sdir" purge hier
mt_finish
