#!/usr/bin/env bash
# tests/modules/lmod-api.sh: the Lmod functions real site modulefiles use
# beyond cudamod's own (ISSUE 18 item 8), evaluated by `cudamod show` and by
# the real Lmod, which must agree: the environment (show-parity.py), the
# aliases and shell functions a load defines (recorded by show, never run),
# whether the load succeeds, and the messages. extensions, set_alias,
# set_shell_function, LmodMessage, LmodWarning, myFileName, myModuleName,
# myModuleUsrName, isDir, isFile, userInGroup(s), hierarchyA, unload of a
# module that is not loaded, requireFullName, os.date, os.getenv (which
# reads the environment as the load made it so far).
source "$(dirname "$0")/lib.sh"

need lmod
command -v python3 >/dev/null || { say "SKIP: python3 missing"; exit 77; }

t=$MT_TMP/tree
mkdir -p "$t/Core/api" "$t/Core/setx" "$t/Core/req" "$t/Core/ext" "$t/Core/warn" \
        "$t/Compiler/gcc/4.8/boost" "$t/Core/unl" "$t/Core/dep" "$t/sw/dir"
: >"$t/sw/file"
ln -s dir "$t/sw/link"
mygroup=$(id -gn)

printf 'setenv("SETX_X", "from-setx")\n' >"$t/Core/setx/1.0.lua"
cat >"$t/Core/api/1.0.lua" <<EOF
extensions("numpy/1.12, scipy/1.1")
set_alias("ll", "ls -l 'a b' \"\$HOME\"")
set_shell_function("hi", "echo hi \"\$1\"; return 0", "echo hi")
LmodMessage("hello from ", myModuleName())
setenv("API_FILE", myFileName())
setenv("API_NAME", myModuleName())
setenv("API_USR", myModuleUsrName())
setenv("API_DIR", tostring(isDir("$t/sw/dir")) .. tostring(isDir("$t/sw/link")) .. tostring(isDir("$t/sw/file")) .. tostring(isDir("$t/nope")))
setenv("API_FILEP", tostring(not not isFile("$t/sw/file")) .. tostring(not not isFile("$t/sw/dir")) .. tostring(not not isFile("$t/nope")))
setenv("API_GRP", tostring(userInGroup("$mygroup")) .. tostring(userInGroups("no-such-group-cudamod", "$mygroup")))
setenv("API_NOGRP", tostring(userInGroup("no-such-group-cudamod")))
unload("not-loaded-anywhere")
setenv("API_YEAR", os.date("%Y"))
setenv("API_HOME", os.getenv("HOME") or "unset")
setenv("API_SEEN", os.getenv("SETX_X") or "unset")
setenv("API_NOPE", os.getenv("API_NO_SUCH_VAR") or "unset")
EOF
cat >"$t/Compiler/gcc/4.8/boost/1.55.lua" <<'EOF'
local h = hierarchyA(myModuleFullName(), 1)
setenv("BOOST_LEVEL", h[1])
local h2 = hierarchyA("boost/1.55", 2)
setenv("BOOST_LEVELS", table.concat(h2, ","))
setenv("BOOST_N", tostring(#h2))
EOF
printf 'requireFullName()\nsetenv("REQ", "yes")\n' >"$t/Core/req/1.0.lua"
printf 'extensions("a/1", "b/2")\nsetenv("EXT", "1")\n' >"$t/Core/ext/1.0.lua"
printf 'LmodWarning("be careful")\nsetenv("WARNED", "1")\n' >"$t/Core/warn/1.0.lua"
printf 'depends_on("setx")\nsetenv("DEP_SEEN", os.getenv("SETX_X") or "unset")\n' >"$t/Core/dep/1.0.lua"
printf 'unload("setx")\nsetenv("UNL", "1")\n' >"$t/Core/unl/1.0.lua"
mkdir -p "$t/Core/isl"
cat >"$t/Core/isl/1.0.lua" <<'EOF'
setenv("ISL_SETX", tostring(isloaded("setx")))
setenv("ISL_SETX_V", tostring(isloaded("setx/1.0")))
setenv("ISL_OTHER", tostring(isloaded("api")))
if not isloaded("setx") then load("setx") end
setenv("ISL_AFTER", tostring(isloaded("setx")))
EOF

mp=$t/Core:$t/Compiler/gcc/4.8
# isFile's value for what is not a file is false in Lmod 8.6 and nil in 8.7 and 9.2
# (and a link's is its real path): the modulefile above compares only
# whether it holds, which both agree on and what a modulefile's `if` sees.
lmod_version=$(bash -c 'source "$1" && module --version' _ "$(lmod_init)" 2>&1 | sed -n 's/.*Version \([0-9][0-9.]*\).*/\1/p' | head -1)
[ -n "$lmod_version" ] || fail "cannot tell Lmod's version"
cases=("setx api" "api/1.0" "boost" "boost/1.55" "req/1.0" "req" "ext" "warn" "dep" "unl" "setx isl" "isl")
sdir=$MT_TMP/s
{
        echo 'snap base'
        i=0
        for c in "${cases[@]}"; do
                printf 'step load%d load %s\n' "$i" "$c"
                printf 'alias -p >"%s/alias%d"; declare -f hi >"%s/func%d" 2>/dev/null || true\n' \
                        "$sdir" "$i" "$sdir" "$i"
                printf 'unalias -a; unset -f hi\n'
                printf 'step purge%d purge\n' "$i"
                i=$((i + 1))
        done
} | session lmod "$sdir" "$mp"

i=0
for c in "${cases[@]}"; do
        read -r -a mods <<<"$c"
        j=$sdir/show$i.json
        env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin TERM=dumb MODULEPATH="$mp" \
                "$CUDAMOD_BIN" show --json "${mods[@]}" >"$j" 2>"$j.err" && rc=0 || rc=$?
        lrc=$(rc_of "$sdir/load$i")
        case $c in
        warn)
                # Lmod prints the warning, with the environment changed all
                # the same, and Lmod 8.6 exits 1 (8.7 and 9.2 exit 0): show succeeds
                # and reports it.
                case $lmod_version in
                8.6.*) want_lrc=1 ;;
                *) want_lrc=0 ;;
                esac
                [ "$lrc" = "$want_lrc" ] ||
                        fail "Lmod $lmod_version's load of warn exits $lrc (expected $want_lrc after a warning)"
                grep -q 'be careful' "$sdir/load$i.out" || fail "Lmod did not print the warning"
                [ "$rc" = 0 ] || fail "show warn failed (rc $rc): $(cat "$j.err")"
                python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["modules"][0]; sys.exit(m["warnings"] != ["be careful"])' "$j" ||
                        fail "show does not report the warning: $(cat "$j")"
                ;;
        unl)
                # Lmod unloads setx (nothing to do: it is not loaded), as show.
                [ "$lrc" = 0 ] || fail "Lmod's load of unl failed: $(cat "$sdir/load$i.out")"
                [ "$rc" = 0 ] || fail "show unl failed (rc $rc): $(cat "$j.err")"
                ;;
        *)
                if [ "$lrc" != 0 ]; then
                        [ "$rc" -ne 0 ] || fail "module load $c fails with Lmod ($(head -c 300 "$sdir/load$i.out")), but show succeeds"
                        i=$((i + 1))
                        continue
                fi
                [ "$rc" = 0 ] || fail "show $c failed (rc $rc): $(cat "$j.err")"
                ;;
        esac
        if [ "$rc" = 0 ] && ! python3 "$MT_LIB_DIR/show-parity.py" "$sdir/base.env" "$sdir/load$i.env" "$j" \
                >"$j.diff" 2>&1; then
                fail "show $c differs from Lmod's load:"
                sed 's/^/    /' "$j.diff"
        fi
        # The aliases and the shell function: what bash has after Lmod's
        # load, against what show recorded.
        if [ "$rc" = 0 ]; then
                python3 - "$j" "$sdir/alias$i" "$sdir/func$i" <<'EOF' || fail "show $c: aliases or shell functions differ from Lmod's"
import json, re, shlex, sys
show = json.load(open(sys.argv[1]))
al = sorted(a for m in show["modules"] for a in m["aliases"])
fn = sorted(f for m in show["modules"] for f in m["shell_functions"])
lmod_al = []
for line in open(sys.argv[2]):
    m = re.match(r"alias (\S+?)=(.*)$", line.rstrip("\n"))
    if m:
        lmod_al.append(m.group(1) + "=" + shlex.split(m.group(2))[0])
ok = sorted(lmod_al) == al
body = open(sys.argv[3]).read()
if fn:
    # bash reformats the body: compare the words.
    want = fn[0].split("=", 1)[1]
    ok = ok and body.startswith("hi ()") and \
        re.sub(r"[\s;{}]+", " ", body.split("\n", 1)[1]).split() == re.sub(r"[\s;{}]+", " ", want).split()
else:
    ok = ok and body.strip() == ""
if not ok:
    print("  show:", al, fn, "\n  Lmod:", sorted(lmod_al), repr(body))
sys.exit(0 if ok else 1)
EOF
        fi
        i=$((i + 1))
done

# Messages: Lmod prints LmodMessage; show has it.
grep -q 'hello from api' "$sdir/load1.out" || fail "Lmod did not print api's message"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["modules"][0]; sys.exit(m["messages"] != ["hello from api"])' \
        "$sdir/show1.json" || fail "show does not report api's message: $(cat "$sdir/show1.json")"
# requireFullName: Lmod refuses `load req` (checked above); show says why.
grep -q 'must be loaded with the version specified' "$sdir/show5.json.err" ||
        fail "show req does not say why: $(cat "$sdir/show5.json.err")"

# unload of a module this load loaded: Lmod takes setx's changes back;
# show refuses rather than pretend (documented).
if env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin MODULEPATH="$mp" "$CUDAMOD_BIN" show setx unl \
        >"$MT_TMP/unl.out" 2>&1; then
        fail "show setx unl succeeded: $(cat "$MT_TMP/unl.out")"
elif ! grep -q 'unloads setx/1.0, which this load loaded' "$MT_TMP/unl.out"; then
        fail "show setx unl: $(cat "$MT_TMP/unl.out")"
fi

# Safety: nothing a modulefile says is run. An alias or function body that
# would create a file, and names that are not a shell's.
mkdir -p "$t/Core/evil"
cat >"$t/Core/evil/1.0.lua" <<EOF
set_alias("x", "touch $MT_TMP/pwned-alias")
set_shell_function("y", "touch $MT_TMP/pwned-func", "touch $MT_TMP/pwned-csh")
setenv("EVIL", "1")
EOF
env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin MODULEPATH="$mp" "$CUDAMOD_BIN" show evil \
        >"$MT_TMP/evil.out" 2>&1 || fail "show evil failed: $(cat "$MT_TMP/evil.out")"
for f in pwned-alias pwned-func pwned-csh; do
        [ ! -e "$MT_TMP/$f" ] || fail "show ran a modulefile's text ($f exists)"
done
for bad in "'a;b'" "'\$(id)'" "''" "'-x'" "'a b'"; do
        printf 'set_alias(%s, "ls")\n' "$bad" >"$t/Core/evil/1.0.lua"
        if env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin MODULEPATH="$mp" "$CUDAMOD_BIN" show evil \
                >"$MT_TMP/evil.out" 2>&1; then
                fail "set_alias($bad) was accepted"
        fi
done
say "${#cases[@]} cases compared with Lmod"
mt_finish
