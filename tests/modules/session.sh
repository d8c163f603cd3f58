# tests/modules/session.sh: sourced first in every clean `env -i` shell that
# lib.sh's `session` starts. It sets up the tool's `module` command the way a
# user's shell has it, then forgets its own parameters so that they are not
# in the environment the test compares.
mt_tool=$MT_TOOL mt_out=$MT_OUT
case $mt_tool in
lmod)
        # Lmod's own init: defines and exports module/ml, sets LMOD_CMD, ….
        # shellcheck disable=SC1090
        source "$MT_LMOD_INIT"
        ;;
em)
        # What /usr/share/modules/init/bash amounts to, without installing:
        # modulecmd.tcl prints shell code; its last statement sets the status.
        mt_em_cmd=$MT_EM_CMD mt_tclsh=$MT_TCLSH
        module() { eval "$("$mt_tclsh" "$mt_em_cmd" bash "$@")"; }
        ;;
*)
        echo "session.sh: unknown tool '$mt_tool'" >&2
        exit 1
        ;;
esac
unset MT_TOOL MT_OUT MT_LMOD_INIT MT_EM_CMD MT_TCLSH
export MODULEPATH

snap() { env -0 >"$mt_out/$1.env"; }
step() {
        local mt_name=$1 mt_rc
        shift
        module "$@" >"$mt_out/$mt_name.out" 2>&1
        mt_rc=$?
        echo "$mt_rc" >"$mt_out/$mt_name.rc"
        snap "$mt_name"
        return 0
}
# run NAME CMD...: the same for any command (check_module_tree_syntax, …).
run() {
        local mt_name=$1
        shift
        "$@" >"$mt_out/$mt_name.out" 2>&1
        echo "$?" >"$mt_out/$mt_name.rc"
        return 0
}
