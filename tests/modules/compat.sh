#!/usr/bin/env bash
# tests/modules/compat.sh TOOL: CUDA forward compatibility (config
# cuda_compat: auto) on the compat fixture (tests/layouts.c build_compat:
# usr/local/cuda-12.9 with NVIDIA's cuda-compat-12-9 in compat/, driver
# 575.51.03; usr/local/cuda-12.4 without one), loaded by the real tools:
# every Lmod present (Debian's 8.6/8.7 and 9.2) for lmod, on the Lua tree
# and on the Tcl tree (Lmod's tcl2lua), Environment Modules 5 for em. The node's driver is given to the module through a
# private mount namespace (unshare -rm): a tmpfs over /proc/driver and one
# over /sys/module, holding nvidia/version or not; the modulefile is never
# edited. For each node:
#   driver 535.104.05 in /proc/driver/nvidia/version -> compat/ first on
#     LD_LIBRARY_PATH; unload gives the environment back
#   only /sys/module/nvidia/version, 550.54.15       -> the same
#   driver 580.65.06, 575.51.03 (the same) or 575.40.01 (an older driver
#   of the same branch: not what the package is for) -> compat/ nowhere
#   no driver (a login node)                          -> compat/ nowhere
# and always: compat/ never on LIBRARY_PATH or CPATH, nothing printed
# (but the driver check's line for 575.40.01, older than CUDA 12.9's driver),
# status 0; cuda/12.4 (no compat/) sets what it sets without it. Without
# cuda_compat no module names compat/ (expect/compat.txt holds that).
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: compat.sh lmod|em}
MT_SELF="$tool-forward-compat"
if [ "$tool" = lmod ]; then need lmods; else need em; fi

# A private mount namespace with a tmpfs over /proc/driver: where it is not
# permitted (no user namespaces, a seccomp filter), say why and skip.
need_driver_ns

root=$MT_TMP/fx
mkdir -p "$root"
"$MKFIXTURE" compat "$root" >"$MT_TMP/mkfixture.log" 2>&1 ||
        { cat "$MT_TMP/mkfixture.log"; die "mkfixture compat failed"; }
printf 'defaults: { cuda: latest }\ncuda_compat: auto\n' >"$MT_TMP/site.yaml"
out=$MT_TMP/out
run_cudamod --config "$MT_TMP/site.yaml" generate -o "$out" --format "$(tool_format "$tool")" \
        --layout flat "$root/usr/local" >"$MT_TMP/generate.log" 2>&1 ||
        { cat "$MT_TMP/generate.log"; die "generate failed"; }
compat=$root/usr/local/cuda-12.9/compat
lib=$root/usr/local/cuda-12.9/targets/x86_64-linux/lib
lib124=$root/usr/local/cuda-12.4/targets/x86_64-linux/lib

# ns_session NAME PROC SYS LMOD_INIT: session (lib.sh) in a mount namespace
# whose /proc/driver/nvidia/version holds PROC and /sys/module/nvidia/version
# SYS (empty: no such file).
ns_session() {
        local name=$1 proc=$2 sys=$3 init=$4 dir=$MT_TMP/s-$1
        mkdir -p "$dir"
        cat >"$dir/script.sh" <<'EOF'
snap base
step load load cuda/12.9
step unload unload cuda/12.9
step load124 load cuda/12.4
EOF
        with_driver "$proc" "$sys" \
                env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$out" \
                MT_TOOL="$tool" MT_OUT="$dir" MT_LMOD_INIT="$init" \
                MT_EM_CMD="$(em_modulecmd || true)" MT_TCLSH="$(tclsh_path || true)" \
                bash --noprofile --norc -c 'source "$1"; source "$2"' session \
                "$MT_LIB_DIR/session.sh" "$dir/script.sh" >"$dir/session.log" 2>&1 ||
                { cat "$dir/session.log"; die "session $name failed to run"; }
}

# check NAME WHAT WANT_COMPAT [WANT_SAID]: the states the session of NAME
# recorded; the load prints nothing, or WANT_SAID (the driver check's line).
check() {
        local name=$1 what=$2 want=$3 said=${4:-} dir=$MT_TMP/s-$1 ld v
        local want_ld=$lib:$root/usr/local/cuda-12.9/nvvm/lib64
        [ "$want" = yes ] && want_ld=$compat:$want_ld
        rc_is "$dir/load" 0 || fail "$what: load cuda/12.9 exited $(rc_of "$dir/load"): $(cat "$dir/load.out")"
        if [ -z "$said" ]; then
                [ -s "$dir/load.out" ] && fail "$what: load cuda/12.9 printed: $(cat "$dir/load.out")"
        else
                [[ $(tr -s '\n ' '  ' <"$dir/load.out") == *"$said"* ]] ||
                        fail "$what: load cuda/12.9 did not say '$said': $(cat "$dir/load.out")"
        fi
        env_value "$dir/load.env" LD_LIBRARY_PATH || true
        ld=$VAL
        [ "$ld" = "$want_ld" ] || fail "$what: LD_LIBRARY_PATH is '$ld', expected '$want_ld'"
        for v in LIBRARY_PATH CPATH PATH CMAKE_PREFIX_PATH; do
                env_value "$dir/load.env" "$v" || true
                [[ $VAL == *compat* ]] && fail "$what: $v names compat/: '$VAL'"
        done
        env_value "$dir/load124.env" LD_LIBRARY_PATH || true
        [ "$VAL" = "$lib124:$root/usr/local/cuda-12.4/nvvm/lib64" ] ||
                fail "$what: cuda/12.4 (no compat/): LD_LIBRARY_PATH is '$VAL'"
        env_delta "$dir/base.env" "$dir/unload.env"
        [ ${#DELTA[@]} -eq 0 ] ||
                fail "$what: unload cuda/12.9 left: $(for n in "${!DELTA[@]}"; do printf '%s=%s ' "$n" "${DELTA[$n]}"; done)"
}

run_all() {
        local init=$1 tag=$2
        ns_session "old$tag" "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023" "" "$init"
        check "old$tag" "$tag driver 535.104.05 (/proc)" yes
        ns_session "sys$tag" "" "550.54.15" "$init"
        check "sys$tag" "$tag driver 550.54.15 (/sys/module only)" yes
        ns_session "new$tag" "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jul 22 20:01:00 UTC 2025" "580.65.06" "$init"
        check "new$tag" "$tag driver 580.65.06" no
        ns_session "same$tag" "NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.51.03  Wed Apr 30 2025" "" "$init"
        check "same$tag" "$tag driver 575.51.03 (the compat driver)" no
        ns_session "branch$tag" "NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.40.01  Mon Mar 10 2025" "" "$init"
        # Not for the compat package, and older than 12.9's driver: the
        # driver check (default warn) says so. Where compat/ is put first
        # (535, 550) programs run with its 575.51.03, and the check is silent.
        check "branch$tag" "$tag driver 575.40.01 (the compat driver's branch)" no \
                "(575.40.01) is older than CUDA 12.9 shipped with (575.51.03)"
        ns_session "none$tag" "" "" "$init"
        check "none$tag" "$tag no driver" no
}

if [ "$tool" = lmod ]; then
        # Lmod reading the Tcl tree too (tcl2lua runs the Tcl block).
        run_cudamod --config "$MT_TMP/site.yaml" generate -o "$MT_TMP/out-tcl" --format tcl \
                --layout flat "$root/usr/local" >"$MT_TMP/generate-tcl.log" 2>&1 ||
                { cat "$MT_TMP/generate-tcl.log"; die "generate --format tcl failed"; }
        lua_out=$out
        while IFS=$'\t' read -r v init; do
                say "Lmod $v"
                out=$lua_out
                run_all "$init" "lmod$v"
                out=$MT_TMP/out-tcl
                run_all "$init" "lmod$v-tcl"
        done < <(lmod_inits)
else
        run_all "" em
fi
mt_finish
