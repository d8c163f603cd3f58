#!/usr/bin/env bash
# tests/modules/modulerc-config.sh TOOL: the site config's modulerc
# directives (modulerc.<component>.<version>: hide, aliases, tags,
# deprecated) written by generate and read by the real tool, for both
# layouts: the hidden version is not listed by `module avail` and not the
# default (with defaults.cuda: latest it would be), but loads by its full
# name; an alias loads its target; the tag shows (Environment Modules:
# `module avail`'s <tag>; Lmod 8.6, which has no tags: `module whatis`'s
# "Tags:"); a deprecated version prints its message on load, byte for byte
# (quotes, brackets, $, a backslash). Lmod also reads the Tcl tree
# (guarded directives). `cudamod show` follows the same modulerc (the
# default, the alias). Hostile values in the config are refused at
# FILE:LINE:COL and nothing is written.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: modulerc-config.sh lmod|em}
MT_SELF="modulerc-config-$tool"
need "$tool"

X_ROOT=$MT_TMP/fx
mkdir "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 || { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }
# No ']' (it would close the Lua long string Lmod's tcl2lua prints it in:
# refused, see the bad cases below).
msg='CUDA 11.8 goes away: use "cuda/12.9" [soon $HOME \ {end} ;$(id)'
cfg=$MT_TMP/site.yaml
# The message as a YAML single-quoted scalar (no ' in it).
cat >"$cfg" <<EOF
defaults:
  cuda: latest
modulerc:
  cuda:
    "11.8":
      deprecated: '$msg'
      tags: [old]
    "12.9":
      hide: true
    "11.8-x":
      hide: true
EOF
# 12.9 is the latest: hidden, the default must be 11.8. The aliases: of 11.8.
python3 - "$cfg" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read().replace('      tags: [old]\n', '      tags: [old]\n      aliases: [latest, site-stable]\n', 1)
open(p, 'w').write(s)
EOF

for layout in flat hierarchical; do
        out=$MT_TMP/out-$layout
        log=$out.log
        if ! run_cudamod --config "$cfg" generate -o "$out" --format "$(tool_format "$tool")" --layout "$layout" \
                "$X_ROOT/sw" >"$log" 2>&1; then
                cat "$log"
                die "generate failed"
        fi
        grep -q "modulerc.cuda.11.8-x: no cuda module has that version" "$log" ||
                fail "$layout: no warning for a version no module has: $(cat "$log")"
        mp=$out
        [ "$layout" = flat ] || mp=$out/Core
        sdir=$MT_TMP/s-$layout
        session "$tool" "$sdir" "$mp" <<'EOS'
snap base
step avail -t avail
step load_def load cuda
step purge0 purge
step load_hidden load cuda/12.9
step purge1 purge
step load_alias load cuda/latest
step purge2 purge
step load_dep load cuda/11.8
step purge3 purge
step whatis whatis cuda/11.8
step avail_long avail
EOS
        env_value "$sdir/load_def.env" CUDA_HOME || true
        [ "$VAL" = "$X_ROOT/sw/cuda-11.8" ] || fail "$layout: module load cuda gives CUDA_HOME='$VAL', not 11.8 (12.9 is hidden)"
        env_value "$sdir/load_hidden.env" CUDA_HOME || true
        [ "$VAL" = "$X_ROOT/sw/cuda-12.9" ] || fail "$layout: the hidden cuda/12.9 does not load by its full name ($(cat "$sdir/load_hidden.out"))"
        env_value "$sdir/load_alias.env" CUDA_HOME || true
        [ "$VAL" = "$X_ROOT/sw/cuda-11.8" ] || fail "$layout: cuda/latest does not load cuda/11.8 ($(cat "$sdir/load_alias.out"))"
        if grep -q 'cuda/12\.9' "$sdir/avail.out"; then
                fail "$layout: module avail lists the hidden cuda/12.9: $(tr '\n' ' ' <"$sdir/avail.out")"
        fi
        grep -q 'cuda/11\.8' "$sdir/avail.out" || fail "$layout: module avail does not list cuda/11.8"
        grep -qF -- "$msg" "$sdir/load_dep.out" ||
                fail "$layout: loading cuda/11.8 does not print the message byte for byte: $(cat "$sdir/load_dep.out")"
        if [ "$tool" = em ]; then
                grep -q '<old>' "$sdir/avail_long.out" || fail "$layout: module avail shows no <old> tag: $(cat "$sdir/avail_long.out")"
        else
                grep -q 'Tags: old' "$sdir/whatis.out" || fail "$layout: module whatis shows no 'Tags: old': $(cat "$sdir/whatis.out")"
        fi
        # Nothing of the message ran.
        no_pwned
        # show follows the same modulerc (Lua: the sandbox; Tcl: the safe
        # interpreter).
        for spec in cuda cuda/latest; do
                s=$(env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin MODULEPATH="$mp" "$CUDAMOD_BIN" show "$spec" 2>&1) ||
                        fail "$layout: show $spec failed: $s"
                [[ $s == *"$X_ROOT/sw/cuda-11.8"* ]] || fail "$layout: show $spec is not cuda/11.8: $s"
        done
        # Lmod reads the Tcl tree too: the directives it lacks are skipped.
        # Under every Lmod present (Debian's and Lmod 9.2).
        [ "$tool" = em ] || continue
        while IFS=$'\t' read -r lv linit; do
                ld=$sdir-lmod-$lv
                CUDAMOD_LMOD_INIT=$linit session lmod "$ld" "$mp" <<'EOS'
step avail -t avail
step load_def load cuda
step purge0 purge
step load_alias load cuda/latest
EOS
                rc_is "$ld/avail" 0 || fail "$layout: Lmod $lv fails on the Tcl modulerc: $(cat "$ld/avail.out")"
                env_value "$ld/load_def.env" CUDA_HOME || true
                [ "$VAL" = "$X_ROOT/sw/cuda-11.8" ] || fail "$layout: Lmod $lv on the Tcl tree: module load cuda gives '$VAL'"
                env_value "$ld/load_alias.env" CUDA_HOME || true
                [ "$VAL" = "$X_ROOT/sw/cuda-11.8" ] || fail "$layout: Lmod $lv on the Tcl tree: cuda/latest gives '$VAL'"
                if grep -q 'cuda/12\.9' "$ld/avail.out"; then
                        fail "$layout: Lmod $lv lists the hidden cuda/12.9 of the Tcl tree"
                fi
        done < <(lmod_inits)
done

# Hostile values: refused with FILE:LINE:COL, nothing written.
bad() {
        local label=$1 want=$2 out=$MT_TMP/bad-$1
        cat >"$MT_TMP/bad.yaml"
        if run_cudamod --config "$MT_TMP/bad.yaml" generate -o "$out" --format "$(tool_format "$tool")" \
                "$X_ROOT/sw" >"$out.log" 2>&1; then
                fail "$label: accepted: $(cat "$out.log")"
        elif ! grep -qE "bad\.yaml:[0-9]+:[0-9]+: .*$want" "$out.log"; then
                fail "$label: no FILE:LINE:COL error saying '$want': $(cat "$out.log")"
        fi
        [ ! -e "$out" ] || fail "$label: $out was written"
}
bad quote-version 'is not a module version' <<'EOF'
modulerc:
  cuda:
    '12.9"); os.exit(1) --':
      hide: true
EOF
bad bracket-alias 'is not a valid alias name' <<'EOF'
modulerc:
  cuda:
    "12.9":
      aliases: ["x] [exec touch pwned"]
EOF
bad dollar-tag 'is not a valid tag name' <<'EOF'
modulerc:
  cuda:
    "12.9":
      tags: ["$(id)"]
EOF
bad newline-message 'a message on one line' <<'EOF'
modulerc:
  cuda:
    "12.9":
      deprecated: "line one\nos.execute('touch pwned')"
EOF
bad long-bracket-message "holds ']'" <<'EOF'
modulerc:
  cuda:
    "12.9":
      deprecated: "use 12.9 ]===] os.execute('touch pwned') --[===["
EOF
bad default-alias 'is not a valid alias name' <<'EOF'
modulerc:
  cuda:
    "12.9":
      aliases: [default]
EOF
bad unknown-key "unknown key" <<'EOF'
modulerc:
  cuda:
    "12.9":
      hidden: true
EOF
no_pwned
mt_finish
