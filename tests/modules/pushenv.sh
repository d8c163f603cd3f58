#!/usr/bin/env bash
# tests/modules/pushenv.sh TOOL: the root variables (CUDA_HOME, CUDNN_ROOT,
# ...) are pushed (Lmod's and Environment Modules 5's pushenv), so that an
# unload gives back what the user had before the load (issue 33, item 3;
# doc/guide.md "What a module sets"), on the demo's flat tree:
#   CUDA_HOME=/usr/local/cuda; load cuda/11.8 -> the module's root
#   unload cuda                                 -> /usr/local/cuda again
#   load cuda/11.8; swap cuda/11.8 cuda/12.9    -> cuda/12.9's root
#   unload cuda                                 -> /usr/local/cuda again
#                                                  (Lmod; Environment Modules
#                                                  unsets it: see below)
#   load cuda/12.9 cudnn/9.7.1; unload cudnn    -> CUDNN_ROOT unset again,
#                                                  CUDA_HOME still 12.9's
#   unload cuda                                 -> /usr/local/cuda again
#   CUDA_HOME unset before: load, unload        -> unset after
# Every state is the demo's expectation (expect/demo.txt) relative to the
# start, so a CUDA_HOME left at the module's value, or unset, is a failure.
#
# lmod: the Lua tree, and the Tcl tree as Lmod reads it (tcl2lua maps
# pushenv to Lmod's since 8.x: /usr/share/lmod/*/libexec/tcl2lua.tcl);
# under Debian's Lmod and (meson's lmod9 twin) Lmod 9.2.
# em: the Tcl tree under Environment Modules (pushenv: 5.1). And what a
# tool without pushenv (Environment Modules 4) makes of the Tcl module:
# its `info commands pushenv` guard falls back to setenv.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: pushenv.sh lmod|em}
MT_SELF="$tool-pushenv"
need "$tool"
X_ROOT=$MT_TMP/fx
mkdir -p "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }
load_expect "$MT_LIB_DIR/expect/demo.txt"

# unloaded WHAT STEPDIR STEP: the step left the start's environment
# (CUDA_HOME=/usr/local/cuda given back), or where the module uses setenv
# (NO_PUSHENV=1: Lmod before 8.7.6 reading Tcl), CUDA_HOME unset and
# nothing else changed.
unloaded() {
        if [ "${NO_PUSHENV:-}" != 1 ]; then
                check_state "$1" "$2" "$3" flat
                env_value "$2/$3.env" CUDA_HOME || fail "$1: CUDA_HOME unset, not /usr/local/cuda"
                return 0
        fi
        rc_is "$2/$3" 0 || fail "$1: failed: $(cat "$2/$3.out")"
        env_delta "$2/base.env" "$2/$3.env"
        EXPECT=([CUDA_HOME]=$MT_UNSET)
        check_delta "$1 (setenv)" || true
}

# run_cases FORMAT-TOOL: the steps above in one session with CUDA_HOME set
# before, one without.
run_cases() {
        local gen_tool=$1 sdir=$MT_TMP/s-$1 udir=$MT_TMP/u-$1
        X_OUT=$MT_TMP/out-$gen_tool
        X_MP=$X_OUT
        generate "$gen_tool" flat "$X_OUT" "$X_ROOT/sw"
        session "$tool" "$sdir" "$X_MP" <<'EOF'
export CUDA_HOME=/usr/local/cuda
snap base
step load load cuda/11.8
step unload unload cuda
step load1 load cuda/11.8
step swap swap cuda/11.8 cuda/12.9
step unload1 unload cuda
EOF
        local what="$tool reading the $(tool_format "$gen_tool") tree, CUDA_HOME=/usr/local/cuda before"
        check_state "$what: load cuda/11.8" "$sdir" load flat cuda/11.8
        unloaded "$what: then unload cuda" "$sdir" unload
        check_state "$what: load cuda/11.8 again" "$sdir" load1 flat cuda/11.8
        check_state "$what: then swap cuda/11.8 cuda/12.9" "$sdir" swap flat cuda/12.9
        if [ "$tool" = lmod ]; then
                unloaded "$what: then unload cuda" "$sdir" unload1
        else
                # Environment Modules 5.2 to 5.5 lose the value from before
                # in a swap: the unload half empties __MODULES_PUSHENV_<VAR>
                # and the load half, in the same command, finds it defined
                # and saves no first value (tcl/mfcmd.tcl pushenv,
                # `![isEnvVarDefined $pushvar]`). The unload after the swap
                # then unsets CUDA_HOME, as setenv did; the value after the
                # swap is right.
                rc_is "$sdir/unload1" 0 || fail "$what: unload after the swap failed"
                env_value "$sdir/unload1.env" CUDA_HOME &&
                        fail "$what: unload after a swap gave CUDA_HOME '$VAL': has Environment Modules fixed its swap? (then check_state here)"
        fi

        session "$tool" "$sdir-2" "$X_MP" <<'EOF'
export CUDA_HOME=/usr/local/cuda
snap base
step load load cuda/12.9 cudnn/9.7.1
step unloadd unload cudnn
step unload unload cuda
EOF
        check_state "$what: load cuda/12.9 cudnn/9.7.1" "$sdir-2" load flat cuda/12.9 cudnn/9.7.1
        check_state "$what: then unload cudnn" "$sdir-2" unloadd flat cuda/12.9
        unloaded "$what: then unload cuda" "$sdir-2" unload

        session "$tool" "$udir" "$X_MP" <<'EOF'
unset CUDA_HOME
snap base
step load load cuda/12.9
step unload unload cuda
EOF
        what="$tool reading the $(tool_format "$gen_tool") tree, CUDA_HOME unset before"
        check_state "$what: load cuda/12.9" "$udir" load flat cuda/12.9
        check_state "$what: then unload cuda" "$udir" unload flat
        env_value "$udir/unload.env" CUDA_HOME && fail "$what: unload left CUDA_HOME set to '$VAL'"
        return 0
}

if [ "$tool" = lmod ]; then
        say "under Lmod $(lmod_version "$(lmod_init)" || echo '?')"
        run_cases lmod
        # Lmod before 8.7.6 reading Tcl leaves the module's own value in
        # the environment its tcl2lua runs in, so that Lmod's pushenv saves
        # it as the one before (TACC/Lmod#584, fixed by reset-env): the
        # template takes setenv there, and an unload unsets CUDA_HOME.
        v=$(lmod_version "$(lmod_init)") || v=0
        if version_lt "$v" 8.7.6; then NO_PUSHENV=1; fi
        run_cases em
        NO_PUSHENV=
else
        say "under Environment Modules $(em_version || echo '?')"
        run_cases em
        # A Tcl interpreter with setenv and without pushenv, as Environment
        # Modules before 5.1: the guard takes setenv, the module still loads.
        f=$X_OUT/cuda/12.9
        out=$(printf '%s\n' 'proc unknown {args} {}' \
                'proc setenv {k v} {puts "setenv $k $v"}' \
                "source {$f}" | "$(tclsh_path)" 2>&1) || fail "cuda/12.9 without pushenv: $out"
        grep -qx "setenv CUDA_HOME $X_ROOT/sw/cuda-12.9" <<<"$out" ||
                fail "cuda/12.9 without pushenv did not fall back to setenv CUDA_HOME: $out"
fi
mt_finish
