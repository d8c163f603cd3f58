#!/usr/bin/env bash
# tests/modules/modulerc.sh: the modulerc directives a site adds (ISSUE 18
# item 6), followed by `cudamod show` as by Lmod: module_version (a default,
# another name for a version), module_alias (in a directory's file, "/NAME"
# under it, and a bare name), hide_version, hide_modulefile, in
# .modulerc.lua and in the Tcl .modulerc, the site's LMOD_MODULERCFILE (a
# ':'-separated list, the first file winning over a directory's mark) and
# $HOME/.modulerc.lua (winning over both). For every case the module Lmod
# loads and the environment must be those show reports (show-parity.py), a
# load Lmod refuses show refuses; and cudamod's own generated tree, with
# hide_version and module_alias lines a site appended to its .modulerc.lua,
# gives the default and the aliases Lmod gives.
source "$(dirname "$0")/lib.sh"

need lmod
command -v python3 >/dev/null || { say "SKIP: python3 missing"; exit 77; }
n_cases=0

# check LABEL MODULEPATH ENV CASE...: ENV a space-separated list of
# NAME=value for both (LMOD_MODULERCFILE, HOME).
check() {
        local label=$1 mp=$2 envs=$3 i=0 c rc
        shift 3
        local sdir=$MT_TMP/s-$label
        local -a ev=()
        read -r -a ev <<<"$envs"
        {
                for e in "${ev[@]}"; do printf 'export %q\n' "$e"; done
                echo 'snap base'
                for c in "$@"; do
                        printf 'step load%d load %s\n' "$i" "$c"
                        printf 'step purge%d purge\n' "$i"
                        i=$((i + 1))
                done
        } | session lmod "$sdir" "$mp"
        i=0
        for c in "$@"; do
                local j=$sdir/show$i.json
                read -r -a mods <<<"$c"
                n_cases=$((n_cases + 1))
                env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$mp" "${ev[@]}" \
                        "$CUDAMOD_BIN" show --json "${mods[@]}" >"$j" 2>"$j.err" && rc=0 || rc=$?
                if ! rc_is "$sdir/load$i" 0; then
                        [ "$rc" -ne 0 ] || fail "$label: module load $c fails with Lmod ($(head -c 200 "$sdir/load$i.out")), but show succeeds"
                elif [ "$rc" -ne 0 ]; then
                        fail "$label: show $c failed (rc $rc): $(cat "$j.err")"
                elif ! python3 "$MT_LIB_DIR/show-parity.py" "$sdir/base.env" "$sdir/load$i.env" "$j" \
                        >"$j.diff" 2>&1; then
                        fail "$label: show $c differs from Lmod's load:"
                        sed 's/^/    /' "$j.diff"
                fi
                i=$((i + 1))
        done
}

# A tree of cuda versions, each setting CV (and the path it came from).
tree() {
        local d=$1 v
        mkdir -p "$d/cuda" "$d/other"
        for v in 11.8 12.4 12.9; do
                printf 'setenv("CV", "%s")\nsetenv("CF", myFileName())\n' "$v" >"$d/cuda/$v.lua"
        done
        printf 'setenv("OTHER", "1")\n' >"$d/other/1.0.lua"
}
cases=(cuda cuda/latest mycu cuda/eleven cuda/12.9 cuda/12 cuda/12.4 other "mycu other")

# A: .modulerc.lua
a=$MT_TMP/a
tree "$a"
cat >"$a/cuda/.modulerc.lua" <<'EOF'
hide_version("cuda/12.9")
module_alias("cuda/latest", "cuda/11.8")
module_alias("mycu", "cuda/12.4")
module_version("cuda/11.8", "eleven")
EOF
check lua "$a" "" "${cases[@]}"

# B: the same as a Tcl .modulerc (Lmod reads it for Lua modules too)
b=$MT_TMP/b
tree "$b"
printf '#%%Module\nhide-version cuda/12.9\nmodule-alias cuda/latest cuda/11.8\nmodule-alias mycu cuda/12.4\nmodule-version cuda/11.8 eleven\n' \
        >"$b/cuda/.modulerc"
check tcl "$b" "" "${cases[@]}"

# C: hide_modulefile by path; "/NAME" aliases under the directory; the
# marked default.
c=$MT_TMP/c
tree "$c"
cat >"$c/cuda/.modulerc.lua" <<EOF
hide_modulefile("$c/cuda/12.9.lua")
module_alias("/old", "cuda/11.8")
module_version("cuda/12.4", "default")
EOF
check path "$c" "" cuda cuda/old cuda/12.9 cuda/12

# D: LMOD_MODULERCFILE (two files: the first wins) over the directory's
# marked default; a global alias.
d=$MT_TMP/d
tree "$d"
printf 'module_version("cuda/12.9", "default")\n' >"$d/cuda/.modulerc.lua"
mkdir -p "$MT_TMP/rc"
printf 'module_version("cuda/11.8", "default")\nmodule_alias("gcu", "cuda/12.4")\n' >"$MT_TMP/rc/first.lua"
printf 'module_version("cuda/12.4", "default")\nmodule_alias("gcu", "cuda/12.9")\nhide_version("other/1.0")\n' \
        >"$MT_TMP/rc/second.lua"
check global "$d" "LMOD_MODULERCFILE=$MT_TMP/rc/first.lua:$MT_TMP/rc/second.lua" cuda gcu other cuda/12
check global-one "$d" "LMOD_MODULERCFILE=$MT_TMP/rc/second.lua" cuda gcu
# E: $HOME/.modulerc.lua wins over LMOD_MODULERCFILE
mkdir -p "$MT_TMP/home2"
printf 'module_version("cuda/12.4", "default")\n' >"$MT_TMP/home2/.modulerc.lua"
check home "$d" "LMOD_MODULERCFILE=$MT_TMP/rc/first.lua HOME=$MT_TMP/home2" cuda

# F: cudamod's own tree, with lines a site appended to a generated
# .modulerc.lua: the default hidden, an alias of another version.
X_ROOT=$MT_TMP/fx
mkdir "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 || { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }
out=$MT_TMP/out
generate lmod flat "$out" "$X_ROOT/sw"
rc=$out/cuda/.modulerc.lua
[ -f "$rc" ] || die "no $rc in the generated tree"
mapfile -t versions < <(cd "$out/cuda" && ls *.lua | sed 's/\.lua$//' | sort -V)
[ ${#versions[@]} -ge 2 ] || die "the demo tree has fewer than two cuda versions"
highest=${versions[-1]} lowest=${versions[0]}
{
        printf 'hide_version("cuda/%s")\n' "$highest"
        printf 'module_alias("cuda/site-old", "cuda/%s")\n' "$lowest"
} >>"$rc"
# The generated file marks a default: drop that line so the hidden
# highest must be skipped, in a copy.
out2=$MT_TMP/out2
cp -r "$out" "$out2"
grep -v '"default"' "$out2/cuda/.modulerc.lua" >"$out2/cuda/.rc" && mv "$out2/cuda/.rc" "$out2/cuda/.modulerc.lua"
check generated "$out" "" cuda cuda/site-old "cuda/$highest"
check generated-nodefault "$out2" "" cuda cuda/site-old

say "$n_cases cases compared with Lmod"
mt_finish
