# tests/modules/lib.sh: shared helpers of the integration tests that load
# cudamod's modulefiles with the real tools: Lmod (Lua trees) and
# Environment Modules 5 (Tcl trees). Sourced by the scripts next to it.
#
# Environment (set by tests/meson.build):
#   CUDAMOD_BIN, MKFIXTURE          the binaries under test
#   CUDAMOD_EM_DEFAULT_PREFIX       where bootstrap.sh unpacks environment-modules
# Optional:
#   CUDAMOD_EM_PREFIX               another unpacked environment-modules (wins)
#   CUDAMOD_LMOD_INIT               Lmod's init/bash (default: Debian's)
#   CUDAMOD_LMOD9=1                 Lmod 9.2's instead (.cache/lmod-9.2, or
#                                   CUDAMOD_LMOD9_PREFIX): the lmod9 tests
#   CUDAMOD_REQUIRE_MODULE_TOOLS=1  a missing tool fails the test (CI) instead
#                                   of skipping it (exit 77)
#   CUDAMOD_KEEP_TMP=1              keep the scratch directory for inspection
#
# How a tool is driven (LMOD.md §5): every `module` command runs in a clean
# `env -i` bash with only HOME, PATH=/usr/bin:/bin, TERM and MODULEPATH;
# `snap NAME` records `env -0` there, and the test compares environments
# outside, after dropping the tools' bookkeeping variables (§5.3).
set -euo pipefail
export LC_ALL=C

# Under `meson test --setup=valgrind`: natively, with every cudamod run
# under valgrind (tests/valgrind.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../valgrind.sh"

# MT_TRACE=1: trace with timestamps (bash ignores PS4 from the environment
# when run as root).
if [ "${MT_TRACE:-}" = 1 ]; then
        PS4='+ $EPOCHREALTIME '
        set -x
fi

MT_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MT_START_DIR=$(pwd)
MT_SELF=$(basename "$0" .sh)
MT_FAILS=0
MT_BOOKKEEPING='^(_ModuleTable[0-9]*_|_ModuleTable_Sz_|__LMOD_.*|LMOD_.*|_LMFILES_|LOADEDMODULES|__MODULES_.*|MODULES_.*|MODULEPATH|BASH_FUNC_.*|_|SHLVL|PWD|OLDPWD)$'

: "${CUDAMOD_BIN:?CUDAMOD_BIN is not set (run through meson test)}"
: "${MKFIXTURE:?MKFIXTURE is not set (run through meson test)}"

say() { printf '%s: %s\n' "$MT_SELF" "$*"; }
# A failed assertion: reported, counted, and the test goes on (so that one
# run shows every difference); mt_finish turns the count into the status.
MT_FAILED=()
fail() {
        printf '%s: FAIL: %s\n' "$MT_SELF" "$*"
        MT_FAILS=$((MT_FAILS + 1))
        local m="$*"
        MT_FAILED+=("${m:0:200}")
}
die() { printf '%s: ERROR: %s\n' "$MT_SELF" "$*"; exit 1; }
mt_finish() {
        if [ "$MT_FAILS" -ne 0 ]; then
                # Again in short at the end: meson shows only the tail of a log.
                say "$MT_FAILS assertion(s) failed (details above; scratch: $MT_TMP${CUDAMOD_KEEP_TMP:+, kept}):"
                printf '  - %s\n' "${MT_FAILED[@]%%$'\n'*}"
                exit 1
        fi
        say "all assertions passed"
        exit 0
}

# --- tools ------------------------------------------------------------------

lmod_init() { printf '%s' "${CUDAMOD_LMOD_INIT:-/usr/share/lmod/lmod/init/bash}"; }

# Every Lmod the suite tests: Debian's (8.6 on bookworm, 8.7 on trixie) and
# the Lmod 9.2 that bootstrap.sh builds from ../shared/vendor into
# .cache/lmod-9.2 (CUDAMOD_LMOD9_PREFIX overrides).
MT_LMOD_DEBIAN_INIT=/usr/share/lmod/lmod/init/bash
lmod9_init() {
        printf '%s/lmod/lmod/init/bash' "${CUDAMOD_LMOD9_PREFIX:-${CUDAMOD_SOURCE_ROOT:-$MT_LIB_DIR/../..}/.cache/lmod-9.2}"
}
lmod_hint() {
        if [ "$1" = "$(lmod9_init)" ]; then
                echo "./bootstrap.sh --deps-only builds it from ../shared/vendor into .cache/lmod-9.2"
        else
                echo "Debian package lmod"
        fi
}
# The lmod9 tests (tests/meson.build: CUDAMOD_LMOD9=1) run under Lmod 9.2.
if [ "${CUDAMOD_LMOD9:-}" = 1 ]; then
        CUDAMOD_LMOD_INIT=$(lmod9_init)
fi
# lmod_version INIT: the release of the Lmod of that init/bash (8.6.19,
# 9.2.9), read from its libexec/Version.lua (no Lmod run); status 1 when
# there is none.
lmod_version() {
        local f line
        f=$(dirname "$1")/../libexec/Version.lua
        [ -r "$f" ] || return 1
        while IFS= read -r line; do
                if [[ $line =~ M\.tag\(\)[[:space:]]+return[[:space:]]+\"([0-9][0-9.]*)\" ]]; then
                        printf '%s' "${BASH_REMATCH[1]}"
                        return 0
                fi
        done <"$f"
        return 1
}
# lmod_inits: one line per Lmod present, "VERSION<TAB>INIT" (INIT its
# init/bash): CUDAMOD_LMOD_INIT when set, Debian's, and .cache/lmod-9.2's,
# each once. For a test that runs the same thing under every Lmod:
#   need lmods     # all of them (CI: a missing one fails)
#   while IFS=$'\t' read -r v init; do CUDAMOD_LMOD_INIT=$init ...; done < <(lmod_inits)
# (lmod_init, session and need lmod follow CUDAMOD_LMOD_INIT.)
lmod_inits() {
        local i r v seen=
        for i in "${CUDAMOD_LMOD_INIT:-}" "$MT_LMOD_DEBIAN_INIT" "$(lmod9_init)"; do
                [ -n "$i" ] && [ -r "$i" ] || continue
                r=$(cd -P "$(dirname "$i")" && pwd)/$(basename "$i")
                [[ $seen == *$'\n'"$r"$'\n'* ]] && continue
                seen+=$'\n'"$r"$'\n'
                v=$(lmod_version "$i") || v=unknown
                printf '%s\t%s\n' "$v" "$i"
        done
}

# modulecmd.tcl of Environment Modules: an unpacked package (bootstrap.sh
# puts one under .cache/environment-modules; the multiarch directory in it is
# not known in advance), else an installed one.
em_modulecmd() {
        local p f
        for p in "${CUDAMOD_EM_PREFIX:-}" "${CUDAMOD_EM_DEFAULT_PREFIX:-}"; do
                [ -n "$p" ] && [ -d "$p" ] || continue
                f=$(find "$p" -name modulecmd.tcl -type f -print 2>/dev/null | sort | head -n 1)
                [ -n "$f" ] && { printf '%s' "$f"; return 0; }
        done
        for f in /usr/share/modules/libexec/modulecmd.tcl /usr/lib/*/modulecmd.tcl /usr/lib/modulecmd.tcl; do
                [ -f "$f" ] && { printf '%s' "$f"; return 0; }
        done
        return 1
}

tclsh_path() { command -v tclsh8.6 || command -v tclsh; }

# em_version: the release of that Environment Modules (5.2.0, 5.5.0), from
# `modulecmd.tcl bash --version` ("Modules Release 5.5.0 (2024-11-11)").
em_version() {
        local out
        out=$("$(tclsh_path)" "$(em_modulecmd)" bash --version 2>&1) || true
        [[ $out =~ Modules\ Release\ ([0-9]+\.[0-9]+(\.[0-9]+)?) ]] || return 1
        printf '%s' "${BASH_REMATCH[1]}"
}
# version_lt A B: whether version A is older than B (dotted numbers).
version_lt() {
        [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]
}

# need TOOL...: lmod (the one of CUDAMOD_LMOD_INIT, else Debian's), lmods
# (Debian's and Lmod 9.2, for a test that runs under each: lmod_inits), em,
# luac. Skip (77) when one is missing, or fail when
# CUDAMOD_REQUIRE_MODULE_TOOLS=1.
need() {
        local t missing=()
        for t in "$@"; do
                case $t in
                lmod) [ -r "$(lmod_init)" ] || missing+=("Lmod ($(lmod_init); $(lmod_hint "$(lmod_init)"))") ;;
                lmods)
                        [ -r "$MT_LMOD_DEBIAN_INIT" ] || missing+=("Lmod ($MT_LMOD_DEBIAN_INIT; Debian package lmod)")
                        [ -r "$(lmod9_init)" ] || missing+=("Lmod 9.2 ($(lmod9_init); $(lmod_hint "$(lmod9_init)"))")
                        ;;
                em)
                        em_modulecmd >/dev/null || missing+=("Environment Modules (modulecmd.tcl; ./bootstrap.sh --deps-only unpacks it into .cache/environment-modules)")
                        tclsh_path >/dev/null || missing+=("tclsh (Debian package tcl)")
                        ;;
                luac) command -v luac5.1 >/dev/null || missing+=("luac5.1 (Debian package lua5.1)") ;;
                *) die "need: unknown tool $t" ;;
                esac
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        for t in "${missing[@]}"; do say "missing: $t"; done
        if [ "${CUDAMOD_REQUIRE_MODULE_TOOLS:-}" = 1 ]; then
                die "CUDAMOD_REQUIRE_MODULE_TOOLS=1 and a module tool is missing"
        fi
        say "SKIP: module tool missing"
        exit 77
}

# The tool for a format and back.
tool_format() { case $1 in lmod) echo lua ;; em) echo tcl ;; *) die "unknown tool $1" ;; esac; }
# The file name of a module (name/version) in a tree of that tool.
mod_file() { if [ "$1" = lmod ]; then printf '%s.lua' "$2"; else printf '%s' "$2"; fi; }
modulerc_name() { if [ "$1" = lmod ]; then echo .modulerc.lua; else echo .modulerc; fi; }

# --- scratch ------------------------------------------------------------------

# A scratch directory (canonical path, so that what cudamod records equals
# what the expectations name), a private HOME, and a working directory for
# every command (the hostile-path test looks for files created there).
MT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cudamod-modtest-XXXXXX")
MT_TMP=$(cd -P "$MT_TMP" && pwd)
mt_cleanup() {
        if [ "${CUDAMOD_KEEP_TMP:-}" = 1 ]; then
                say "scratch kept: $MT_TMP"
        else
                chmod -R u+rwX "$MT_TMP" 2>/dev/null || true
                rm -rf "$MT_TMP"
        fi
}
trap mt_cleanup EXIT
mkdir -p "$MT_TMP/home" "$MT_TMP/cwd"
cd "$MT_TMP/cwd"

# cudamod (under valgrind in the valgrind setup, see tests/valgrind.sh).
run_cudamod() {
        "$CUDAMOD_BIN" "$@"
}

# generate TOOL LAYOUT OUT ROOT...: write the tree with the built-in
# defaults but every default marked "latest", so that which module is the
# default does not depend on the built-in `defaults.cuda`.
generate() {
        local tool=$1 layout=$2 out=$3 log
        shift 3
        log="$out.generate.log"
        if ! run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$out" \
                --format "$(tool_format "$tool")" --layout "$layout" "$@" >"$log" 2>&1; then
                cat "$log"
                die "cudamod generate --format $(tool_format "$tool") --layout $layout $* failed"
        fi
}

# --- sessions -----------------------------------------------------------------

# session TOOL DIR MODULEPATH: run the bash script on stdin in a clean
# environment with TOOL's `module` command. The script may use
#   step NAME ARGS...   run `module ARGS`, keep its output (DIR/NAME.out),
#                       status (DIR/NAME.rc) and the environment (DIR/NAME.env)
#   snap NAME           only keep the environment
# The script runs in $MT_TMP/cwd.
session() {
        local tool=$1 dir=$2 mp=$3
        mkdir -p "$dir"
        cat >"$dir/script.sh"
        env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$mp" \
                MT_TOOL="$tool" MT_OUT="$dir" MT_LMOD_INIT="$(lmod_init)" \
                MT_EM_CMD="$(em_modulecmd || true)" MT_TCLSH="$(tclsh_path || true)" \
                bash --noprofile --norc -c 'source "$1"; source "$2"' session \
                "$MT_LIB_DIR/session.sh" "$dir/script.sh" >"$dir/session.log" 2>&1 ||
                { cat "$dir/session.log"; die "session in $dir failed to run"; }
}

# with_driver PROC SYS CMD...: CMD in a private mount namespace where the
# node's NVIDIA driver version files hold PROC (/proc/driver/nvidia/version)
# and SYS (/sys/module/nvidia/version), "" for no such file: a tmpfs over
# /proc/driver and /sys/module, never an edited module. As root a mount
# namespace alone (a chroot, such as CI's trixie pass, refuses user
# namespaces); otherwise unshare -rm, which needs no privilege where user
# namespaces are allowed. Exit 99: the files could not be put in place.
# In a chroot the root cannot be made private (unshare: "cannot change root
# filesystem propagation"): as root, /proc and /sys are made private in the
# namespace before anything is mounted on them, so nothing reaches the host.
driver_ns() {
        if [ "$(id -u)" = 0 ]; then
                unshare -m --propagation unchanged sh -c 'mount --make-rprivate /proc && mount --make-rprivate /sys && exec "$@"' driver_ns "$@"
        else
                unshare -rm "$@"
        fi
}
with_driver() {
        # shellcheck disable=SC2016
        driver_ns bash -c '
                mount -t tmpfs cudamod-test /proc/driver && mount -t tmpfs cudamod-test /sys/module || exit 99
                if [ -n "$1" ]; then mkdir /proc/driver/nvidia && printf "%s\n" "$1" >/proc/driver/nvidia/version || exit 99; fi
                if [ -n "$2" ]; then mkdir /sys/module/nvidia && printf "%s\n" "$2" >/sys/module/nvidia/version || exit 99; fi
                shift 2
                exec "$@"' with_driver "$@"
}

# need_driver_ns: skip (77) where with_driver cannot work, saying why.
need_driver_ns() {
        local why
        why=$(driver_ns sh -c 'mount -t tmpfs cudamod-test /proc/driver && mount -t tmpfs cudamod-test /sys/module' 2>&1) && return 0
        say "SKIP: cannot mount over /proc/driver and /sys/module in a private mount namespace: $why"
        exit 77
}

# Forks are slow on a loaded machine (tens of ms each): what runs per
# variable or per step below stays inside bash.

# rc_of STEP: the exit status a session step recorded.
rc_of() { local rc; read -r rc <"$1.rc"; printf '%s' "$rc"; }
# rc_is STEP N: whether it was N (no fork).
rc_is() { local rc; read -r rc <"$1.rc"; [ "$rc" = "$2" ]; }

# env_value FILE NAME: VAL = the value of NAME in an `env -0` snapshot;
# status 1 (and VAL empty) when unset.
env_value() {
        local r
        VAL=
        while IFS= read -r -d '' r; do
                if [[ $r == "$2="* ]]; then
                        VAL=${r#*=}
                        return 0
                fi
        done <"$1"
        return 1
}

MT_UNSET=$'\x01(unset)\x01'
# env_delta BEFORE AFTER: DELTA (assoc) = what changed outside the tools'
# bookkeeping: NAME -> new value, or MT_UNSET for a variable removed.
declare -A DELTA=() EXPECT=()
env_delta() {
        local -A b=() seen=()
        local r n
        DELTA=()
        while IFS= read -r -d '' r; do b[${r%%=*}]=${r#*=}; done <"$1"
        while IFS= read -r -d '' r; do
                n=${r%%=*}
                seen[$n]=1
                [[ $n =~ $MT_BOOKKEEPING ]] && continue
                if [[ ! -v b[$n] ]] || [ "${b[$n]}" != "${r#*=}" ]; then
                        DELTA[$n]=${r#*=}
                fi
        done <"$2"
        for n in "${!b[@]}"; do
                [[ -v seen[$n] ]] || [[ $n =~ $MT_BOOKKEEPING ]] || DELTA[$n]=$MT_UNSET
        done
}

# pretty ASSOC-NAME: lines a person can compare, sorted by name: every value
# through printf %q (so any byte shows), path lists one entry per line.
pretty() {
        local -n a=$1
        local n v e
        while IFS= read -r -d '' n; do
                v=${a[$n]}
                # Shorter lines: the scratch directory as a placeholder.
                [ -z "${X_ROOT:-}" ] || v=${v//"$X_ROOT"/@ROOT@}
                [ -z "${X_OUT:-}" ] || v=${v//"$X_OUT"/@OUT@}
                if [ "$v" = "$MT_UNSET" ]; then
                        printf -- '-%s (unset)\n' "$n"
                elif [[ $v == *:* ]]; then
                        printf '%s=\n' "$n"
                        while [[ $v == *:* ]]; do
                                e=${v%%:*} v=${v#*:}
                                printf '    %q :\n' "$e"
                        done
                        printf '    %q\n' "$v"
                else
                        printf '%s=%q\n' "$n" "$v"
                fi
        done < <(for n in "${!a[@]}"; do printf '%s\0' "$n"; done | sort -z)
}

# check_delta WHAT: DELTA must equal EXPECT exactly; otherwise a failure
# with a unified diff.
check_delta() {
        local n same=1
        [ ${#DELTA[@]} -eq ${#EXPECT[@]} ] || same=0
        if [ $same = 1 ]; then
                for n in "${!EXPECT[@]}"; do
                        if [[ ! -v DELTA[$n] ]] || [ "${DELTA[$n]}" != "${EXPECT[$n]}" ]; then
                                same=0
                                break
                        fi
                done
        fi
        [ $same = 1 ] && return 0
        fail "$1: environment differs (- expected, + actual):"
        diff -u --label expected --label actual <(pretty EXPECT) <(pretty DELTA) | sed 's/^/    /' || true
        return 1
}
# check_unchanged WHAT: DELTA must be empty.
check_unchanged() {
        EXPECT=()
        check_delta "$1"
}

# no_pwned: the hostile-path test's canary: a `touch PWNED` run by any
# tool lands in its working directory (the scratch cwd), or in the test's
# own, or at /.
no_pwned() {
        local found
        found=$(find "$MT_TMP" -name PWNED 2>/dev/null; for f in "$MT_START_DIR/PWNED" /PWNED; do [ -e "$f" ] && echo "$f"; done; true)
        if [ -n "$found" ]; then
                fail "a path in a modulefile was executed: PWNED created at: $(echo $found)"
                # Removed, so that the next check tells about the next case.
                while IFS= read -r f; do rm -f "$f"; done <<<"$found"
                return 1
        fi
}

# tree_files OUT: the files of a generated tree, relative, sorted, without
# cudamod's own bookkeeping (.cudamod-*).
tree_files() {
        (cd "$1" && find . \( -type f -o -type l \) ! -name '.cudamod*' -printf '%P\n' | sort)
}

# --- expectation files (tests/modules/expect/*.txt, see expect/README) ---------

# load_expect FILE: fills
#   X_ROOTS                      scan roots (relative to the fixture)
#   X_FILES_hier, X_FILES_flat   module files, without the .lua suffix
#   X_DEFAULTS                   "LAYOUT DIR MODULE" each
#   X_HIDDEN                     "LAYOUT DIR MODULE" each: DIR's modulerc
#                                hides MODULE (a build for another arch)
#   X_SC_OPTS[i], X_SC_MODS[i], X_SC_EXP[i]   scenario i: options
#                                ("only=… use=… fail"), modules, expected lines
X_ROOT= X_OUT= X_STUB= X_MP=
X_ROOTS=() X_FILES_hier=() X_FILES_flat=() X_DEFAULTS=() X_HIDDEN=() X_SC_OPTS=() X_SC_MODS=() X_SC_EXP=()
load_expect() {
        local file=$1 line n=$((${#X_SC_MODS[@]} - 1)) lineno=0 k v
        local -A defs=()
        [ -r "$file" ] || die "no expectation file $file"
        while IFS= read -r line || [ -n "$line" ]; do
                lineno=$((lineno + 1))
                [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
                # {NAME} shorthands, longest first is not needed: names are
                # whole words between braces.
                while [[ $line =~ \{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
                        k=${BASH_REMATCH[1]}
                        [[ -v defs[$k] ]] || die "$file:$lineno: {$k} is not defined"
                        line=${line//"{$k}"/${defs[$k]}}
                done
                case $line in
                "def "*)
                        k=${line#def }
                        v=${k#*=} k=${k%%=*}
                        defs[$k]=$v
                        ;;
                "roots "*) read -r -a X_ROOTS <<<"${line#roots }" ;;
                "files hier "*) read -r -a v <<<"${line#files hier }"; X_FILES_hier+=("${v[@]}") ;;
                "files flat "*) read -r -a v <<<"${line#files flat }"; X_FILES_flat+=("${v[@]}") ;;
                "default hier "* | "default flat "*) X_DEFAULTS+=("${line#default }") ;;
                "hidden hier "* | "hidden flat "*) X_HIDDEN+=("${line#hidden }") ;;
                "load "*)
                        n=$((n + 1))
                        X_SC_OPTS[n]="" X_SC_MODS[n]="" X_SC_EXP[n]=""
                        for k in ${line#load }; do
                                case $k in
                                only=hier | only=flat | use=* | fail) X_SC_OPTS[n]+="$k " ;;
                                *=*) die "$file:$lineno: unknown option $k" ;;
                                *) X_SC_MODS[n]+="$k " ;;
                                esac
                        done
                        ;;
                *=*)
                        [ "$n" -ge 0 ] || die "$file:$lineno: a variable before the first 'load'"
                        X_SC_EXP[n]+="$line"$'\n'
                        ;;
                *) die "$file:$lineno: cannot parse: $line" ;;
                esac
        done <"$file"
}

# sc_opt I NAME: whether scenario I has option NAME; OPT = its value ("1"
# for a flag).
sc_opt() {
        local o
        OPT=
        for o in ${X_SC_OPTS[$1]}; do
                case $o in
                "$2") OPT=1; return 0 ;;
                "$2"=*) OPT=${o#*=}; return 0 ;;
                esac
        done
        return 1
}
sc_applies() { sc_opt "$1" only || return 0; [ "$OPT" = "$2" ]; }
# short_name PATH: "Core/cuda/12.9" -> SHORT="cuda/12.9"
short_name() { local d=${1%/*}; SHORT=${d##*/}/${1##*/}; }

# subst TEXT: SUBST = TEXT with the placeholders @ROOT@ @OUT@ @MP@ @STUB@.
subst() {
        SUBST=$1
        SUBST=${SUBST//@ROOT@/$X_ROOT}
        SUBST=${SUBST//@OUT@/$X_OUT}
        SUBST=${SUBST//@STUB@/$X_STUB}
        SUBST=${SUBST//@MP@/$X_MP}
}

# sc_expected I LAYOUT: EXPECT = scenario I's expected variables (without
# MODULEPATH), EXPECT_MP = the expected MODULEPATH (the start, X_MP, unless
# the scenario says otherwise).
sc_expected() {
        local i=$1 layout=$2 line
        EXPECT=()
        EXPECT_MP=$X_MP
        while IFS= read -r line; do
                [ -n "$line" ] || continue
                if [[ $line =~ ^(hier|flat):(.*)$ ]]; then
                        [ "${BASH_REMATCH[1]}" = "$layout" ] || continue
                        line=${BASH_REMATCH[2]}
                fi
                subst "$line"
                if [[ $SUBST == MODULEPATH=* ]]; then
                        EXPECT_MP=${SUBST#MODULEPATH=}
                else
                        EXPECT[${SUBST%%=*}]=${SUBST#*=}
                fi
        done <<<"${X_SC_EXP[$i]}"
}

# make_stub_cuda TOOL DIR: empty cuda modules cuda/11.99, 12.99, 13.99 (in
# family cuda) for loading flat cuDNN/NCCL modules of a fixture that has no
# CUDA of its own.
make_stub_cuda() {
        local tool=$1 dir=$2 v
        mkdir -p "$dir/cuda"
        for v in 11.99 12.99 13.99; do
                if [ "$tool" = lmod ]; then
                        printf 'family("cuda")\n' >"$dir/cuda/$v.lua"
                else
                        printf '#%%Module\nfamily cuda\n' >"$dir/cuda/$v"
                fi
        done
}

# The modulepath roots of a generated tree: hier OUT/Core and OUT/CUDA/*,
# flat OUT.
tree_roots() {
        local out=$1 layout=$2 d
        if [ "$layout" = flat ]; then
                echo "$out"
                return
        fi
        [ -d "$out/Core" ] && echo "$out/Core"
        for d in "$out"/CUDA/*; do
                [ -d "$d" ] && echo "$d"
        done
        return 0
}

# avail_names FILE: module names out of `module -t avail` output of either
# tool: no headers ("DIR:"), no bare names ("cuda/"), no "(default)" tags.
avail_names() {
        { grep -v -e ':$' -e '/$' -e '^[[:space:]]*$' "$1" || true; } | sed -e 's/([^()]*)$//' | sort
}

# expect_state LAYOUT MODULE...: EXPECT/EXPECT_MP = the expectation of the
# scenario that loads exactly MODULE... (in that order).
expect_state() {
        local layout=$1 j
        shift
        for j in "${!X_SC_MODS[@]}"; do
                if [ "${X_SC_MODS[$j]}" = "$(printf '%s ' "$@")" ]; then
                        sc_expected "$j" "$layout"
                        return 0
                fi
        done
        die "no scenario loads '$*' in the expectation files"
}

# check_state WHAT STEPDIR STEP LAYOUT MODULE...: the step succeeded, and
# left exactly MODULE... loaded with their expected environment. With
# CHECK_ANY_RC set, the step's exit status is not checked (the caller did).
check_state() {
        local what=$1 sdir=$2 step=$3 layout=$4 want
        shift 4
        if [ -z "${CHECK_ANY_RC:-}" ] && ! rc_is "$sdir/$step" 0; then
                fail "$what: failed (rc $(rc_of "$sdir/$step")):"
                sed 's/^/    | /' "$sdir/$step.out"
                return 1
        fi
        env_value "$sdir/$step.env" LOADEDMODULES || true
        want=$(IFS=:; echo "$*")
        [ "$VAL" = "$want" ] || fail "$what: LOADEDMODULES is '$VAL', expected '$want'"
        if [ $# -eq 0 ]; then
                EXPECT=() EXPECT_MP=$X_MP
        else
                expect_state "$layout" "$@"
        fi
        env_delta "$sdir/base.env" "$sdir/$step.env"
        check_delta "$what" || true
        env_value "$sdir/$step.env" MODULEPATH || true
        [ "$VAL" = "$EXPECT_MP" ] || fail "$what: MODULEPATH is '$VAL', expected '$EXPECT_MP'"
}

# demo_tree TOOL LAYOUT: build the demo fixture and generate it (X_ROOT,
# X_OUT set; the expectations of expect/demo.txt loaded).
demo_tree() {
        X_ROOT=$MT_TMP/fx
        mkdir -p "$X_ROOT"
        "$MKFIXTURE" demo "$X_ROOT" >"$MT_TMP/mkfixture.log" 2>&1 ||
                { cat "$MT_TMP/mkfixture.log"; die "mkfixture demo failed"; }
        X_OUT=$MT_TMP/out-$2
        generate "$1" "$([ "$2" = hier ] && echo hierarchical || echo flat)" "$X_OUT" "$X_ROOT/sw"
        load_expect "$MT_LIB_DIR/expect/demo.txt"
}
