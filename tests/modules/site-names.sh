#!/usr/bin/env bash
# tests/modules/site-names.sh TOOL: the names a site chooses, names that
# stay, and the architecture rule (issue 18, findings 2, 3 and 7), with the
# real Lmod (Lua trees) or Environment Modules (Tcl trees).
#
#   names stay     generate -o T demo, then generate -o T demo cudnn-tarballs:
#                  CUDA/11/cudnn/8.9.7 still loads demo's cuDNN, byte for
#                  byte the same file; the tarballs' 8.9.7 is 8.9.7-2; with
#                  --rename the names are given afresh.
#   architecture   demo + nccl-tarballs on x86_64: `module load cuda/11.8
#                  nccl` must not load the aarch64 NCCL (its only NCCL for
#                  CUDA 11), which its full name still loads; with
#                  `arch: aarch64` the same roots make a tree where that NCCL
#                  is the plain, default one and demo's x86_64 CUDA the
#                  foreign, hidden builds.
#   easybuild      `naming: easybuild`, flat (EasyBuild's own layout) and
#                  hierarchical: load CUDA cuDNN NCCL by EasyBuild's names
#                  (-CUDA-<the toolkit's full release>), with the
#                  EBROOT<NAME>/EBVERSION<NAME> EasyBuild's modules set,
#                  swap CUDA, spider (Lmod) / avail (EM); with a second CUDA 12 toolkit, one
#                  cuDNN module per toolkit, each loading only with its own
#                  (Lmod swaps CUDA, as EasyBuild's load("CUDA/X.Y.Z") does;
#                  Environment Modules refuses).
#   spack          `naming: spack`: cuda/12.9.1, cudnn/9.7.1.26-12: load,
#                  switch cuda, spider (Lmod) / avail (EM).
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: site-names.sh lmod|em}
MT_SELF="$tool-site-names"
need "$tool"
fmt=$(tool_format "$tool")
ext=$([ "$tool" = lmod ] && echo .lua || true)

FX=$MT_TMP/fx
for f in demo cudnn-tarballs nccl-tarballs; do
        mkdir -p "$FX/$f"
        "$MKFIXTURE" "$f" "$FX/$f" >"$MT_TMP/mkfixture.log" 2>&1 ||
                { cat "$MT_TMP/mkfixture.log"; die "mkfixture $f failed"; }
done
DEMO=$FX/demo/sw
D8=$DEMO/cudnn-linux-x86_64-8.9.7.29_cuda11-archive
D9=$DEMO/cudnn-linux-x86_64-9.7.1.26_cuda12-archive
T8=$FX/cudnn-tarballs/apps/cudnn-linux-x86_64-8.9.7.29_cuda11-archive
N12=$DEMO/nccl_2.21.5-1+cuda12.4_x86_64
NARM=$FX/nccl-tarballs/apps/nccl_2.18.3-1+cuda11.0_aarch64

# gen CONFIG-TEXT OUT ARGS...: generate with that config (every default latest).
gen() {
        local cfg=$MT_TMP/site-$RANDOM.yaml out=$2
        printf 'defaults: { cuda: latest, cudnn: latest, nccl: latest }\n%s\n' "$1" >"$cfg"
        shift 2
        run_cudamod --config "$cfg" generate -o "$out" --format "$fmt" "$@" >"$out.log" 2>&1 ||
                { cat "$out.log"; die "generate $* failed"; }
}
# loaded STEPDIR STEP: VAL = LOADEDMODULES after that step.
loaded() { env_value "$1/$2.env" LOADEDMODULES || true; }
# expect_loaded WHAT STEPDIR STEP MODULE...: exactly those are loaded (any order).
expect_loaded() {
        local what=$1 sdir=$2 step=$3 have want
        shift 3
        loaded "$sdir" "$step"
        have=$(tr ':' '\n' <<<"$VAL" | sed '/^$/d' | sort | tr '\n' ' ')
        want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
        [ "$have" = "$want" ] || {
                fail "$what: loaded '$VAL', expected '$*' (rc $(rc_of "$sdir/$step")):"
                sed 's/^/    | /' "$sdir/$step.out"
        }
}
# expect_var WHAT STEPDIR STEP NAME VALUE
expect_var() {
        env_value "$2/$3.env" "$4" || VAL='(unset)'
        [ "$VAL" = "$5" ] || fail "$1: $4 is '$VAL', expected '$5'"
}

# --- names stay (finding 3) -------------------------------------------------
T=$MT_TMP/stay
gen "" "$T" --layout hierarchical "$DEMO"
f8=$T/CUDA/11/cudnn/8.9.7$ext
[ -f "$f8" ] || die "the demo tree has no CUDA/11/cudnn/8.9.7"
before=$(sha256sum <"$f8")
gen "" "$T" --layout hierarchical "$DEMO" "$FX/cudnn-tarballs/apps"
[ "$(sha256sum <"$f8")" = "$before" ] ||
        fail "adding a root rewrote CUDA/11/cudnn/8.9.7$ext: $(grep -m1 CUDNN_ROOT "$f8")"
[ -f "$T/CUDA/11/cudnn/8.9.7-2$ext" ] || fail "the tarballs' cuDNN 8.9.7 is not CUDA/11/cudnn/8.9.7-2"
grep -q "earlier run gave" "$T.log" || fail "generate did not say why the new 8.9.7 got another name: $(cat "$T.log")"
sdir=$MT_TMP/s-stay
session "$tool" "$sdir" "$T/Core" <<'EOF'
snap base
step old load cuda/11.8 cudnn/8.9.7
step purge purge
step new load cuda/11.8 cudnn/8.9.7-2
EOF
expect_loaded "names stay: load cuda/11.8 cudnn/8.9.7" "$sdir" old cuda/11.8 cudnn/8.9.7
expect_var "names stay: cudnn/8.9.7 is demo's" "$sdir" old CUDNN_ROOT "$D8"
expect_loaded "names stay: load cuda/11.8 cudnn/8.9.7-2" "$sdir" new cuda/11.8 cudnn/8.9.7-2
expect_var "names stay: cudnn/8.9.7-2 is the tarballs'" "$sdir" new CUDNN_ROOT "$T8"
# Once more with nothing new: nothing changes.
gen "" "$T" --layout hierarchical "$DEMO" "$FX/cudnn-tarballs/apps"
grep -qE ' 0 created, 0 updated' "$T.log" || fail "a third run changed the tree: $(tail -n 3 "$T.log")"
# --rename: named afresh, as a fresh tree with both roots would be.
gen "" "$T" --layout hierarchical --rename "$DEMO" "$FX/cudnn-tarballs/apps"
F=$MT_TMP/fresh
gen "" "$F" --layout hierarchical "$DEMO" "$FX/cudnn-tarballs/apps"
cmp -s "$f8" "$F/CUDA/11/cudnn/8.9.7$ext" || fail "--rename did not name CUDA/11/cudnn/8.9.7 as a fresh tree does"

# --- architecture (finding 7) -----------------------------------------------
if [ "$(uname -m)" = x86_64 ]; then
        A=$MT_TMP/arch
        gen "" "$A" --layout hierarchical "$DEMO" "$FX/nccl-tarballs/apps"
        sdir=$MT_TMP/s-arch
        session "$tool" "$sdir" "$A/Core" <<'EOF'
snap base
step bare load cuda/11.8 nccl
step purge purge
step full load cuda/11.8 nccl/2.18.3-aarch64
step purge2 purge
step twelve load cuda/12.9 nccl
step avail -t avail
EOF
        loaded "$sdir" bare
        # Demo has no NCCL for CUDA 11: no NCCL at all (on main: the aarch64
        # one, as nccl/2.18.3).
        [[ $VAL != *nccl* ]] || fail "module load cuda/11.8 nccl loaded an NCCL, the aarch64 one: $VAL"
        env_value "$sdir/bare.env" NCCL_ROOT && fail "module load cuda/11.8 nccl set NCCL_ROOT=$VAL"
        expect_loaded "load cuda/11.8 nccl/2.18.3-aarch64 (by its full name)" "$sdir" full cuda/11.8 nccl/2.18.3-aarch64
        expect_var "the aarch64 NCCL by its full name" "$sdir" full NCCL_ROOT "$NARM"
        expect_loaded "load cuda/12.9 nccl" "$sdir" twelve cuda/12.9 nccl/2.21.5
        expect_var "load cuda/12.9 nccl" "$sdir" twelve NCCL_ROOT "$N12"

        # The same roots, a tree for the aarch64 partition.
        A64=$MT_TMP/arch-aarch64
        gen "arch: aarch64" "$A64" --layout hierarchical "$DEMO" "$FX/nccl-tarballs/apps"
        [ -f "$A64/Core/cuda/11.8-x86_64$ext" ] || fail "arch: aarch64: demo's CUDA 11.8 is not cuda/11.8-x86_64"
        [ -f "$A64/CUDA/11/nccl/2.18.3$ext" ] || fail "arch: aarch64: the aarch64 NCCL is not nccl/2.18.3"
        sdir=$MT_TMP/s-arch64
        session "$tool" "$sdir" "$A64/Core" <<'EOF'
snap base
step cuda load cuda
step purge purge
step nccl load cuda/11.8-x86_64 nccl
EOF
        loaded "$sdir" cuda
        [ -z "$VAL" ] || fail "arch: aarch64: module load cuda loaded $VAL, a build for x86_64"
        expect_loaded "arch: aarch64: load cuda/11.8-x86_64 nccl" "$sdir" nccl cuda/11.8-x86_64 nccl/2.18.3
        expect_var "arch: aarch64: nccl is the aarch64 build" "$sdir" nccl NCCL_ROOT "$NARM"
else
        say "not x86_64: the fixtures' foreign builds are the aarch64 ones; architecture part skipped"
fi

# --- EasyBuild's names (finding 2) ------------------------------------------
E=$MT_TMP/eb-flat
gen "naming: easybuild" "$E" --layout flat "$DEMO"
for m in CUDA/12.9.1 CUDA/11.8.0 cuDNN/9.7.1.26-CUDA-12.9.1 cuDNN/8.9.7.29-CUDA-11.8.0 NCCL/2.21.5-CUDA-12.9.1; do
        [ -f "$E/$m$ext" ] || fail "naming: easybuild, flat: no $m"
done
sdir=$MT_TMP/s-eb-flat
if [ "$tool" = lmod ]; then list_cmd='-t spider cuDNN'; else list_cmd='-t avail cuDNN'; fi
session "$tool" "$sdir" "$E" <<EOF
snap base
step load load CUDA cuDNN NCCL
step purge purge
step eleven load CUDA/11.8.0 cuDNN/8.9.7.29-CUDA-11.8.0
step list $list_cmd
EOF
expect_loaded "easybuild flat: load CUDA cuDNN NCCL" "$sdir" load CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.9.1 NCCL/2.21.5-CUDA-12.9.1
expect_var "easybuild flat: cuDNN" "$sdir" load CUDNN_ROOT "$D9"
expect_var "easybuild flat: NCCL" "$sdir" load NCCL_ROOT "$N12"
expect_var "easybuild flat: CUDA" "$sdir" load CUDA_HOME "$DEMO/cuda-12.9"
# What EasyBuild's own modules set and its easyblocks read (issue 33).
expect_var "easybuild flat: EBROOTCUDA" "$sdir" load EBROOTCUDA "$DEMO/cuda-12.9"
expect_var "easybuild flat: EBVERSIONCUDA" "$sdir" load EBVERSIONCUDA 12.9.1
expect_var "easybuild flat: EBROOTCUDNN" "$sdir" load EBROOTCUDNN "$D9"
expect_var "easybuild flat: EBVERSIONNCCL" "$sdir" load EBVERSIONNCCL 2.21.5
expect_var "easybuild flat: EBVERSIONCUDNN for CUDA 11" "$sdir" eleven EBVERSIONCUDNN 8.9.7.29
expect_loaded "easybuild flat: load CUDA/11.8.0 cuDNN/8.9.7.29-CUDA-11.8.0" "$sdir" eleven CUDA/11.8.0 cuDNN/8.9.7.29-CUDA-11.8.0
expect_var "easybuild flat: cuDNN for CUDA 11" "$sdir" eleven CUDNN_ROOT "$D8"
for m in cuDNN/9.7.1.26-CUDA-12.9.1 cuDNN/8.9.7.29-CUDA-11.8.0; do
        grep -q "^$m" "$sdir/list.out" || fail "easybuild flat: 'module $list_cmd' does not list $m: $(cat "$sdir/list.out")"
done

E=$MT_TMP/eb-hier
gen "naming: easybuild" "$E" --layout hierarchical "$DEMO"
sdir=$MT_TMP/s-eb-hier
session "$tool" "$sdir" "$E/Core" <<EOF
snap base
step load load CUDA/12.9.1 cuDNN NCCL
step swap switch CUDA CUDA/11.8.0
step after load cuDNN
step list $list_cmd
EOF
expect_loaded "easybuild hierarchical: load CUDA/12.9.1 cuDNN NCCL" "$sdir" load CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.9.1 NCCL/2.21.5-CUDA-12.9.1
expect_var "easybuild hierarchical: cuDNN" "$sdir" load CUDNN_ROOT "$D9"
expect_var "easybuild hierarchical: MODULEPATH" "$sdir" load MODULEPATH "$E/CUDA/12:$E/Core"
# Lmod reloads cuDNN from the CUDA 11 level (NCCL has none: inactive);
# Environment Modules unloads the dependents (hier-swap.sh), and the
# CUDA 11 cuDNN is loaded after. Either way: no CUDA 12 build beside
# CUDA 11, and then cuDNN is the CUDA 11 one.
loaded "$sdir" swap
[[ $VAL == *CUDA/11.8.0* && $VAL != *CUDA-12.* ]] ||
        fail "easybuild hierarchical: switch CUDA CUDA/11.8.0 left '$VAL': $(cat "$sdir/swap.out")"
expect_loaded "easybuild hierarchical: then load cuDNN" "$sdir" after CUDA/11.8.0 cuDNN/8.9.7.29-CUDA-11.8.0
expect_var "easybuild hierarchical: cuDNN after the switch" "$sdir" after CUDNN_ROOT "$D8"
if [ "$tool" = lmod ]; then
        for m in cuDNN/9.7.1.26-CUDA-12.9.1 cuDNN/8.9.7.29-CUDA-11.8.0; do
                grep -q "^$m" "$sdir/list.out" || fail "easybuild hierarchical: spider does not list $m: $(cat "$sdir/list.out")"
        done
fi

# Two CUDA 12 toolkits (the runfile fixture's 12.4.1 beside demo's
# 12.9.1): the cuDNN and NCCL archives say only "CUDA 12", so each gets a
# module per toolkit, as EasyBuild installs them once per CUDA, and each
# needs exactly its own.
mkdir -p "$FX/two12"
"$MKFIXTURE" runfile "$FX/two12" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture runfile failed"; }
E=$MT_TMP/eb-two
gen "naming: easybuild" "$E" --layout flat "$DEMO" "$FX/two12/usr/local"
for m in CUDA/12.4.1 cuDNN/9.7.1.26-CUDA-12.4.1 cuDNN/9.7.1.26-CUDA-12.9.1 NCCL/2.21.5-CUDA-12.4.1; do
        [ -f "$E/$m$ext" ] || fail "naming: easybuild, two CUDA 12: no $m"
done
grep -q '"toolkit"' "$E/.cudamod-index.json" ||
        fail "naming: easybuild, two CUDA 12: the index does not say which toolkit each cuDNN module is for"
sdir=$MT_TMP/s-eb-two
session "$tool" "$sdir" "$E" <<EOF
snap base
step own load CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.9.1
step purge purge
step other load CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.4.1
step purge2 purge
step older load CUDA/12.4.1 cuDNN/9.7.1.26-CUDA-12.4.1
EOF
expect_loaded "easybuild, two CUDA 12: load CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.9.1" "$sdir" own CUDA/12.9.1 cuDNN/9.7.1.26-CUDA-12.9.1
expect_var "easybuild, two CUDA 12: cuDNN" "$sdir" own CUDNN_ROOT "$D9"
expect_loaded "easybuild, two CUDA 12: load CUDA/12.4.1 cuDNN/9.7.1.26-CUDA-12.4.1" "$sdir" older CUDA/12.4.1 cuDNN/9.7.1.26-CUDA-12.4.1
expect_var "easybuild, two CUDA 12: the same cuDNN for 12.4.1" "$sdir" older CUDNN_ROOT "$D9"
# The cuDNN for the other toolkit never sits beside CUDA 12.9.1: Lmod
# swaps CUDA to 12.4.1 (EasyBuild's modules do the same), Environment
# Modules refuses the load.
loaded "$sdir" other
if [ "$tool" = lmod ]; then
        expect_loaded "easybuild, two CUDA 12: Lmod swaps to the cuDNN's toolkit" "$sdir" other CUDA/12.4.1 cuDNN/9.7.1.26-CUDA-12.4.1
else
        [[ $VAL != *CUDA/12.9.1*cuDNN/9.7.1.26-CUDA-12.4.1* ]] ||
                fail "easybuild, two CUDA 12: cuDNN/9.7.1.26-CUDA-12.4.1 loaded beside CUDA/12.9.1: $(cat "$sdir/other.out")"
fi

# --- Spack's names ----------------------------------------------------------
S=$MT_TMP/spack
gen "naming: spack" "$S" --layout hierarchical "$DEMO"
sdir=$MT_TMP/s-spack
if [ "$tool" = lmod ]; then list_cmd='-t spider cudnn'; else list_cmd='-t avail cudnn'; fi
session "$tool" "$sdir" "$S/Core" <<EOF
snap base
step load load cuda cudnn nccl
step swap switch cuda cuda/11.8.0
step after load cudnn
step purge purge
step eleven load cuda/11.8.0 cudnn/8.9.7.29-11
step list $list_cmd
EOF
expect_loaded "spack: load cuda cudnn nccl" "$sdir" load cuda/12.9.1 cudnn/9.7.1.26-12 nccl/2.21.5
expect_var "spack: cudnn" "$sdir" load CUDNN_ROOT "$D9"
loaded "$sdir" swap
[[ $VAL == *cuda/11.8.0* && $VAL != *-12* && $VAL != *nccl* ]] ||
        fail "spack: switch cuda cuda/11.8.0 left '$VAL': $(cat "$sdir/swap.out")"
expect_loaded "spack: then load cudnn" "$sdir" after cuda/11.8.0 cudnn/8.9.7.29-11
expect_loaded "spack: load cuda/11.8.0 cudnn/8.9.7.29-11" "$sdir" eleven cuda/11.8.0 cudnn/8.9.7.29-11
expect_var "spack: cudnn for CUDA 11" "$sdir" eleven CUDNN_ROOT "$D8"
grep -q "^cudnn/8.9.7.29-11" "$sdir/list.out" || fail "spack: 'module $list_cmd' does not list cudnn/8.9.7.29-11: $(cat "$sdir/list.out")"

mt_finish
