#!/usr/bin/env bash
# tests/modules/spider-cache.sh: with a system spider cache (an lmodrc's
# scDescriptT, LMOD.md §4), a module generate writes is invisible to the
# real Lmod's `module spider` and `module keyword` until the cache is
# rebuilt; with `lmod: {spider_cache: true}` (or {dir, timestamp}) generate
# rebuilds it with Lmod's own update_lmod_system_cache_files, so both see
# cuda/12.4 at once; a run that changes nothing leaves the cache alone; a
# rebuilt cache is named on stdout; a rebuild that fails (the tool fails,
# no lmodrc names scDescriptT) says why (the tool's exit status and
# stderr), exits 4 (not the 1 of a tree that could not be written), and
# leaves the cache as it was, with no temporary directory behind.
source "$(dirname "$0")/lib.sh"

MT_SELF=lmod-spider-cache
need lmod
lmod_dir=$(cd "$(dirname "$(lmod_init)")/../libexec" 2>/dev/null && pwd) || die "no libexec beside $(lmod_init)"
update=$lmod_dir/update_lmod_system_cache_files
[ -x "$update" ] || die "no $update"

fx=$MT_TMP/fx
"$MKFIXTURE" runfile "$fx" >/dev/null
python3 - "$fx/usr/local/cuda-12.4/version.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d['libcublas'] = {'name': 'CUDA cuBLAS', 'version': '12.4.5.8'}
json.dump(d, open(sys.argv[1], 'w'))
EOF

out=$MT_TMP/mods
cache=$MT_TMP/cache
rc=$MT_TMP/lmodrc.lua
mkdir -p "$out/Core/foo" "$cache"
echo 'whatis("Description: a module of the site")' >"$out/Core/foo/1.0.lua"
cat >"$rc" <<EOF
scDescriptT = {
  {
    ["dir"]       = "$cache",
    ["timestamp"] = "$cache/timestamp",
  },
}
EOF
env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin "$update" -d "$cache" -t "$cache/timestamp" "$out/Core" >/dev/null 2>&1 ||
        die "the first cache could not be built"

# gen NAME CONFIG ARGS...: generate with the lmodrc and Lmod's libexec.
gen() {
        local name=$1 cfg=$2 rc_=0
        shift 2
        LMOD_RC=$rc LMOD_DIR=$lmod_dir MODULEPATH=$out/Core run_cudamod --config "$cfg" generate -o "$out" "$@" "$fx" \
                >"$MT_TMP/$name.out" 2>"$MT_TMP/$name.err" || rc_=$?
        echo "$rc_" >"$MT_TMP/$name.rc"
}
gen_rc() { local r; read -r r <"$MT_TMP/$1.rc"; printf '%s' "$r"; }
find_cuda() {
        local dir=$1
        session lmod "$dir" "$out/Core" <<EOF
export LMOD_RC=$rc
step spider -t spider
step keyword -t keyword nvcc
EOF
}

# Without the option: the cache hides the new module (the finding).
gen plain "$MT_LIB_DIR/site.yaml"
[ "$(gen_rc plain)" = 0 ] || die "generate failed: $(cat "$MT_TMP/plain.err")"
find_cuda "$MT_TMP/s0"
grep -q '^foo/1.0' "$MT_TMP/s0/spider.out" || fail "the cache is not in use: spider does not list foo/1.0: $(cat "$MT_TMP/s0/spider.out")"
if grep -q '^cuda/12.4' "$MT_TMP/s0/spider.out"; then
        say "note: this Lmod's spider sees cuda/12.4 without a rebuilt cache"
fi

# With spider_cache: true, from the lmodrc.
rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
printf 'lmod:\n  spider_cache: true\n  extensions: true\n' >"$MT_TMP/true.yaml"
gen rebuilt "$MT_TMP/true.yaml" --json
[ "$(gen_rc rebuilt)" = 0 ] || fail "generate with spider_cache: true: exit $(gen_rc rebuilt): $(cat "$MT_TMP/rebuilt.err")"
grep -qF "Lmod's spider cache rebuilt" "$MT_TMP/rebuilt.out" && fail "--json: the rebuild's line is in the document"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get("spider_cache") == sys.argv[2] else 1)' \
        "$MT_TMP/rebuilt.out" "$cache" || fail "--json: spider_cache is not '$cache': $(cat "$MT_TMP/rebuilt.out")"
find_cuda "$MT_TMP/s1"
grep -q '^cuda/12.4$' "$MT_TMP/s1/spider.out" || fail "spider does not see cuda/12.4 after the rebuild: $(cat "$MT_TMP/s1/spider.out")"
grep -q '^cublas/12.4.5.8$' "$MT_TMP/s1/spider.out" || fail "spider does not see cublas after the rebuild: $(cat "$MT_TMP/s1/spider.out")"
grep -q '^cuda/12.4$' "$MT_TMP/s1/keyword.out" || fail "keyword nvcc does not find cuda/12.4 after the rebuild: $(cat "$MT_TMP/s1/keyword.out")"
grep -q '^foo/1.0' "$MT_TMP/s1/spider.out" || fail "the rebuilt cache lost the site's foo/1.0"
ls -A "$MT_TMP" | grep -q 'cudamod-tmp' && fail "a temporary directory was left: $(ls -A "$MT_TMP")"

# Nothing changed: the cache is not rebuilt.
ino=$(stat -c %i "$cache/spiderT.lua")
gen again "$MT_TMP/true.yaml"
[ "$(gen_rc again)" = 0 ] || fail "second generate: exit $(gen_rc again)"
[ "$(stat -c %i "$cache/spiderT.lua")" = "$ino" ] || fail "a run that changed nothing rebuilt the cache"

# A cache named in the config; a tool that fails.
cache2=$MT_TMP/cache2
printf 'lmod:\n  spider_cache: {dir: %s, timestamp: %s/ts.txt}\n' "$cache2" "$cache2" >"$MT_TMP/dir.yaml"
rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
gen named "$MT_TMP/dir.yaml"
[ "$(gen_rc named)" = 0 ] || fail "generate with spider_cache {dir, timestamp}: exit $(gen_rc named): $(cat "$MT_TMP/named.err")"
[ "$(tail -n1 "$MT_TMP/named.out")" = "Lmod's spider cache rebuilt in $cache2" ] ||
        fail "a rebuild does not say what it rebuilt: $(cat "$MT_TMP/named.out")"
[ -s "$cache2/spiderT.lua" ] && [ -e "$cache2/ts.txt" ] || fail "no cache in $cache2: $(ls -A "$cache2" 2>&1)"
grep -q 'cuda/12.4' "$cache2/spiderT.lua" || fail "the cache in $cache2 does not hold cuda/12.4"

fake=$MT_TMP/fake-libexec
mkdir -p "$fake"
printf '#!/bin/sh\necho "ERROR: boom" >&2\nexit 3\n' >"$fake/update_lmod_system_cache_files"
chmod +x "$fake/update_lmod_system_cache_files"
before=$(cat "$cache2/spiderT.lua" 2>/dev/null || true)
rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
rc_=0
LMOD_DIR=$fake MODULEPATH=$out/Core run_cudamod --config "$MT_TMP/dir.yaml" generate -o "$out" "$fx" \
        >"$MT_TMP/fail.out" 2>"$MT_TMP/fail.err" || rc_=$?
[ "$rc_" = 4 ] || fail "a failed rebuild: exit $rc_, not 4"
grep -qF "spider cache rebuilt" "$MT_TMP/fail.out" && fail "a failed rebuild says it rebuilt"
grep -q "exit status 3: ERROR: boom" "$MT_TMP/fail.err" || fail "a failed rebuild does not say why: $(cat "$MT_TMP/fail.err")"
grep -q "the modules are written" "$MT_TMP/fail.err" || fail "a failed rebuild does not say the modules are written"
[ -e "$out/Core/cuda/12.4.lua" ] || fail "a failed rebuild: the module is not written"
[ "$(cat "$cache2/spiderT.lua")" = "$before" ] || fail "a failed rebuild changed the cache"
ls -A "$MT_TMP" | grep -q 'cudamod-tmp' && fail "a failed rebuild left a temporary directory: $(ls -A "$MT_TMP")"
# An lmodrc that loops, or builds a huge string: refused in bounded time
# and memory, named.
printf 'while true do end\n-- scDescriptT\n' >"$MT_TMP/loop.lua"
printf 'local s = "x"\nfor i = 1, 40 do s = s .. s end\nscDescriptT = {{dir = "/x", timestamp = "/y"}}\n' >"$MT_TMP/huge.lua"
for bad in loop huge; do
        rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
        rc_=0
        LMOD_RC=$MT_TMP/$bad.lua LMOD_DIR=$lmod_dir MODULEPATH=$out/Core run_cudamod \
                --config "$MT_TMP/true.yaml" generate -o "$out" "$fx" >"$MT_TMP/$bad.out" 2>"$MT_TMP/$bad.err" || rc_=$?
        [ "$rc_" = 4 ] || fail "lmodrc $bad: exit $rc_, not 4: $(cat "$MT_TMP/$bad.err")"
        grep -qF "cannot read scDescriptT in the lmodrc '$MT_TMP/$bad.lua'" "$MT_TMP/$bad.err" ||
                fail "lmodrc $bad: not named: $(cat "$MT_TMP/$bad.err")"
done
# An lmodrc that names no scDescriptT (the issue's case): written, exit 4.
printf 'propT = {}\n' >"$MT_TMP/nosc.lua"
rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
rc_=0
LMOD_RC=$MT_TMP/nosc.lua LMOD_DIR=$lmod_dir MODULEPATH=$out/Core run_cudamod \
        --config "$MT_TMP/true.yaml" generate -o "$out" "$fx" >"$MT_TMP/nosc.out" 2>"$MT_TMP/nosc.err" || rc_=$?
[ "$rc_" = 4 ] || fail "no scDescriptT: exit $rc_, not 4: $(cat "$MT_TMP/nosc.err")"
grep -q "scDescriptT" "$MT_TMP/nosc.err" || fail "no scDescriptT: not said: $(cat "$MT_TMP/nosc.err")"
[ -e "$out/Core/cuda/12.4.lua" ] || fail "no scDescriptT: the module is not written"
# Another user's modulefile on the modulepath (issue 30, finding 2): Lmod's
# spider would evaluate it with its full Lua, as the user running generate
# (root from cron). It is left out with a warning naming it, never run;
# the rest of the cache is rebuilt. As root the file is nobody's; as
# anyone, writable by others is as foreign.
eb=$MT_TMP/eb
mkdir -p "$eb/foo"
printf 'os.execute("touch %s/PWNED")\nwhatis("a module another user wrote")\n' "$MT_TMP" >"$eb/foo/1.0.lua"
chmod 0666 "$eb/foo/1.0.lua"
[ "$(id -u)" = 0 ] && chown nobody "$eb/foo/1.0.lua"
rm -rf "$out/Core/cuda" "$out"/.cudamod-index.json
rc_=0
LMOD_RC=$rc LMOD_DIR=$lmod_dir MODULEPATH=$out/Core:$eb run_cudamod --config "$MT_TMP/true.yaml" generate -o "$out" "$fx" \
        >"$MT_TMP/foreign.out" 2>"$MT_TMP/foreign.err" || rc_=$?
[ "$rc_" = 0 ] || fail "a foreign module on the modulepath: exit $rc_: $(cat "$MT_TMP/foreign.err")"
[ -e "$MT_TMP/PWNED" ] && fail "the spider cache rebuild ran another user's modulefile"
grep -qF "'$eb' is left out of the spider cache: '$eb/foo/1.0.lua' is" "$MT_TMP/foreign.err" ||
        fail "the foreign module is not named in a warning: $(cat "$MT_TMP/foreign.err")"
find_cuda "$MT_TMP/s-foreign"
grep -q '^cuda/12.4$' "$MT_TMP/s-foreign/spider.out" || fail "the cache was not rebuilt beside the foreign directory"
rm -f "$MT_TMP/PWNED"
mt_finish
