#!/usr/bin/env bash
# tests/modules/lmod-versions.sh [FIXTURE...]
#
# The same modules under every Lmod the suite has (lmod_inits: Debian's 8.6
# on bookworm or 8.7 on trixie, and Lmod 9.2 from .cache/lmod-9.2) and under
# cudamod's own evaluator (`cudamod show`): for every fixture of
# tests/modules/expect/ (the demo tree and every layout of mkfixture
# --list), both layouts, the Lua tree and (for the fixtures whose
# components' templates the demo's do not already give, below) the Tcl
# tree as Lmod reads it, every module generated and the cuda+component combinations (the
# cases of show-parity.sh), the environment after `module load` and after
# `module unload` of the same modules (in reverse order) must be the same
# under all three, variable by variable, MODULEPATH and the modules loaded
# included (lmod-versions.py). One difference is a failure naming the
# case, the variable and the three values. Every Core name is loaded
# without a version too (the default the modulerc marks), and every Lmod
# must list the same modules over the whole tree (`module -t avail`) and
# call the same versions default (`module -t -d avail`): with the
# environments, that carries fixture-env.sh's expectations, checked under
# Debian's Lmod, over to Lmod 9.2.
#
# cudamod's column: show's environment after load; after unload, show's
# changes undone (a variable set is unset again, path entries removed).
# This is also Lmod's show parity (show-parity.sh lmod, which meson does
# not run on its own): the same cases. Without Lmod 9.2 it compares show
# with Debian's Lmod only, or fails with CUDAMOD_REQUIRE_MODULE_TOOLS=1.
# Under valgrind, the demo fixture only.
source "$(dirname "$0")/lib.sh"

MT_SELF=lmod-versions
need lmod
# Lmod 9.2 too; without it (and not required) show against Debian's alone.
if [ ! -r "$(lmod9_init)" ]; then
        need lmods
        say "no Lmod 9.2 ($(lmod9_init)): show against Debian's Lmod only"
fi
command -v python3 >/dev/null || { say "SKIP: python3 missing"; exit 77; }
# show reads Tcl modulefiles in tclsh's safe interpreter, found on PATH.
SHOW_PATH=/usr/bin:/bin
tclsh_dir=$(dirname "$(tclsh_path || echo /usr/bin/tclsh)")
case :$SHOW_PATH: in *:"$tclsh_dir":*) ;; *) SHOW_PATH+=:$tclsh_dir ;; esac

mapfile -t lmods < <(lmod_inits)
labels=()
for l in "${lmods[@]}"; do labels+=("Lmod ${l%%$'\t'*}"); done
say "comparing cudamod show with ${labels[*]}"

if [ $# -gt 0 ]; then
        fixtures=("$@")
elif [ -n "${CUDAMOD_VALGRIND_LOGS:-}" ]; then
        fixtures=(demo)
else
        mapfile -t fixtures < <(cd "$MT_LIB_DIR/expect" && ls *.txt | sed 's/\.txt$//')
fi

# modules_in DIR EXT: the module names (name/version) of one modulepath dir.
modules_in() {
        (cd "$1" 2>/dev/null && find . -mindepth 2 -maxdepth 2 \( -type f -o -type l \) \
                ! -name '.*' -printf '%P\n' | sed "s/${2:-\$^}\$//" | sort)
}

make_stub_cuda lmod "$MT_TMP/stub-lmod"
make_stub_cuda em "$MT_TMP/stub-em"
manifest=$MT_TMP/manifest.tsv
printf 'tools\t%s\n' "$(IFS=$'\t'; echo "${labels[*]}")" >"$manifest"
n_cases=0 n_avail=0

# compare_cases LABEL MODULEPATH FORMAT CASE...: for every CASE (a
# space-separated module list), show, then in one session per Lmod: load,
# unload in reverse, and back to the start (the environment as it was,
# restored by bash: Lmod keeps its state there, and a purge would cost an
# Lmod run). Lmod's Tcl reader skips the prereq of a flat Tcl cuDNN or
# NCCL (lmod-reads-tcl.sh): there the cuda that show loads for it comes
# first in the case, as an Lmod user of the Tcl tree types it. The manifest lines
# for lmod-versions.py.
compare_cases() {
        local label=$1 mp=$2 format=$3 i=0 c k init line rev m step
        shift 3
        local sdir=$MT_TMP/s-$label cases=()
        mkdir -p "$sdir"
        for c in "$@"; do
                read -r -a mods <<<"$c"
                local j=$sdir/show$i.json rc
                env -i HOME="$MT_TMP/home" PATH="$SHOW_PATH" TERM=dumb MODULEPATH="$mp" \
                        "$CUDAMOD_BIN" show --json "${mods[@]}" >"$j" 2>"$j.err" && rc=0 || rc=$?
                if [ "$format" = tcl ] && [ "$rc" = 0 ]; then
                        c=$(python3 -c '
import json, sys
named = sys.argv[2].split()
loaded = [m["module"] for m in json.load(open(sys.argv[1]))["modules"]]
extra = [m for m in loaded if not any(m == n or m.startswith(n + "/") for n in named)]
print(" ".join(extra + named))' "$j" "$c")
                fi
                cases+=("$c")
                line="case"$'\t'"$label: $c"$'\t'"$j"$'\t'"$rc"
                for k in "${!lmods[@]}"; do
                        line+=$'\t'"$sdir/$k/base.env"$'\t'"$sdir/$k/load$i.rc"$'\t'"$sdir/$k/load$i.env"$'\t'"$sdir/$k/unload$i.env"
                done
                printf '%s\n' "$line" >>"$manifest"
                n_cases=$((n_cases + 1))
                i=$((i + 1))
        done
        for k in "${!lmods[@]}"; do
                init=${lmods[k]#*$'\t'}
                i=0
                # shellcheck disable=SC2016 # expanded in the session
                {
                        # What avail lists, and which versions it calls
                        # default, over the whole tree (a subshell: the
                        # cases' base is untouched).
                        [ -z "$avail_mp" ] ||
                                printf '(MODULEPATH=%q; step avail -t avail; step defaults -t -d avail)\n' "$avail_mp"
                        echo 'snap base'
                        echo 'mt_base=$(export -p)'
                        for c in "${cases[@]}"; do
                                read -r -a mods <<<"$c"
                                rev=()
                                for m in "${mods[@]}"; do rev=("$m" "${rev[@]}"); done
                                printf 'step load%d load %s\n' "$i" "$c"
                                printf 'step unload%d unload %s\n' "$i" "${rev[*]}"
                                printf '%s\n' 'for mt_v in $(compgen -e); do unset "$mt_v"; done; eval "$mt_base"'
                                i=$((i + 1))
                        done
                } | CUDAMOD_LMOD_INIT=$init session lmod "$sdir/$k" "$mp"
        done
        [ -n "$avail_mp" ] || return 0
        for k in "${!lmods[@]}"; do
                for step in avail defaults; do
                        rc_is "$sdir/$k/$step" 0 ||
                                fail "$label: ${labels[k]}: module -t $([ $step = avail ] || echo '-d ')avail failed (rc $(rc_of "$sdir/$k/$step")): $(head -c 400 "$sdir/$k/$step.out")"
                        [ "$k" -eq 0 ] || cmp -s "$sdir/0/$step.out" "$sdir/$k/$step.out" || {
                                fail "$label: module -t $([ $step = avail ] || echo '-d ')avail: ${labels[0]} and ${labels[k]} differ (- ${labels[0]}, + ${labels[k]}):"
                                diff -u --label "${labels[0]}" --label "${labels[k]}" \
                                        "$sdir/0/$step.out" "$sdir/$k/$step.out" | sed 's/^/    /' || true
                        }
                done
        done
        n_avail=$((n_avail + 1))
}

# The Tcl trees as Lmod reads them (its tcl2lua; Debian's runs a tclsh for
# each file read, two thirds of this test's time): what Lmod makes of a
# Tcl module depends on the template of its component and layout, not on
# the fixture's paths, so the Tcl trees are compared for the demo (every
# component but those it lacks) and for a fixture that has a component
# the demo lacks (cuTENSOR's); CUDAMOD_LMOD_VERSIONS_TCL=all compares
# them for every fixture. Lua trees: every fixture.
demo_names=" $(awk '$1 == "files" && $2 == "flat" { for (i = 3; i <= NF; i++) { split($i, a, "/"); print a[1] } }' \
        "$MT_LIB_DIR/expect/demo.txt" | sort -u | tr '\n' ' ')"
[ "$demo_names" != " " ] || die "no flat files in expect/demo.txt"

for fixture in "${fixtures[@]}"; do
        X_ROOT=$MT_TMP/fx-$fixture
        mkdir "$X_ROOT"
        "$MKFIXTURE" "$fixture" "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
                { cat "$MT_TMP/mkfixture.log"; die "mkfixture $fixture failed"; }
        read -r -a rel <<<"$("$MKFIXTURE" --list | awk -v f="$fixture" '$1 == f { $1 = ""; print }')"
        roots=()
        for r in "${rel[@]}"; do roots+=("$X_ROOT/$r"); done
        for tool in lmod em; do
                if [ "$tool" = em ] && [ "$fixture" != demo ] && [ "${CUDAMOD_LMOD_VERSIONS_TCL:-}" != all ]; then
                        new=
                        for m in $(modules_in "$MT_TMP/out-$fixture-lmod-flat" .lua | cut -d/ -f1 | sort -u); do
                                [[ $demo_names == *" $m "* ]] || new+=" $m"
                        done
                        if [ -z "$new" ]; then
                                say "$fixture: Tcl trees not compared (the demo's have its components' templates)"
                                continue
                        fi
                        say "$fixture: Tcl trees compared too, for$new"
                fi
                ext=$([ "$tool" = lmod ] && echo .lua || true)
                for layout in hierarchical flat; do
                        out=$MT_TMP/out-$fixture-$tool-$layout
                        generate "$tool" "$layout" "$out" "${roots[@]}"
                        cases=()
                        label=$fixture-$(tool_format "$tool")-$layout
                        avail_mp=
                        if [ "$layout" = flat ]; then
                                mp=$out tree_mp=$out
                                mapfile -t all < <(modules_in "$out" "$ext")
                                cases+=("${all[@]}")
                                names=$(printf '%s\n' "${all[@]}" | cut -d/ -f1 | sort -u | tr '\n' ' ')
                                [ -n "$names" ] && cases+=("$names")
                                # No cuda of the fixture's own: the stub
                                # cudas (fixture-env's use=STUB) meet the
                                # components' depends_on/prereq.
                                [[ " ${all[*]}" == *" cuda/"* ]] || mp+=:$MT_TMP/stub-$tool
                        else
                                mp=$out/Core tree_mp=$out/Core
                                mapfile -t core < <(modules_in "$out/Core" "$ext")
                                cases+=("${core[@]}")
                                # Each Core name without a version: the
                                # default the modulerc marks, under each.
                                for c in $(printf '%s\n' "${core[@]}" | cut -d/ -f1 | sort -u); do
                                        cases+=("$c")
                                done
                                for d in "$out"/CUDA/*; do
                                        [ ! -d "$d" ] || tree_mp+=:$d
                                done
                                for d in "$out"/CUDA/*; do
                                        [ -d "$d" ] || continue
                                        major=${d##*/}
                                        mapfile -t level < <(modules_in "$d" "$ext")
                                        names=$(printf '%s\n' "${level[@]}" | cut -d/ -f1 | sort -u | tr '\n' ' ')
                                        c=$(printf '%s\n' "${core[@]}" | grep "^cuda/$major\\." | tail -n 1 || true)
                                        if [ -z "$c" ]; then
                                                # A level no cuda module opens
                                                # (fixture-env's use=CUDA/N):
                                                # its modules on their own, with
                                                # the stubs for the Tcl prereq.
                                                lcases=("${level[@]}")
                                                [ -n "$names" ] && lcases+=("$names")
                                                [ ${#lcases[@]} -eq 0 ] ||
                                                        compare_cases "$label-CUDA$major" "$d:$MT_TMP/stub-$tool" \
                                                                "$(tool_format "$tool")" "${lcases[@]}"
                                                continue
                                        fi
                                        for c in $(printf '%s\n' "${core[@]}" | grep "^cuda/$major\\."); do
                                                for m in "${level[@]}"; do cases+=("$c $m"); done
                                                [ -n "$names" ] && cases+=("$c $names")
                                        done
                                done
                        fi
                        [ ${#cases[@]} -gt 0 ] || continue
                        avail_mp=$tree_mp
                        compare_cases "$label" "$mp" "$(tool_format "$tool")" "${cases[@]}"
                done
        done
done

if ! python3 "$MT_LIB_DIR/lmod-versions.py" "$manifest" >"$MT_TMP/diff.txt" 2>&1; then
        fail "cudamod show, ${labels[*]} differ:"
        sed 's/^/    /' "$MT_TMP/diff.txt"
else
        say "$(tail -n 1 "$MT_TMP/diff.txt")"
fi
say "module -t avail and -t -d avail the same under ${labels[*]} for $n_avail trees"
# At least: all fixtures, 100; one (a single cuda: its module and its
# name, in each layout of the Lua tree), 4.
want=100
[ -z "${CUDAMOD_VALGRIND_LOGS:-}" ] && [ $# -eq 0 ] || want=4
[ "$n_cases" -ge $want ] || fail "only $n_cases cases: the fixtures should give more"
mt_finish
