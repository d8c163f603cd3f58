#!/usr/bin/env bash
# tests/modules/show-parity.sh TOOL
#
# `cudamod show --json` against the real tool (ISSUE 4 item 3; LMOD.md §5.3
# for the capture): for every fixture of tests/modules/expect/ (the demo
# tree and every scan layout), both layouts, every generated module, and
# the cuda+cudnn+nccl combinations, the environment `show` reports equals
# what `module load` gives in a clean shell, variable by variable
# (MODULEPATH included, the tools' bookkeeping left out). A load the tool
# refuses must be refused by show too.
#   lmod: Lua trees, show's own sandbox against Lmod.
#   em:   Tcl trees, show's Tcl safe interpreter against EM's `module`
#         (MODULES_CMD is set only for the sessions; show does not use it).
# Under valgrind (tests/valgrind.sh), every 8th case.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: show-parity.sh lmod|em}
MT_SELF="show-parity-$tool"
need "$tool"
command -v python3 >/dev/null || { say "SKIP: python3 missing"; exit 77; }
MODULES_CMD=$(em_modulecmd || true)
export MODULES_CMD
# show finds tclsh through PATH: the sessions' PATH, plus tclsh's
# directory when it is elsewhere.
SHOW_PATH=/usr/bin:/bin
tclsh_dir=$(dirname "$(tclsh_path || echo /usr/bin/tclsh)")
case :$SHOW_PATH: in *:"$tclsh_dir":*) ;; *) SHOW_PATH+=:$tclsh_dir ;; esac

ext=$([ "$tool" = lmod ] && echo .lua || true)
n_cases=0

# modules_in DIR: the module names (name/version) of one modulepath dir.
modules_in() {
        (cd "$1" 2>/dev/null && find . -mindepth 2 -maxdepth 2 \( -type f -o -type l \) \
                ! -name '.*' -printf '%P\n' | sed "s/${ext:-\$^}\$//" | sort)
}

# check_cases LABEL MODULEPATH CASE...: each CASE a space-separated module
# list; one tool session for all (between cases the environment is put
# back as it was by bash: the tools keep their state there, and a purge
# would cost a tool run), then show for each; the environments are
# compared at the end, in one python3 run (parity.tsv).
parity=$MT_TMP/parity.tsv
: >"$parity"
check_cases() {
        local label=$1 mp=$2 i=0 c
        shift 2
        local sdir=$MT_TMP/s-$label
        # shellcheck disable=SC2016 # expanded in the session
        {
                echo 'snap base'
                echo 'mt_base=$(export -p)'
                for c in "$@"; do
                        printf 'step load%d load %s\n' "$i" "$c"
                        printf '%s\n' 'for mt_v in $(compgen -e); do unset "$mt_v"; done; eval "$mt_base"'
                        i=$((i + 1))
                done
        } | session "$tool" "$sdir" "$mp"
        i=0
        for c in "$@"; do
                local j=$sdir/show$i.json rc
                read -r -a mods <<<"$c"
                n_cases=$((n_cases + 1))
                env -i HOME="$MT_TMP/home" PATH="$SHOW_PATH" TERM=dumb MODULEPATH="$mp" \
                        MODULES_CMD="$MODULES_CMD" "$CUDAMOD_BIN" show --json "${mods[@]}" >"$j" 2>"$j.err" &&
                        rc=0 || rc=$?
                if ! rc_is "$sdir/load$i" 0; then
                        [ "$rc" -ne 0 ] || fail "$label: module load $c fails with the tool, but show succeeds"
                elif [ "$rc" -ne 0 ]; then
                        fail "$label: show $c failed (rc $rc): $(cat "$j.err")"
                else
                        printf '%s\t%s\t%s\t%s\n' "$label: show $c" "$sdir/base.env" "$sdir/load$i.env" "$j" >>"$parity"
                fi
                i=$((i + 1))
        done
}

for fixture in $(cd "$MT_LIB_DIR/expect" && ls *.txt | sed 's/\.txt$//'); do
        X_ROOT=$MT_TMP/fx-$fixture
        mkdir "$X_ROOT"
        "$MKFIXTURE" "$fixture" "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
                { cat "$MT_TMP/mkfixture.log"; die "mkfixture $fixture failed"; }
        read -r -a rel <<<"$("$MKFIXTURE" --list | awk -v f="$fixture" '$1 == f { $1 = ""; print }')"
        roots=()
        for r in "${rel[@]}"; do roots+=("$X_ROOT/$r"); done
        for layout in hierarchical flat; do
                out=$MT_TMP/out-$fixture-$layout
                generate "$tool" "$layout" "$out" "${roots[@]}"
                cases=()
                if [ "$layout" = flat ]; then
                        mp=$out
                        mapfile -t all < <(modules_in "$out")
                        cases+=("${all[@]}")
                        # The defaults together, as a user types them.
                        names=$(printf '%s\n' "${all[@]}" | cut -d/ -f1 | sort -u | tr '\n' ' ')
                        [ -n "$names" ] && cases+=("$names")
                else
                        mp=$out/Core
                        mapfile -t core < <(modules_in "$out/Core")
                        cases+=("${core[@]}")
                        for c in "${core[@]}"; do
                                [[ $c == cuda/* ]] || continue
                                major=${c#cuda/}
                                major=${major%%.*}
                                mapfile -t level < <(modules_in "$out/CUDA/$major")
                                for m in "${level[@]}"; do cases+=("$c $m"); done
                                names=$(printf '%s\n' "${level[@]}" | cut -d/ -f1 | sort -u | tr '\n' ' ')
                                [ -n "$names" ] && cases+=("$c $names")
                        done
                fi
                if [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
                        # Under valgrind every show runs ~50x slower: every
                        # 8th case (each fixture and layout keeps its first).
                        sampled=()
                        for ((k = 0; k < ${#cases[@]}; k += 8)); do sampled+=("${cases[k]}"); done
                        cases=("${sampled[@]}")
                fi
                [ ${#cases[@]} -gt 0 ] || continue
                check_cases "$fixture-$layout" "$mp" "${cases[@]}"
        done
done
# Environment Modules' semantics beyond cudamod's own modules, for the safe
# interpreter: path operations on entries already there, module use, prereq
# choosing the default inside a range, getenv, is-loaded, module-info, and
# values holding tabs, quotes, brackets and bytes that are not UTF-8 (a
# newline Environment Modules itself does not pass to the shell intact).
if [ "$tool" = em ]; then
        sem=$MT_TMP/sem
        mkdir -p "$sem/setup" "$sem/x" "$sem/cuda" "$sem/dep" "$sem/q"
        printf '#%%Module\nsetenv FOO /a:/q:/a\nsetenv BAR /q:/r\nsetenv BAZ /z\nsetenv U 1\nsetenv COMMA y,x\n' \
                >"$sem/setup/1"
        cat >"$sem/x/1" <<'EOT'
#%Module
prepend-path FOO /b
prepend-path FOO /a//
append-path FOO /c/
prepend-path FOO /x:/y
append-path BAR /q
remove-path BAZ /z
setenv E "a b"
unsetenv U
prepend-path -d , COMMA x
module use /nonexistent/mp1
setenv G [getenv NOPE dflt]
setenv N [module-info name]
if {[is-loaded setup]} { setenv L 1 }
setenv W "a\tb \"q\" \[x\] \$y {z}"
EOT
        printf '#%%Module\nsetenv RAW "caf\xc3\xa9 \xe9"\n' >"$sem/q/1"
        for v in 11.8 12.1 12.9 12.10; do printf '#%%Module\nsetenv CV %s\n' "$v" >"$sem/cuda/$v"; done
        printf '#%%Module\nmodule-version cuda/12.1 default\n' >"$sem/cuda/.modulerc"
        printf '#%%Module\nprereq cuda@12:12.999999\nsetenv D 1\n' >"$sem/dep/1"
        printf '#%%Module\nprereq cuda@11:11.9 cuda@12\nsetenv D 2\n' >"$sem/dep/2"
        printf '#%%Module\nprereq cuda/12\nsetenv D 3\n' >"$sem/dep/3"
        check_cases em-semantics "$sem" "setup x" "q" "dep/1" "dep/2" "dep/3" "cuda/12" "cuda"
fi
if ! python3 "$MT_LIB_DIR/show-parity.py" --manifest "$parity" >"$MT_TMP/parity.out" 2>&1; then
        fail "show differs from module load:"
        sed 's/^/    /' "$MT_TMP/parity.out"
fi
say "$n_cases load cases compared"
want=50
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] || want=20
[ "$n_cases" -gt $want ] || fail "only $n_cases cases: the fixtures should give many more"
mt_finish
