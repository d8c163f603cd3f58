#!/usr/bin/env bash
# tests/modules/doctor.sh TOOL: `cudamod doctor` on a fake source-built torch
# (mkfixture doctor: CUDA 12.4 and 13.0, cuDNN 9.1.0 and NCCL 2.21.5 for CUDA
# 12, torch 2.5.1 built for CUDA 12.4 needing libcudart.so.12, libcudnn.so.9,
# libnccl.so.2) in a user's shell with the real module tool, against the
# hierarchical tree cudamod generates for those installs:
#   nothing loaded        -> exit 1, R1 (libcudart.so.12 resolves nowhere),
#                            and the line it suggests is exactly
#                            `module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5`
#   that line loaded      -> exit 0, no finding, "nothing wrong found", every
#                            CUDA need resolved through LD_LIBRARY_PATH into
#                            the modules' directories
#   then cuda/13.0 (swap) -> exit 1: the toolkit's major is not torch's, and
#                            libcudart.so.12 resolves nowhere again
# Then Debian's torch layout (mkfixture doctor-debian: torch/lib links into
# a system directory, libtorch_cuda.so.2.6 is only there and holds the
# NCCL, cuBLAS and cuSPARSE needs):
#   nothing loaded        -> the line is again exactly
#                            `module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5`
#   that line loaded      -> exit 0: every need of torch's libraries resolves
# The host's /etc/ld.so.cache may list a real CUDA 13 (this project's
# machines do): doctor must see through it, which is part of the test.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: doctor.sh lmod|em}
MT_SELF="$tool-doctor"
need "$tool"
need_python() { command -v python3 >/dev/null || { say "python3 is needed"; exit 77; }; }
need_python

fx=$MT_TMP/fx
"$MKFIXTURE" doctor "$fx" >/dev/null || die "mkfixture doctor failed"
torch=$fx/site-packages/torch
out=$MT_TMP/mf
generate "$tool" hierarchical "$out" "$fx/sw"
sdir=$MT_TMP/s
cudamod=$CUDAMOD_BIN
# Lmod swaps a family member on load (cudnn and nccl go inactive: not on the
# CUDA 13 level); Environment Modules refuses that and needs a switch, which
# unloads them (hier-swap.sh).
if [ "$tool" = lmod ]; then swap="load cuda/13.0"; else swap="switch cuda cuda/13.0"; fi

# The session's shell has only the module tool's environment: cudamod and
# the torch path are spelled out here.
session "$tool" "$sdir" "$out/Core" <<EOF
run none "$cudamod" doctor --json "$torch"
run none-text "$cudamod" doctor "$torch"
step load load cuda/12.4 cudnn/9.1.0 nccl/2.21.5
run ok "$cudamod" doctor --json "$torch"
run ok-text "$cudamod" doctor "$torch"
step swap $swap
run swapped "$cudamod" doctor --json "$torch"
EOF

# json_get STEP EXPR: evaluate a Python expression on the step's JSON (d).
json_get() {
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
                "$sdir/$1.out" "${@:2}" 2>&1
}
ids() { json_get "$1" '" ".join(sorted({f["id"] for f in d["findings"]}))'; }

# 1. Nothing loaded.
rc_is "$sdir/none" 1 || fail "nothing loaded: exit $(rc_of "$sdir/none"), want 1: $(head -c 2000 "$sdir/none.out")"
[ "$(json_get none 'd["cudamod"], d["format"], d["status"]')" = "('doctor', 1, 'problems')" ] ||
        fail "nothing loaded: the document's head is $(json_get none 'd["cudamod"], d["format"], d["status"]')"
[[ " $(ids none) " == *" unresolved "* ]] || fail "nothing loaded: no 'unresolved' finding: $(ids none)"
what=$(json_get none '[f["what"] for f in d["findings"] if f["id"] == "unresolved"][0]')
[[ $what == *libcudart.so.12* ]] || fail "nothing loaded: the unresolved finding does not name libcudart.so.12: $what"
line=$(json_get none 'd["modules"]["module_load"]')
[ "$line" = "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5" ] ||
        fail "nothing loaded: suggested '$line', want 'module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5'"
[ "$(json_get none 'd["built_for"]["cuda_major"], d["torch"]["cuda"], d["torch"]["version"]')" = "(12, '12.4', '2.5.1')" ] ||
        fail "nothing loaded: built_for/torch: $(json_get none 'd["built_for"], d["torch"]')"
[ "$(json_get none 'd["modules"]["unprovided"]')" = "[]" ] ||
        fail "nothing loaded: needs no module provides: $(json_get none 'd["modules"]["unprovided"]')"
grep -qF "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5" "$sdir/none-text.out" ||
        fail "nothing loaded: the text report does not print the module load line: $(cat "$sdir/none-text.out")"
rc_is "$sdir/none-text" 1 || fail "nothing loaded (text): exit $(rc_of "$sdir/none-text"), want 1"

# 2. The suggested line loaded with the real tool: nothing wrong.
rc_is "$sdir/load" 0 || fail "$tool could not load the suggested modules: $(cat "$sdir/load.out")"
rc_is "$sdir/ok" 0 || fail "with the modules loaded: exit $(rc_of "$sdir/ok"), want 0; findings: $(json_get ok '[f["what"] for f in d["findings"]]')"
[ "$(json_get ok 'len(d["findings"]), d["status"]')" = "(0, 'ok')" ] ||
        fail "with the modules loaded: $(json_get ok '[(f["id"], f["what"]) for f in d["findings"]]')"
bad=$(json_get ok '[(l["path"], n["soname"], n["path"], n["source"]) for l in d["libraries"] for n in l["needs"]
                    if n["soname"].split(".so")[0] in ("libcudart", "libcublas", "libcudnn", "libnccl")
                    and (n["source"] != "LD_LIBRARY_PATH" or not n["path"].startswith(sys.argv[3]))]' "$fx/sw")
[ "$bad" = "[]" ] || fail "with the modules loaded, CUDA needs that do not resolve into the modules' directories: $bad"
grep -q '^nothing wrong found$' "$sdir/ok-text.out" ||
        fail "with the modules loaded, the text report does not end 'nothing wrong found': $(tail -5 "$sdir/ok-text.out")"
rc_is "$sdir/ok-text" 0 || fail "with the modules loaded (text): exit $(rc_of "$sdir/ok-text"), want 0"

# 3. The CUDA of the other major.
rc_is "$sdir/swapped" 1 || fail "after loading cuda/13.0: exit $(rc_of "$sdir/swapped"), want 1"
[[ " $(ids swapped) " == *" toolkit-major "* ]] || fail "after loading cuda/13.0: no 'toolkit-major' finding: $(ids swapped)"
[[ " $(ids swapped) " == *" unresolved "* ]] || fail "after loading cuda/13.0: no 'unresolved' finding: $(ids swapped)"

# 4. Debian's torch.
dfx=$MT_TMP/dfx
"$MKFIXTURE" doctor-debian "$dfx" >/dev/null || die "mkfixture doctor-debian failed"
dtorch=$dfx/usr/lib/python3/dist-packages/torch
dout=$MT_TMP/dmf
generate "$tool" hierarchical "$dout" "$dfx/sw"
ddir=$MT_TMP/ds
session "$tool" "$ddir" "$dout/Core" <<EOF
run none "$cudamod" doctor --json "$dtorch"
step load load cuda/12.4 cudnn/9.1.0 nccl/2.21.5
run ok "$cudamod" doctor --json "$dtorch"
EOF
sdir=$ddir
line=$(json_get none 'd["modules"]["module_load"]')
[ "$line" = "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5" ] ||
        fail "Debian torch, nothing loaded: suggested '$line', want 'module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5'"
[ "$(json_get none '[l["needed_by"] for l in d["libraries"] if l["path"].endswith("/libtorch_cuda.so.2.6")]')" = "['libtorch.so.2.6']" ] ||
        fail "Debian torch: libtorch_cuda.so.2.6 not followed from libtorch.so.2.6: $(json_get none '[l["path"] for l in d["libraries"]]')"
rc_is "$ddir/load" 0 || fail "Debian torch: $tool could not load the suggested modules: $(cat "$ddir/load.out")"
rc_is "$ddir/ok" 0 || fail "Debian torch, the line loaded: exit $(rc_of "$ddir/ok"), want 0; findings: $(json_get ok '[f["what"] for f in d["findings"]]')"
bad=$(json_get ok '[(l["path"], n["soname"], n["path"]) for l in d["libraries"] for n in l["needs"]
                    if n["soname"].split(".so")[0] in ("libcudart", "libcublas", "libcublasLt", "libcusparse", "libcudnn", "libnccl")
                    and (n["source"] != "LD_LIBRARY_PATH" or not n["path"].startswith(sys.argv[3]))]' "$dfx/sw")
[ "$bad" = "[]" ] || fail "Debian torch, the line loaded: CUDA needs outside the modules' directories: $bad"

mt_finish
