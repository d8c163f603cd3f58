#!/usr/bin/env bash
# tests/modules/host-compiler.sh TOOL: config host_compiler (doc/guide.md, `cudamod validate`: nvcc and cmake)
# in modules loaded by the real tool, on the demo tree (cuda 11.8, 12.9),
# hierarchical layout:
#   "12": a compiler path under a directory whose name holds shell, Lua and
#         Tcl syntax that every reader keeps as data ([, {...}, (...), ;, |,
#         <>, #, %; '$', '`', ']' are refused at the config's position,
#         see doc/guide.md "Threat model"): load
#         cuda/12.9 gives CUDAHOSTCXX=PATH and NVCC_PREPEND_FLAGS=-ccbin=PATH
#         byte for byte, and nothing is run (no PWNED);
#   "11": {module: gcc/11}: load cuda/11.8 loads gcc/11 with it (Lmod
#         depends_on, Environment Modules `module load`, a requirement
#         under auto_handling) and sets neither variable; unloading
#         cuda/11.8 unloads gcc/11 again; loading it with gcc/11 already
#         loaded keeps that one.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: host-compiler.sh lmod|em}
MT_SELF="$tool-host-compiler"
need "$tool"

X_ROOT=$MT_TMP/fx
mkdir -p "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }

# No blank, quote or backslash (nvcc splits NVCC_PREPEND_FLAGS at blanks),
# and nothing a reader of a modulefile would take as code ('$', '`', ']'):
# the config refuses those; every other special byte is allowed.
hostile="$MT_TMP/gcc;touch(PWNED)|[exec{x};<y>#%~!*?"
mkdir -p "$hostile"
printf '#!/bin/sh\nexec /usr/bin/g++ "$@"\n' >"$hostile/g++"
chmod +x "$hostile/g++"

# A gcc/11 module, in the tool's format.
gccmp=$MT_TMP/gcc-mf
mkdir -p "$gccmp/gcc"
if [ "$tool" = lmod ]; then
        printf 'setenv("SITE_GCC", "11")\n' >"$gccmp/gcc/11.lua"
else
        printf '#%%Module\nsetenv SITE_GCC 11\n' >"$gccmp/gcc/11"
fi

# YAML double-quoted: '$' and the rest are literal there.
cat >"$MT_TMP/site.yaml" <<EOF
defaults: { cuda: latest, cudnn: latest, nccl: latest }
host_compiler:
  "12": '$hostile/g++'
  "11": { module: gcc/11 }
EOF
out=$MT_TMP/out
if ! run_cudamod --config "$MT_TMP/site.yaml" generate -o "$out" --format "$(tool_format "$tool")" \
        "$X_ROOT/sw" >"$MT_TMP/generate.log" 2>&1; then
        cat "$MT_TMP/generate.log"
        die "cudamod generate failed"
fi

# '$', '`' and ']' in the path: refused at their position, nothing written.
for bad in 'gcc$(touch PWNED)' 'gcc`touch`' 'gcc[exec touch PWNED]'; do
        printf 'host_compiler:\n  "12": %s\n' "'$MT_TMP/${bad// /}/g++'" >"$MT_TMP/bad.yaml"
        rc_=0
        run_cudamod --config "$MT_TMP/bad.yaml" generate -o "$MT_TMP/bad-out" --format "$(tool_format "$tool")" \
                "$X_ROOT/sw" >"$MT_TMP/bad.log" 2>&1 || rc_=$?
        [ "$rc_" = 2 ] && grep -q "bad.yaml:2:[0-9]*: .*the host compiler path holds" "$MT_TMP/bad.log" ||
                fail "host compiler path $bad: exit $rc_, not refused at its position: $(cat "$MT_TMP/bad.log")"
        [ -e "$MT_TMP/bad-out/Core" ] && fail "host compiler path $bad: files were written"
done

sdir=$MT_TMP/s
session "$tool" "$sdir" "$out/Core:$gccmp" <<'EOF'
cd "$MT_OUT/../cwd" 2>/dev/null || { mkdir -p "$MT_OUT/../cwd" && cd "$MT_OUT/../cwd"; }
snap base
step cuda12 load cuda/12.9
step purge1 purge
step cuda11 load cuda/11.8
step unload11 unload cuda/11.8
step gccfirst load gcc/11
step both load cuda/11.8
step unload11b unload cuda/11.8
step purge2 purge
EOF

for s in cuda12 purge1 cuda11 unload11 gccfirst both unload11b purge2; do
        rc_is "$sdir/$s" 0 || { fail "step $s failed (rc $(rc_of "$sdir/$s")):"; sed 's/^/    | /' "$sdir/$s.out"; }
done

env_value "$sdir/cuda12.env" CUDAHOSTCXX || true
[ "$VAL" = "$hostile/g++" ] || fail "cuda/12.9: CUDAHOSTCXX is $(printf %q "$VAL"), expected $(printf %q "$hostile/g++")"
env_value "$sdir/cuda12.env" NVCC_PREPEND_FLAGS || true
[ "$VAL" = "-ccbin=$hostile/g++" ] ||
        fail "cuda/12.9: NVCC_PREPEND_FLAGS is $(printf %q "$VAL"), expected $(printf %q "-ccbin=$hostile/g++")"
env_value "$sdir/cuda12.env" LOADEDMODULES || true
[ "$VAL" = cuda/12.9 ] || fail "cuda/12.9: LOADEDMODULES is '$VAL'"

env_value "$sdir/cuda11.env" LOADEDMODULES || true
[ "$VAL" = gcc/11:cuda/11.8 ] || fail "cuda/11.8: LOADEDMODULES is '$VAL', expected gcc/11:cuda/11.8"
env_value "$sdir/cuda11.env" SITE_GCC || true
[ "$VAL" = 11 ] || fail "cuda/11.8: gcc/11's SITE_GCC is '$VAL'"
if env_value "$sdir/cuda11.env" CUDAHOSTCXX; then fail "cuda/11.8 ({module: gcc/11}) sets CUDAHOSTCXX='$VAL'"; fi
if env_value "$sdir/cuda11.env" NVCC_PREPEND_FLAGS; then fail "cuda/11.8 sets NVCC_PREPEND_FLAGS='$VAL'"; fi

env_value "$sdir/unload11.env" LOADEDMODULES || true
[ -z "$VAL" ] || fail "unload cuda/11.8: LOADEDMODULES is '$VAL', expected nothing (gcc/11 went with it)"
env_delta "$sdir/base.env" "$sdir/unload11.env"
check_unchanged "unload cuda/11.8" || true

env_value "$sdir/both.env" LOADEDMODULES || true
[ "$VAL" = gcc/11:cuda/11.8 ] || fail "gcc/11 then cuda/11.8: LOADEDMODULES is '$VAL'"
env_value "$sdir/unload11b.env" LOADEDMODULES || true
[ "$VAL" = gcc/11 ] || fail "gcc/11, cuda/11.8, unload cuda/11.8: LOADEDMODULES is '$VAL', expected gcc/11 (loaded by the user)"

env_delta "$sdir/base.env" "$sdir/purge2.env"
check_unchanged "purge" || true
no_pwned || true
mt_finish
