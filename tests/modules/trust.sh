#!/usr/bin/env bash
# tests/modules/trust.sh: the trust model (doc/HACKING.md "Trust model").
#   show and doctor evaluate Tcl modulefiles in a Tcl safe interpreter: a
#   modulefile that would exec, open, delete or source something is refused
#   with a message, and nothing happens; --trust-modulefiles has
#   Environment Modules run it, as before.
#   validate refuses a load that sets LD_PRELOAD (before anything starts
#   with it), takes its compiler from its own PATH, not the module's; its
#   nvcc and cmake checks start no c++, make or launcher the module names
#   (PATH, CXX, CMAKE_CXX_COMPILER_LAUNCHER; Lua and Tcl) unless
#   --trust-modulefiles; and as root it refuses a group-writable modulefile
#   unless --no-strict-modes.
source "$(dirname "$0")/lib.sh"

MT_SELF=trust
need em
command -v cc >/dev/null || { say "SKIP: no C compiler"; exit 77; }
MODULES_CMD=$(em_modulecmd)
export MODULES_CMD
T=$MT_TMP

# --- Tcl modulefiles that would run something --------------------------------
mkdir -p "$T/tcl/evil"
cases=(exec open delete source)
printf '#%%Module\nsetenv A [exec /bin/sh -c {touch %s/PWNED-exec}]\n' "$T" >"$T/tcl/evil/exec"
printf '#%%Module\nclose [open %s/PWNED-open w]\n' "$T" >"$T/tcl/evil/open"
touch "$T/KEEP-delete"
printf '#%%Module\nfile delete %s/KEEP-delete\n' "$T" >"$T/tcl/evil/delete"
printf 'exec /bin/sh -c {touch %s/PWNED-source}\n' "$T" >"$T/sourced.tcl"
printf '#%%Module\nsource %s/sourced.tcl\n' "$T" >"$T/tcl/evil/source"
happened() {
        case $1 in
        delete) [ ! -e "$T/KEEP-delete" ] ;;
        *) [ -e "$T/PWNED-$1" ] ;;
        esac
}
for c in "${cases[@]}"; do
        if run_cudamod show --modulepath "$T/tcl" "evil/$c" >"$T/show-$c.out" 2>&1; then
                fail "show evil/$c succeeded"
        fi
        grep -q "not available.*--trust-modulefiles" "$T/show-$c.out" ||
                fail "show evil/$c: no message naming --trust-modulefiles: $(cat "$T/show-$c.out")"
        happened "$c" && fail "show evil/$c ran what the modulefile says"
done
# doctor on a torch, with the evil modules on the modulepath: it evaluates
# every module there, and notes the ones it left out.
rm -f "$T"/PWNED-*
touch "$T/KEEP-delete"
"$MKFIXTURE" doctor "$T/dfx" >"$T/mkfixture.log" 2>&1 || { cat "$T/mkfixture.log"; die "mkfixture doctor failed"; }
run_cudamod doctor --json --modulepath "$T/tcl" "$T/dfx/site-packages/torch" >"$T/doctor.out" 2>&1 || true
for c in "${cases[@]}"; do
        happened "$c" && fail "doctor --modulepath ran what evil/$c says"
        grep -q "module evil/$c left out: [^\"]*not available" "$T/doctor.out" ||
                fail "doctor does not say evil/$c was left out: $(cat "$T/doctor.out")"
done
# Opting in: the real tool runs it.
rm -f "$T"/PWNED-*
run_cudamod show --trust-modulefiles --modulepath "$T/tcl" evil/exec >"$T/trusted.out" 2>&1 || true
happened exec || fail "show --trust-modulefiles did not have the module tool evaluate evil/exec"

# --- validate and the module's environment ------------------------------------
X_ROOT=$T/fx
mkdir -p "$X_ROOT"
"$MKFIXTURE" demo "$X_ROOT" >"$T/mkfixture.log" 2>&1 || { cat "$T/mkfixture.log"; die "mkfixture demo failed"; }
generate lmod flat "$T/lua" "$X_ROOT/sw"
printf '#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void f(void) { close(open("%s/PRELOADED", O_CREAT | O_WRONLY, 0600)); }\n' \
        "$T" >"$T/x.c"
cc -shared -fPIC -o "$T/x.so" "$T/x.c" || die "cannot build x.so"
cp "$T/lua/cuda/12.9.lua" "$T/cuda-12.9.lua.orig"
printf 'setenv("LD_PRELOAD", "%s/x.so")\n' "$T" >>"$T/lua/cuda/12.9.lua"
run_cudamod validate --modulepath "$T/lua" cuda/12.9 >"$T/preload.out" 2>&1 && fail "validate passed a module setting LD_PRELOAD"
grep -q "refused: the load sets LD_PRELOAD" "$T/preload.out" || fail "validate: no LD_PRELOAD refusal: $(cat "$T/preload.out")"
[ -e "$T/PRELOADED" ] && fail "validate started something with the module's LD_PRELOAD"

# A module that puts a `cc` of its own in front of PATH.
cp "$T/cuda-12.9.lua.orig" "$T/lua/cuda/12.9.lua"
mkdir -p "$T/fakebin"
printf '#!/bin/sh\ntouch %s/FAKE-CC\nexit 1\n' "$T" >"$T/fakebin/cc"
chmod 755 "$T/fakebin/cc"
printf 'prepend_path("PATH", "%s/fakebin")\n' "$T" >>"$T/lua/cuda/12.9.lua"
run_cudamod validate --modulepath "$T/lua" cuda/12.9 >"$T/cc.out" 2>&1 || true
grep -q "build" "$T/cc.out" || fail "validate: no build check: $(cat "$T/cc.out")"
[ -e "$T/FAKE-CC" ] && fail "validate's build check ran the module's cc"

# --- validate's nvcc and cmake checks start only cudamod's programs ----------
# (issue 30, finding 5). A cuda module, Lua (cudamod's Lmod sandbox) and Tcl
# (the safe interpreter), whose PATH has an nvcc (the module's nvcc is what
# these checks are about: a stub here) and a c++, CC, g++, gcc, make and
# gmake that touch a marker, or that sets CXX or CMAKE_CXX_COMPILER_LAUNCHER
# to one: validate starts none of them, and says which variable it refused;
# --trust-modulefiles lets the module choose, as before.
if command -v cmake >/dev/null; then
        generate em flat "$T/tcl-fx" "$X_ROOT/sw"
        cp "$T/tcl-fx/cuda/12.9" "$T/cuda-12.9.tcl.orig"
        mkdir -p "$T/tc/nvccbin" "$T/tc/bin"
        printf '#!/bin/sh\nexit 1\n' >"$T/tc/nvccbin/nvcc"
        for p in c++ CC g++ gcc make gmake launcher; do
                printf '#!/bin/sh\ntouch %s/RAN-%s\nexit 1\n' "$T/tc" "$p" >"$T/tc/bin/$p"
        done
        chmod 755 "$T/tc/nvccbin/nvcc" "$T/tc/bin"/*
        # toolchain_module FORMAT SETTING: the cuda module with the stub
        # nvcc and SETTING ("path", "CXX" or "CMAKE_CXX_COMPILER_LAUNCHER").
        toolchain_module() {
                local fmt=$1 what=$2 file orig
                if [ "$fmt" = lua ]; then
                        file=$T/lua/cuda/12.9.lua orig=$T/cuda-12.9.lua.orig
                        cp "$orig" "$file"
                        printf 'prepend_path("PATH", "%s")\n' "$T/tc/nvccbin" >>"$file"
                        case $what in
                        path) printf 'prepend_path("PATH", "%s")\n' "$T/tc/bin" >>"$file" ;;
                        CXX) printf 'setenv("CXX", "%s")\n' "$T/tc/bin/c++" >>"$file" ;;
                        *) printf 'setenv("%s", "%s")\n' "$what" "$T/tc/bin/launcher" >>"$file" ;;
                        esac
                else
                        file=$T/tcl-fx/cuda/12.9 orig=$T/cuda-12.9.tcl.orig
                        cp "$orig" "$file"
                        printf 'prepend-path PATH %s\n' "$T/tc/nvccbin" >>"$file"
                        case $what in
                        path) printf 'prepend-path PATH %s\n' "$T/tc/bin" >>"$file" ;;
                        CXX) printf 'setenv CXX %s\n' "$T/tc/bin/c++" >>"$file" ;;
                        *) printf 'setenv %s %s\n' "$what" "$T/tc/bin/launcher" >>"$file" ;;
                        esac
                fi
        }
        # markers: the stubs that ran ("RAN-c++ RAN-make "), or nothing.
        markers() {
                local f
                for f in "$T/tc"/RAN-*; do
                        [ -e "$f" ] && printf '%s ' "${f##*/}"
                done
                return 0
        }
        for fmt in lua tcl; do
                mp=$T/lua
                [ "$fmt" = tcl ] && mp=$T/tcl-fx
                for what in path CXX CMAKE_CXX_COMPILER_LAUNCHER; do
                        toolchain_module "$fmt" "$what"
                        rm -f "$T/tc"/RAN-*
                        out=$T/tc/$fmt-$what.out
                        run_cudamod validate --modulepath "$mp" cuda/12.9 >"$out" 2>&1 || true
                        ran=$(markers)
                        [ -z "$ran" ] || fail "validate ($fmt, $what) started the module's ${ran}: $(cat "$out")"
                        grep -Eq "^ +cmake " "$out" || fail "validate ($fmt, $what): no cmake check: $(cat "$out")"
                        if [ "$what" = path ]; then
                                grep -q "refused" "$out" && fail "validate ($fmt, path) refused: $(cat "$out")"
                        else
                                grep -Eq "^ +cmake +fail +refused: the load sets $what='$T/tc/bin/" "$out" ||
                                        fail "validate ($fmt, $what): the cmake check does not say it refused $what: $(cat "$out")"
                        fi
                        rm -f "$T/tc"/RAN-*
                        run_cudamod validate --trust-modulefiles --modulepath "$mp" cuda/12.9 >"$out.trusted" 2>&1 || true
                        ran=$(markers)
                        [ -n "$ran" ] || fail "validate --trust-modulefiles ($fmt, $what) did not start what the module names: $(cat "$out.trusted")"
                        grep -q "refused" "$out.trusted" && fail "validate --trust-modulefiles ($fmt, $what) refused: $(cat "$out.trusted")"
                done
        done
        cp "$T/cuda-12.9.lua.orig" "$T/lua/cuda/12.9.lua"
else
        say "no cmake: validate's cmake check not tested"
fi

# As root: a modulefile others can change.
if [ "$(id -u)" = 0 ]; then
        cp "$T/cuda-12.9.lua.orig" "$T/lua/cuda/12.9.lua"
        chmod 664 "$T/lua/cuda/12.9.lua"
        run_cudamod validate --no-compile --modulepath "$T/lua" cuda/12.9 >"$T/strict.out" 2>&1 &&
                fail "validate as root accepted a group-writable modulefile"
        grep -q "refused: .* is writable by its group (mode 0664).*--no-strict-modes" "$T/strict.out" ||
                fail "validate: no strict-modes message: $(cat "$T/strict.out")"
        run_cudamod validate --no-strict-modes --no-compile --modulepath "$T/lua" cuda/12.9 >"$T/lax.out" 2>&1 || true
        # Loaded: the checks after syntax ran (text output lists those not passed).
        if grep -q "refused" "$T/lax.out" || ! grep -Eq "^ +run " "$T/lax.out"; then
                fail "validate --no-strict-modes did not load it: $(cat "$T/lax.out")"
        fi
        chmod 644 "$T/lua/cuda/12.9.lua"
        chmod 775 "$T/lua/cuda"
        run_cudamod validate --no-compile --modulepath "$T/lua" cuda/12.9 >"$T/strict-dir.out" 2>&1 &&
                fail "validate as root accepted a modulefile in a group-writable directory"
        grep -q "refused: '$T/lua/cuda' is writable by its group" "$T/strict-dir.out" ||
                fail "validate: no strict-modes message for the directory: $(cat "$T/strict-dir.out")"
        chmod 755 "$T/lua/cuda"
else
        say "not root: strict modes not tested"
fi
mt_finish
