#!/bin/bash
# export.sh: `cudamod export spack|easybuild DIR` read as the tools read
# them (issue 33), and the easybuild preset's EB* variables.
#
# 1. The demo's tree (hierarchical Lua, and flat Tcl): the packages.yaml
#    loads with python3's yaml and passes the part of Spack's packages
#    schema that externals use (check.py); every prefix is an install and
#    every module of `modules:` is a file of the tree. The EasyBuild file
#    reads with configparser as EasyBuild's ConfigObj reads it: a section
#    per module of the tree, name/version/prefix, EasyBuild's names.
# 2. Two runs give the same bytes.
# 3. A runtime-only install (NVIDIA's CUDA 13 cuSPARSELt wheel) is
#    recorded as such in the index and left out, with a warning.
# 3b. The cuda_arch variant a Spack spec.json records is the external's.
# 4. Errors: DIR not a tree cudamod generated, no DIR, an unknown format:
#    exit 2 and a clear message.
# 5. naming: easybuild: the lines of the CUDA, cuDNN and MAGMA modules
#    (Lua and Tcl) that set EBROOT/EBVERSION, against
#    tests/export/expect/easybuild-eb.txt (the fixture's root as @ROOT@).
#
# Needs CUDAMOD_BIN, MKELFSTUB and MKFIXTURE (meson sets them), python3
# with yaml (skipped without it).

. "$(dirname "$0")/../valgrind.sh"
# shellcheck source=../stress/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../stress/lib.sh"

[ -n "${MKFIXTURE:-}" ] && [ -x "$MKFIXTURE" ] || skip "MKFIXTURE is not set"
python3 -c 'import yaml' 2>/dev/null || skip "python3's yaml is needed to read packages.yaml"
expect=$here/../export/expect
check="python3 $here/../export/check.py"

"$MKFIXTURE" demo "$work/demo" >/dev/null
sw=$work/demo/sw

# --- 1, 2: the demo's trees -----------------------------------------------------
for flavour in "lua hierarchical" "tcl flat"; do
        set -- $flavour
        out=$work/out-$1
        "$cudamod" -q generate --format "$1" --layout "$2" -o "$out" "$sw" >/dev/null
        "$cudamod" export spack "$out" >"$work/packages-$1.yaml" 2>"$work/err" || fail "export spack exit $?"
        [ ! -s "$work/err" ] || fail "export spack said: $(cat "$work/err")"
        $check spack "$work/packages-$1.yaml" "$out" || fail "packages.yaml of the $2 $1 tree"
        "$cudamod" export easybuild "$out" >"$work/eb-$1.cfg" || fail "export easybuild exit $?"
        $check easybuild "$work/eb-$1.cfg" "$out" || fail "the EasyBuild metadata of the $2 $1 tree"
        "$cudamod" export spack "$out" | cmp -s - "$work/packages-$1.yaml" || fail "two spack exports differ"
        "$cudamod" export easybuild "$out" | cmp -s - "$work/eb-$1.cfg" || fail "two easybuild exports differ"
done
note "1, 2: packages.yaml and the EasyBuild metadata read as the tools read them; the same bytes twice"

# --- 3: a runtime-only install ----------------------------------------------------
"$MKFIXTURE" cusparselt-wheels "$work/cu13" >/dev/null
"$cudamod" -q generate -o "$work/out-cu13" "$work/cu13/venv" >/dev/null
grep -q '"kind": "runtime"' "$work/out-cu13/.cudamod-index.json" || fail "the index does not say runtime"
"$cudamod" export spack "$work/out-cu13" >"$work/cu13.yaml" 2>"$work/err" || fail "export spack exit $?"
grep -q "left out cusparselt/.*is a runtime-only install" "$work/err" || fail "no warning: $(cat "$work/err")"
! grep -q cusparselt "$work/cu13.yaml" || fail "the runtime cuSPARSELt is in packages.yaml"
$check spack "$work/cu13.yaml" "$work/out-cu13" || fail "packages.yaml of the CUDA 13 wheels"
"$cudamod" -q export easybuild "$work/out-cu13" >"$work/cu13.cfg" 2>"$work/err" || fail "export easybuild exit $?"
[ ! -s "$work/err" ] || fail "-q still said: $(cat "$work/err")"
! grep -q cusparselt "$work/cu13.cfg" || fail "the runtime cuSPARSELt is in the EasyBuild metadata"
note "3: a runtime-only install is recorded, left out and said"

# --- 3b: the cuda_arch a Spack spec.json says ------------------------------------
"$MKFIXTURE" metadata "$work/md" >/dev/null
"$cudamod" -q generate -o "$work/out-md" "$work/md/spack" "$work/md/easybuild" >/dev/null
"$cudamod" export spack "$work/out-md" >"$work/md.yaml" || fail "export spack exit $?"
$check spack "$work/md.yaml" "$work/out-md" || fail "packages.yaml of the metadata fixture"
grep -q '^    - spec: "nvshmem@3.1.7 +cuda cuda_arch=80,90"$' "$work/md.yaml" || fail "no cuda_arch for NVSHMEM"
grep -q '^    - spec: "nccl@2.23.4 +cuda cuda_arch=90"$' "$work/md.yaml" || fail "no cuda_arch for NCCL"
grep -q '^    - spec: "nvshmem@3.2.5 +cuda"$' "$work/md.yaml" || fail "a cuda_arch for the easyconfig's NVSHMEM"
note "3b: the cuda_arch of Spack's spec.json is the external's variant"

# --- 4: errors ----------------------------------------------------------------------
rc=0; "$cudamod" export spack "$work/demo" >"$work/o" 2>"$work/err" || rc=$?
[ $rc = 2 ] || fail "export of a directory generate did not write: exit $rc"
grep -q "has no .cudamod-index.json: not a directory cudamod generate wrote" "$work/err" || fail "$(cat "$work/err")"
[ ! -s "$work/o" ] || fail "something on stdout for a refused export"
rc=0; "$cudamod" export easybuild "$work/nonexistent" 2>"$work/err" || rc=$?
[ $rc = 2 ] || fail "export of a missing directory: exit $rc"
rc=0; "$cudamod" export conda "$work/out-lua" 2>"$work/err" || rc=$?
[ $rc = 2 ] && grep -q "'conda' is not one of spack, easybuild" "$work/err" || fail "unknown format: exit $rc"
rc=0; "$cudamod" export spack 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "export without DIR: exit $rc"
note "4: what is not a generated tree is a usage error (exit 2)"

# --- 5: naming: easybuild ---------------------------------------------------------------
printf 'naming: easybuild\n' >"$work/eb.yaml"
for format in lua tcl; do
        "$cudamod" -q --config "$work/eb.yaml" generate --format $format -o "$work/out-eb-$format" "$sw" >/dev/null
done
# Only the lines that name EB* (the rest of the modules is other tests'):
# the help's table and the setenv of each format.
for f in out-eb-lua/Core/CUDA/12.9.1.lua out-eb-lua/CUDA/12/cuDNN/9.7.1.26-CUDA-12.9.1.lua \
         out-eb-tcl/Core/CUDA/12.9.1 out-eb-tcl/CUDA/12/cuDNN/9.7.1.26-CUDA-12.9.1 \
         out-eb-lua/CUDA/12/magma/2.9.0-CUDA-12.9.1.lua; do
        echo "== $f"
        grep EB "$work/$f" | sed "s|$work/demo|@ROOT@|g"
done >"$work/eb-lines.txt"
diff -u "$expect/easybuild-eb.txt" "$work/eb-lines.txt" || fail "the EB* lines differ from expect/easybuild-eb.txt"
"$cudamod" export easybuild "$work/out-eb-lua" >"$work/eb.cfg"
$check easybuild "$work/eb.cfg" "$work/out-eb-lua" || fail "the EasyBuild metadata of the easybuild-named tree"
note "5: the easybuild preset sets EBROOT<NAME> and EBVERSION<NAME>"
