#!/usr/bin/env bash
# tests/modules/fixture-env.sh TOOL FIXTURE
#
# Builds FIXTURE (`mkfixture`: demo or a scan layout), generates its tree in
# TOOL's format (lmod: Lua, em: Tcl) in both layouts, and checks with the
# real tool, against tests/modules/expect/FIXTURE.txt (written by hand from
# the fixture's directories and doc/guide.md, "What a module sets", never from cudamod's output):
#   - the files of the tree, and which module each modulerc marks default
#     (the tool must prefer it over a higher version put next to it);
#   - syntax: luac5.1 -p and check_module_tree_syntax (Lmod), every module
#     listed by `module avail` and shown without error;
#   - every scenario: `module load` gives exactly the expected variables and
#     nothing else, MODULEPATH and LOADEDMODULES as expected; unloading the
#     modules one by one goes back through the shorter scenarios' states to
#     the start; load again and `module purge` gives the start back;
#   - every generated module is loaded by some scenario.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: fixture-env.sh lmod|em FIXTURE} fixture=${2:?usage: fixture-env.sh lmod|em FIXTURE}
MT_SELF="$tool-$fixture"
need "$tool"
[ "$tool" = lmod ] && need luac

load_expect "$MT_LIB_DIR/expect/$fixture.txt"

X_ROOT=$MT_TMP/fx
mkdir "$X_ROOT"
"$MKFIXTURE" "$fixture" "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture $fixture failed"; }
if [ ${#X_ROOTS[@]} -eq 0 ]; then
        read -r -a X_ROOTS <<<"$("$MKFIXTURE" --list | awk -v f="$fixture" '$1 == f { $1 = ""; print }')"
        [ ${#X_ROOTS[@]} -gt 0 ] || die "mkfixture --list does not name $fixture"
fi
roots=()
for r in "${X_ROOTS[@]}"; do roots+=("$X_ROOT/$r"); done

X_STUB=$MT_TMP/stub-cuda
make_stub_cuda "$tool" "$X_STUB"
ext=$([ "$tool" = lmod ] && echo .lua || true)
rcname=$(modulerc_name "$tool")

for layout in hier flat; do
        X_OUT=$MT_TMP/out-$layout
        generate "$tool" "$([ $layout = hier ] && echo hierarchical || echo flat)" "$X_OUT" "${roots[@]}"
        files_var=X_FILES_$layout[@]
        mods=("${!files_var}")

        # --- the files, and the default markings -------------------------
        want=$(
                for m in "${mods[@]}"; do echo "$m$ext"; done
                for d in "${X_DEFAULTS[@]}" "${X_HIDDEN[@]}"; do
                        read -r l dir _ <<<"$d"
                        if [ "$l" = "$layout" ]; then echo "$dir/$rcname"; fi
                done
        )
        want=$(sort -u <<<"$want")
        have=$(tree_files "$X_OUT")
        if [ "$want" != "$have" ]; then
                fail "$layout: the files of the tree differ (- expected, + actual):"
                diff -u --label expected --label actual <(echo "$want") <(echo "$have") | sed 's/^/    /' || true
        fi

        # --- syntax ---------------------------------------------------------
        mapfile -t mproots < <(tree_roots "$X_OUT" "$layout")
        mp_all=$(IFS=:; echo "${mproots[*]}")
        if [ "$tool" = lmod ]; then
                # luac5.1 takes many files: one run, and one per file only to
                # name the culprit.
                mapfile -d '' -t luas < <(find "$X_OUT" -type f -name '*.lua' -print0)
                if ! luac5.1 -p "${luas[@]}" >"$MT_TMP/luac.log" 2>&1; then
                        for f in "${luas[@]}"; do
                                luac5.1 -p "$f" >"$MT_TMP/luac.log" 2>&1 ||
                                        fail "$layout: luac5.1 -p rejects ${f#"$X_OUT"/}: $(cat "$MT_TMP/luac.log")"
                        done
                fi
        fi
        sdir=$MT_TMP/s-$layout-syntax
        {
                if [ "$tool" = lmod ]; then
                        for i in "${!mproots[@]}"; do
                                printf 'run tree%d "$LMOD_DIR/check_module_tree_syntax" %q\n' "$i" "${mproots[i]}"
                        done
                        echo 'step avail --terse avail'
                else
                        echo 'step avail -t avail'
                fi
                for m in "${mods[@]}"; do
                        short_name "$m"
                        printf 'step show-%s show %q\n' "${m//\//_}" "$SHORT"
                done
        } | session "$tool" "$sdir" "$mp_all"
        if [ "$tool" = lmod ]; then
                for i in "${!mproots[@]}"; do
                        if ! rc_is "$sdir/tree$i" 0 || ! grep -q 'No errors found' "$sdir/tree$i.out"; then
                                fail "$layout: check_module_tree_syntax ${mproots[i]#"$X_OUT"/} (rc $(rc_of "$sdir/tree$i")):"
                                sed 's/^/    | /' "$sdir/tree$i.out"
                        fi
                done
        fi
        hidden_mods=$(for d in "${X_HIDDEN[@]}"; do
                read -r l _ module <<<"$d"
                [ "$l" = "$layout" ] && echo "$module"
        done; true)
        want=$(for m in "${mods[@]}"; do short_name "$m"; grep -qxF "$SHORT" <<<"$hidden_mods" || echo "$SHORT"; done | sort)
        have=$(avail_names "$sdir/avail.out")
        if ! rc_is "$sdir/avail" 0 || [ "$want" != "$have" ]; then
                fail "$layout: module avail (rc $(rc_of "$sdir/avail")) lists other modules (- expected, + actual):"
                diff -u --label expected --label actual <(echo "$want") <(echo "$have") | sed 's/^/    /' || true
                sed 's/^/    | /' "$sdir/avail.out"
        fi
        for m in "${mods[@]}"; do
                s=$sdir/show-${m//\//_}
                if ! rc_is "$s" 0 || grep -qiE '(^|[^a-z])error' "$s.out"; then
                        short_name "$m"
                        fail "$layout: module show $SHORT (rc $(rc_of "$s")):"
                        sed 's/^/    | /' "$s.out"
                fi
        done

        # --- defaults: the marked one wins over a higher version -------------
        n=0
        for d in "${X_DEFAULTS[@]}"; do
                read -r l dir module <<<"$d"
                [ "$l" = "$layout" ] || continue
                n=$((n + 1))
                ddir=$MT_TMP/def-$layout-$n
                mkdir -p "$ddir"
                cp -a "$X_OUT/$dir" "$ddir/"
                name=${dir##*/}
                if [ "$tool" = lmod ]; then
                        printf 'setenv("CUDAMOD_DUMMY", "1")\n' >"$ddir/$name/99.99.lua"
                        echo 'step avail --terse --default avail' | session "$tool" "$ddir/s" "$ddir"
                else
                        printf '#%%Module\nsetenv CUDAMOD_DUMMY 1\n' >"$ddir/$name/99.99"
                        echo 'step avail -t --default avail' | session "$tool" "$ddir/s" "$ddir"
                fi
                have=$(avail_names "$ddir/s/avail.out" | tr '\n' ' ')
                if [ "$have" != "$module " ]; then
                        fail "$layout: $dir/$rcname should make $module the default; with a $name/99.99 next to it, the default is: ${have:-nothing}"
                        sed 's/^/    | /' "$ddir/s/avail.out"
                fi
        done

        # --- hidden: a build for another architecture is never what a bare
        # name loads, even when it is the only one in its directory -----------
        n=0
        for d in "${X_HIDDEN[@]}"; do
                read -r l dir module <<<"$d"
                [ "$l" = "$layout" ] || continue
                n=$((n + 1))
                hdir=$MT_TMP/hid-$layout-$n
                mkdir -p "$hdir"
                cp -a "$X_OUT/$dir" "$hdir/"
                name=${dir##*/}
                printf 'snap base\nstep load load %q\nstep purge purge\nstep full load %q\n' "$name" "$module" |
                        session "$tool" "$hdir/s" "$hdir:$X_STUB"
                env_value "$hdir/s/load.env" LOADEDMODULES || true
                [[ ":$VAL:" != *":$module:"* ]] ||
                        fail "$layout: 'module load $name' loaded $module, a build for another architecture ($dir/$rcname should hide it)"
                env_value "$hdir/s/full.env" LOADEDMODULES || true
                [[ ":$VAL:" == *":$module:"* ]] ||
                        fail "$layout: 'module load $module' (its full name) did not load it: $(cat "$hdir/s/full.out")"
        done

        # --- scenarios ------------------------------------------------------
        declare -A covered=()
        for i in "${!X_SC_MODS[@]}"; do
                sc_applies "$i" "$layout" || continue
                read -r -a sm <<<"${X_SC_MODS[$i]}"
                what="$layout: module load ${sm[*]}"
                if [ "$layout" = hier ]; then
                        start=$X_OUT/Core
                        if sc_opt "$i" use; then
                                [ "$OPT" != STUB ] || die "use=STUB is for the flat layout"
                                start=$X_OUT/$OPT:$start
                                what+=" (after module use \$OUT/$OPT)"
                                if [ "$tool" = em ]; then
                                        # The Tcl cuDNN/NCCL modules of a level
                                        # carry `prereq cuda@N:N.999999` (so EM
                                        # unloads them with their CUDA); the
                                        # fixture has no cuda: a stub one is
                                        # loaded first.
                                        start=$start:$X_STUB
                                        sm=("cuda/${OPT#CUDA/}.99" "${sm[@]}")
                                        what+=" (with the stub cuda/${OPT#CUDA/}.99)"
                                fi
                        fi
                else
                        start=$X_OUT
                        if sc_opt "$i" use; then
                                [ "$OPT" = STUB ] || die "flat scenarios can only use=STUB"
                                start=$start:$X_STUB
                                what+=" (with stub cuda modules)"
                        fi
                fi
                X_MP=$start
                sdir=$MT_TMP/s-$layout-$i
                if sc_opt "$i" fail; then
                        {
                                echo 'snap base'
                                printf 'step load load'; printf ' %q' "${sm[@]}"; echo
                        } | session "$tool" "$sdir" "$start"
                        if rc_is "$sdir/load" 0; then
                                fail "$what: should fail, but succeeded:"
                                sed 's/^/    | /' "$sdir/load.out"
                        fi
                        env_delta "$sdir/base.env" "$sdir/load.env"
                        check_unchanged "$what (failed load)" || true
                        env_value "$sdir/load.env" LOADEDMODULES || true
                        [ -z "$VAL" ] || fail "$what (failed load): modules left loaded: $VAL"
                        continue
                fi
                for m in "${sm[@]}"; do covered[$m]=1; done
                {
                        echo 'snap base'
                        printf 'step load load'; printf ' %q' "${sm[@]}"; echo
                        for ((k = ${#sm[@]} - 1; k >= 0; k--)); do
                                printf 'step unload%d unload %q\n' "$k" "${sm[k]}"
                        done
                        printf 'step reload load'; printf ' %q' "${sm[@]}"; echo
                        echo 'step purge purge'
                } | session "$tool" "$sdir" "$start"

                if ! rc_is "$sdir/load" 0; then
                        fail "$what: failed (rc $(rc_of "$sdir/load")):"
                        sed 's/^/    | /' "$sdir/load.out"
                        continue
                fi
                sc_expected "$i" "$layout"
                env_delta "$sdir/base.env" "$sdir/load.env"
                check_delta "$what" || true
                env_value "$sdir/load.env" MODULEPATH || true
                [ "$VAL" = "$EXPECT_MP" ] || fail "$what: MODULEPATH is '$VAL', expected '$EXPECT_MP'"
                env_value "$sdir/load.env" LOADEDMODULES || true
                want=$(IFS=:; echo "${sm[*]}")
                [ "$VAL" = "$want" ] || fail "$what: LOADEDMODULES is '$VAL', expected '$want'"
                env_delta "$sdir/base.env" "$sdir/reload.env"
                check_delta "$what (loaded again after unloading)" || true

                # Unload one by one: each step must give the state of the
                # scenario that loads the remaining prefix (when there is one).
                for ((k = ${#sm[@]} - 1; k >= 0; k--)); do
                        u=$sdir/unload$k
                        uwhat="$what, then module unload ${sm[*]:k}"
                        if ! rc_is "$u" 0; then
                                fail "$uwhat: failed (rc $(rc_of "$u")):"
                                sed 's/^/    | /' "$u.out"
                                continue 2
                        fi
                        env_value "$u.env" LOADEDMODULES || true
                        want=$(IFS=:; echo "${sm[*]:0:k}")
                        [ "$VAL" = "$want" ] || fail "$uwhat: LOADEDMODULES is '$VAL', expected '$want'"
                        env_delta "$sdir/base.env" "$u.env"
                        if [ "$k" -eq 0 ]; then
                                check_unchanged "$uwhat (back to the start)" || true
                                env_value "$u.env" MODULEPATH || true
                                [ "$VAL" = "$start" ] || fail "$uwhat: MODULEPATH is '$VAL', expected '$start'"
                                continue
                        fi
                        prefix="${sm[*]:0:k} "
                        for j in "${!X_SC_MODS[@]}"; do
                                [ "${X_SC_MODS[$j]}" = "$prefix" ] && [ "${X_SC_OPTS[$j]}" = "${X_SC_OPTS[$i]}" ] || continue
                                sc_expected "$j" "$layout"
                                check_delta "$uwhat (should be the state of: module load ${sm[*]:0:k})" || true
                                env_value "$u.env" MODULEPATH || true
                                [ "$VAL" = "$EXPECT_MP" ] || fail "$uwhat: MODULEPATH is '$VAL', expected '$EXPECT_MP'"
                                break
                        done
                done
                for s in reload purge; do
                        if ! rc_is "$sdir/$s" 0; then
                                fail "$what, unload all, load again, $s: failed (rc $(rc_of "$sdir/$s")):"
                                sed 's/^/    | /' "$sdir/$s.out"
                        fi
                done
                env_delta "$sdir/base.env" "$sdir/purge.env"
                check_unchanged "$what, then module purge" || true
                env_value "$sdir/purge.env" MODULEPATH || true
                [ "$VAL" = "$start" ] || fail "$what, then module purge: MODULEPATH is '$VAL', expected '$start'"
        done
        for m in "${mods[@]}"; do
                short_name "$m"
                [[ -v covered[$SHORT] ]] ||
                        fail "$layout: no scenario of expect/$fixture.txt loads $SHORT ($m)"
        done
        unset covered
done
no_pwned || true
mt_finish
