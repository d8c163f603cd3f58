#!/usr/bin/env bash
# tests/modules/lmod-reads-tcl.sh: Lmod reads the Tcl tree written for
# Environment Modules (LMOD.md §3, "Dual-format trees"): the demo's
# hierarchical Tcl tree gives Lmod users exactly the environment of the Lua
# tree (expect/demo.txt), including the CUDA swap. The Tcl cuDNN/NCCL files
# carry an Environment-Modules-only `prereq cuda@N:N.999999`, which Lmod's
# Tcl reader cannot take and must skip.
# And `cudamod show --trust-modulefiles` has this Lmod evaluate the Tcl
# tree: every line of Lmod's own `module show` of each module is
# understood (evaluate-show.c fails on one that is not), and the module's
# own LD_LIBRARY_PATH entries are the ones Lmod's show names.
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
# --- Lmod's show of the Tcl tree, read by cudamod ------------------------------
lmod_cmd=$(dirname "$(lmod_init)")/../libexec/lmod
[ -x "$lmod_cmd" ] || die "no lmod next to $(lmod_init)"
for mods in "cuda/12.9" "cuda/11.8" "cuda/12.9 cudnn" "cuda/12.9 nccl" "cuda/11.8 cudnn"; do
        # shellcheck disable=SC2086 # the module list is split on purpose
        if ! env -u MODULES_CMD LMOD_CMD="$lmod_cmd" "$CUDAMOD_BIN" show --trust-modulefiles --json \
                --modulepath "$X_MP" $mods >"$MT_TMP/trusted.json" 2>"$MT_TMP/trusted.err"; then
                fail "show --trust-modulefiles $mods through Lmod: $(cat "$MT_TMP/trusted.err")"
                continue
        fi
        grep -q '"LD_LIBRARY_PATH"' "$MT_TMP/trusted.json" ||
                fail "show --trust-modulefiles $mods through Lmod: no LD_LIBRARY_PATH: $(cat "$MT_TMP/trusted.json")"
done
mt_finish
