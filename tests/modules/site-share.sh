#!/usr/bin/env bash
# tests/modules/site-share.sh TOOL: cudamod's tree among a site's own
# modules (issue 18), with the real Lmod (Lua) or Environment Modules (Tcl):
#
# - an EasyBuild flat root (modules/all holding CUDA/12.4.0 as EasyBuild
#   writes it, PRIOR-ART.md §2.1): the hierarchical layout into it is
#   refused, naming CUDA/12.4.0, and nothing is written (the site's
#   `module load CUDA` keeps working); the flat layout beside it is written
#   with a warning naming CUDA, and with `family: {cuda: [cuda, CUDA]}`
#   without one: then loading cuda with CUDA loaded fails (both tools), and
#   CUDA with cuda loaded fails in Environment Modules (Lmod 8.6 checks a
#   conflict only in the module being loaded: measured, not asserted);
# - an EasyBuild hierarchy (Core/CUDA/12.4.0): cudamod's hierarchy shares
#   Core/, `module load CUDA` and `module load cuda` both work, together
#   they conflict;
# - the toolkit's components are discoverable: Lmod `module spider cublas`
#   and `module keyword nvcc` find cuda/12.4, Environment Modules `module
#   search nvcc` and `module whatis cuda` show them; a hostile component
#   version in version.json is left out and runs nothing;
# - --format tcl with the hierarchy says once that EM's avail does not
#   descend it (stderr and --json warnings).
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: site-share.sh lmod|em}
MT_SELF="$tool-site-share"
need "$tool"
fmt=$(tool_format "$tool")

fx=$MT_TMP/fx
"$MKFIXTURE" runfile "$fx" >/dev/null
vj=$fx/usr/local/cuda-12.4/version.json
[ -f "$vj" ] || die "the runfile fixture has no $vj"
# cuBLAS and a hostile cuFFT beside what the fixture has.
python3 - "$vj" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d['libcublas'] = {'name': 'CUDA cuBLAS', 'version': '12.4.5.8'}
d['libcufft'] = {'name': 'cuFFT', 'version': '11.2"); os.execute("touch PWNED") --[[ [exec touch PWNED]'}
json.dump(d, open(sys.argv[1], 'w'))
EOF

# An EasyBuild CUDA module as EasyBuild writes it (PRIOR-ART.md §2.1).
eb_cuda() {
        local file=$1 root=/opt/eb/software/CUDA/12.4.0
        mkdir -p "$(dirname "$file")"
        if [ "$tool" = lmod ]; then
                cat >"$file" <<EOF
help([==[

Description
===========
CUDA (formerly Compute Unified Device Architecture) is a parallel
 computing platform and programming model created by NVIDIA.
]==])

whatis([==[Description: CUDA (formerly Compute Unified Device Architecture)]==])
whatis([==[Homepage: https://developer.nvidia.com/cuda-toolkit]==])

local root = "$root"

conflict("CUDA")

prepend_path("CPATH", pathJoin(root, "include"))
prepend_path("PATH", pathJoin(root, "bin"))
setenv("CUDA_HOME", root)
setenv("EBROOTCUDA", root)
setenv("EBVERSIONCUDA", "12.4.0")

-- Built with EasyBuild version 4.9.4
EOF
        else
                cat >"$file" <<EOF
#%Module
proc ModulesHelp { } {
    puts stderr { CUDA (formerly Compute Unified Device Architecture) }
}

module-whatis {Description: CUDA (formerly Compute Unified Device Architecture)}

set root $root

conflict CUDA

prepend-path	CPATH		\$root/include
prepend-path	PATH		\$root/bin
setenv	CUDA_HOME		"\$root"
setenv	EBROOTCUDA		"\$root"
setenv	EBVERSIONCUDA		"12.4.0"

# Built with EasyBuild version 4.9.4
EOF
        fi
}

fam=$MT_TMP/family.yaml
printf 'defaults: { cuda: latest }\nfamily:\n  cuda: [cuda, CUDA]\n' >"$fam"

# gen NAME CONFIG MODULEPATH ARGS...: run generate; NAME.rc, NAME.out, NAME.err.
gen() {
        local name=$1 cfg=$2 mp=$3
        shift 3
        local rc=0
        MODULEPATH=$mp run_cudamod --config "$cfg" generate --format "$fmt" "$@" "$fx" \
                >"$MT_TMP/$name.out" 2>"$MT_TMP/$name.err" || rc=$?
        echo "$rc" >"$MT_TMP/$name.rc"
}
gen_rc() { local rc; read -r rc <"$MT_TMP/$1.rc"; printf '%s' "$rc"; }

# --- an EasyBuild flat root -------------------------------------------------
all=$MT_TMP/eb/modules/all
eb_cuda "$all/$(mod_file "$tool" CUDA/12.4.0)"
before=$(cd "$all" && find . | sort)

gen hier-into-all "$MT_LIB_DIR/site.yaml" "$all" -o "$all" --layout hierarchical
[ "$(gen_rc hier-into-all)" = 1 ] || fail "hierarchical into modules/all: exit $(gen_rc hier-into-all), not 1: $(cat "$MT_TMP/hier-into-all.err")"
grep -qF "'$all/$(mod_file "$tool" CUDA/12.4.0)' was not written by cudamod" "$MT_TMP/hier-into-all.err" ||
        fail "hierarchical into modules/all: the refusal does not name CUDA/12.4.0: $(cat "$MT_TMP/hier-into-all.err")"
grep -q "nothing written" "$MT_TMP/hier-into-all.err" || fail "hierarchical into modules/all: no 'nothing written'"
[ "$(cd "$all" && find . | sort)" = "$before" ] || fail "hierarchical into modules/all: the tree changed: $(cd "$all" && find . | sort | tr '\n' ' ')"

gen flat-warn "$MT_LIB_DIR/site.yaml" "$all" -o "$all" --layout flat
[ "$(gen_rc flat-warn)" = 0 ] || fail "flat into modules/all: exit $(gen_rc flat-warn): $(cat "$MT_TMP/flat-warn.err")"
grep -qF "'$all/CUDA' ($(mod_file "$tool" CUDA/12.4.0)) provides modules 'CUDA' beside cudamod's 'cuda'" "$MT_TMP/flat-warn.err" ||
        fail "flat into modules/all: no warning naming CUDA and cuda: $(cat "$MT_TMP/flat-warn.err")"
gen flat-family "$fam" "$all" -o "$all" --layout flat
[ "$(gen_rc flat-family)" = 0 ] || fail "flat into modules/all with family: exit $(gen_rc flat-family): $(cat "$MT_TMP/flat-family.err")"
if grep -q "provides modules" "$MT_TMP/flat-family.err"; then
        fail "flat into modules/all with family {cuda: [cuda, CUDA]}: still warns: $(cat "$MT_TMP/flat-family.err")"
fi

sdir=$MT_TMP/s-flat
session "$tool" "$sdir" "$all" <<'EOF'
step eb load CUDA
step both load cuda/12.4
step purge1 purge
step ours load cuda/12.4
step theirs load CUDA
step purge2 purge
EOF
rc_is "$sdir/eb" 0 || fail "flat: the site's 'module load CUDA' fails: $(cat "$sdir/eb.out")"
env_value "$sdir/eb.env" EBROOTCUDA || fail "flat: 'module load CUDA' did not set EBROOTCUDA"
if rc_is "$sdir/both" 0; then
        fail "flat: 'module load cuda/12.4' with CUDA loaded succeeded (family: {cuda: [cuda, CUDA]} should conflict)"
fi
env_value "$sdir/both.env" LOADEDMODULES || true
[ "$VAL" = CUDA/12.4.0 ] || fail "flat: after the refused load LOADEDMODULES is '$VAL'"
rc_is "$sdir/ours" 0 || fail "flat: 'module load cuda/12.4' alone fails: $(cat "$sdir/ours.out")"
if [ "$tool" = em ]; then
        if rc_is "$sdir/theirs" 0; then
                fail "flat: EM loaded CUDA with cuda/12.4 loaded (conflict CUDA should refuse it)"
        fi
else
        env_value "$sdir/theirs.env" LOADEDMODULES || true
        say "Lmod $(rc_of "$sdir/theirs" | sed 's/^0$/loads/;s/^[1-9].*/refuses/') CUDA after cuda/12.4 (LOADEDMODULES=$VAL)"
fi

# --- an EasyBuild hierarchy -------------------------------------------------
hier=$MT_TMP/eb2/modules
eb_cuda "$hier/Core/$(mod_file "$tool" CUDA/12.4.0)"
gen hier-warn "$MT_LIB_DIR/site.yaml" "$hier/Core" -o "$hier" --layout hierarchical
[ "$(gen_rc hier-warn)" = 0 ] || fail "hierarchical beside Core/CUDA: exit $(gen_rc hier-warn): $(cat "$MT_TMP/hier-warn.err")"
grep -qF "'$hier/Core/CUDA' ($(mod_file "$tool" Core/CUDA/12.4.0)) provides modules 'CUDA'" "$MT_TMP/hier-warn.err" ||
        fail "hierarchical beside Core/CUDA: no warning naming CUDA: $(cat "$MT_TMP/hier-warn.err")"
gen hier-family "$fam" "$hier/Core" -o "$hier" --layout hierarchical
[ "$(gen_rc hier-family)" = 0 ] || fail "hierarchical beside Core/CUDA with family: exit $(gen_rc hier-family)"
sdir=$MT_TMP/s-hier
session "$tool" "$sdir" "$hier/Core" <<'EOF'
step eb load CUDA
step both load cuda/12.4
step purge1 purge
step ours load cuda/12.4
EOF
rc_is "$sdir/eb" 0 || fail "hierarchy: the site's 'module load CUDA' fails: $(cat "$sdir/eb.out")"
if rc_is "$sdir/both" 0; then
        fail "hierarchy: 'module load cuda/12.4' with CUDA loaded succeeded"
fi
rc_is "$sdir/ours" 0 || fail "hierarchy: 'module load cuda/12.4' fails: $(cat "$sdir/ours.out")"

# --- the toolkit's components ------------------------------------------------
sdir=$MT_TMP/s-find
if [ "$tool" = lmod ]; then
        # lmod.extensions off (the default): no extensions() and no block
        # of them in every `module avail`; `module keyword` still finds
        # the toolkit by a component, from the Extensions: whatis line.
        session "$tool" "$sdir" "$hier/Core" <<'EOF'
step spider spider cublas
step keyword keyword nvcc
step kwcublas keyword cublas
step avail avail
step show show cuda/12.4
EOF
        grep -q "cuda/12.4" "$sdir/keyword.out" ||
                fail "Lmod 'module keyword nvcc' does not find cuda/12.4: $(cat "$sdir/keyword.out")"
        grep -q "cuda/12.4" "$sdir/kwcublas.out" ||
                fail "Lmod 'module keyword cublas' does not find cuda/12.4 without extensions(): $(cat "$sdir/kwcublas.out")"
        grep -q "extensions(" "$sdir/show.out" && fail "lmod.extensions off: 'module show cuda/12.4' shows extensions()"
        grep -q "cublas" "$sdir/avail.out" && fail "lmod.extensions off: 'module avail' lists extensions: $(cat "$sdir/avail.out")"
        if grep -q "cuda/12.4" "$sdir/spider.out"; then
                say "note: Lmod $(lmod_version "$(lmod_init)") 'module spider cublas' finds cuda/12.4 without extensions()"
        else
                say "note: Lmod $(lmod_version "$(lmod_init)") 'module spider cublas' needs extensions() (keyword finds it)"
        fi
        # lmod.extensions: true: extensions(), so `module spider cublas`.
        printf 'family:\n  cuda: [cuda, CUDA]\nlmod: {extensions: true}\n' >"$MT_TMP/ext.yaml"
        gen ext "$MT_TMP/ext.yaml" "" -o "$MT_TMP/ext" --layout hierarchical
        [ "$(gen_rc ext)" = 0 ] || fail "lmod.extensions: true: exit $(gen_rc ext): $(cat "$MT_TMP/ext.err")"
        sdir=$MT_TMP/s-ext
        session "$tool" "$sdir" "$MT_TMP/ext/Core" <<'EOF'
step spider spider cublas
step avail avail
step show show cuda/12.4
EOF
        grep -q "cublas/12.4.5.8" "$sdir/spider.out" && grep -q "cuda/12.4" "$sdir/spider.out" ||
                fail "Lmod 'module spider cublas' does not find cuda/12.4: $(cat "$sdir/spider.out")"
        grep -q 'extensions("cudart/12.4.127, nvcc/12.4.131, cublas/12.4.5.8")' "$sdir/show.out" ||
                fail "Lmod 'module show cuda/12.4' shows no extensions: $(cat "$sdir/show.out")"
        grep -q "cublas (E)" "$sdir/avail.out" || fail "lmod.extensions: true: 'module avail' lists no extensions: $(cat "$sdir/avail.out")"
else
        session "$tool" "$sdir" "$all" <<'EOF'
step search search nvcc
step whatis whatis cuda/12.4
EOF
        grep -q "cuda/12.4: Extensions: cudart/12.4.127, nvcc/12.4.131, cublas/12.4.5.8" "$sdir/search.out" ||
                fail "EM 'module search nvcc' does not find cuda/12.4: $(cat "$sdir/search.out")"
        grep -q "cublas/12.4.5.8" "$sdir/whatis.out" || fail "EM 'module whatis cuda/12.4': no cublas: $(cat "$sdir/whatis.out")"
fi
if grep -rq "11.2" "$all/cuda" "$hier/Core/cuda"; then
        fail "the hostile cuFFT version reached a modulefile"
fi
no_pwned || true

# --- Environment Modules and the hierarchy ------------------------------------
if [ "$tool" = em ]; then
        gen em-hier "$MT_LIB_DIR/site.yaml" "" -o "$MT_TMP/em-hier" --layout hierarchical --json
        [ "$(grep -c "does not descend the hierarchical layout" "$MT_TMP/em-hier.err")" = 1 ] ||
                fail "tcl hierarchical: the EM warning is not said once on stderr: $(cat "$MT_TMP/em-hier.err")"
        python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["warnings"]; sys.exit(0 if sum("does not descend" in x for x in w) == 1 else 1)' \
                "$MT_TMP/em-hier.out" || fail "tcl hierarchical: the EM warning is not once in --json warnings"
        gen em-flat "$MT_LIB_DIR/site.yaml" "" -o "$MT_TMP/em-flat" --layout flat
        if grep -q "does not descend" "$MT_TMP/em-flat.err"; then fail "tcl flat: warns about the hierarchy"; fi
fi
mt_finish
