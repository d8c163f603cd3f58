#!/usr/bin/env bash
# tests/modules/consumers.sh: the consumer matrix (doc/guide.md "Threat
# model"). Every value that reaches a file cudamod writes is read by more
# programs than cudamod's own evaluator: Lmod reading Lua, Lmod reading Tcl
# through its tcl2lua (modulefiles) and RC2lua (.modulerc), Lmod's spider
# and its cache (spiderT.lua, Lua that every user's Lmod runs), Environment
# Modules, and the shell that evals what each prints. For each value either
# every one of them gets it back byte for byte, or cudamod refuses it (no
# module, a warning naming it; a config value at FILE:LINE:COL); nothing
# runs. Under every Lmod present (lmod_inits: Debian's 8.6 or 8.7, and 9.2).
#
#  1. the byte rule: one install a byte (1-255 but '/', inside a directory
#     name): scan names exactly the bytes of written_value_problem as
#     `unsafe-path`, and generate writes a cuda module for exactly the
#     others (Tcl: and not for bytes that are not UTF-8);
#  2. loads: install paths holding what each reader takes as code (the
#     closers of every Lua long-string level, tcl2lua's "…" strings, Tcl
#     [exec]/$/\, shell $()/``, quote runs) and one holding every byte the
#     rule keeps: each written module loaded and unloaded by every Lmod
#     (Lua tree; Tcl tree), by Environment Modules (Tcl tree) and by
#     `cudamod show`, with CUDA_HOME the install path byte for byte; `module
#     avail` and `module spider` under each Lmod, and a spider cache built
#     by each Lmod's update_lmod_system_cache_files then read;
#  3. config values: a deprecation message holding quotes, '$', '\' and '['
#     printed byte for byte by every tool; a message holding ']===]' and an
#     env directory holding '"' refused at FILE:LINE:COL, nothing written;
#  4. the index is input: a module name in .cudamod-index.json holding Lua
#     code is not trusted (a warning), never written into a .modulerc.
# The canary: every exploit runs `touch PWNED` in the working directory.
source "$(dirname "$0")/lib.sh"

MT_SELF=consumers
need lmods em

mapfile -t LMODS < <(lmod_inits)
[ ${#LMODS[@]} -ge 1 ] || die "no Lmod"
say "Lmods: $(for l in "${LMODS[@]}"; do printf '%s ' "${l%%$'\t'*}"; done)"

# index_modules OUT PREFIX: "MODULE<TAB>INSTALL" lines of the index, for
# modules named PREFIX*.
index_modules() {
        python3 - "$1/.cudamod-index.json" "$2" <<'EOF'
import json, sys, os
files = json.load(open(sys.argv[1]))["files"]
out = sys.stdout.buffer
for k, v in sorted(files.items()):
    m = v.get("module")
    if m and m.startswith(sys.argv[2]) and v.get("install"):
        out.write(m.encode() + b"\t" + os.fsencode(v["install"]) + b"\0")
EOF
}

# --- 1. the byte rule --------------------------------------------------------
# byte_char B: BYTE = the byte B itself (a newline too: $() would drop it).
byte_char() {
        # shellcheck disable=SC2059
        BYTE=$(printf "\\x$(printf %02x "$1")."; true)
        BYTE=${BYTE%.}
}
# One CUDA toolkit (the demo's cuda-12.9), copied under each hostile
# directory: a fixture of one install keeps the corpus to one module a case.
D=$MT_TMP/demo
"$MKFIXTURE" demo "$D" >/dev/null
cuda_into() { mkdir -p "$1" && cp -a "$D/sw/cuda-12.9" "$1/"; }
# refused_byte B FORMAT: whether cudamod must refuse a path holding byte B
# (FORMAT scan: only the rule of what a reader takes as code, which scan
# calls unsafe-path; ':' and bytes that are not UTF-8 are plan's rules).
refused_byte() {
        local b=$1 fmt=$2
        ((b < 0x20)) && return 0
        ((b == 0x7f || (b >= 0x80 && b <= 0x9f))) && return 0
        case $b in 34 | 36 | 92 | 93 | 96) return 0 ;; esac
        [ "$fmt" = scan ] && return 1
        ((b == 0x3a)) && return 0
        # Lmod's tcl2lua reads a Tcl modulefile as ISO 8859-1 and writes
        # UTF-8 (plan.c): no byte >= 0x80 in a Tcl module.
        [ "$fmt" = tcl ] && ((b >= 0x80)) && return 0
        return 1
}
C=$MT_TMP/bytes
for ((b = 1; b < 256; b++)); do
        ((b == 0x2f)) && continue
        hex=$(printf '%02x' $b)
        byte_char $b
        cuda_into "$C/$hex/a${BYTE}b" || fail "byte 0x$hex: cannot copy the toolkit"
done
run_cudamod --config "$MT_LIB_DIR/site.yaml" scan --json "$C" >"$MT_TMP/bytes.json" 2>/dev/null || true
python3 - "$MT_TMP/bytes.json" "$C" >"$MT_TMP/bytes.unsafe" <<'EOF'
import json, sys, os
# The hex directory of every cuda install scan called unsafe-path.
for i in json.load(open(sys.argv[1]))["installs"]:
    if i.get("component") != "cuda":
        continue
    codes = [p.get("code") for p in i.get("problems", [])]
    rel = os.path.relpath(i["prefix"], sys.argv[2])
    print(rel.split("/")[0], "unsafe" if "unsafe-path" in codes else "safe")
EOF
for fmt in lua tcl; do
        out=$MT_TMP/bytes.$fmt
        run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$out" --format $fmt --layout flat "$C" \
                >"$out.log" 2>&1 || fail "generate --format $fmt of the byte corpus failed: $(tail -3 "$out.log")"
        declare -A has=()
        while IFS=$'\t' read -r -d '' m inst; do
                rel=${inst#"$C/"}
                has[${rel%%/*}]=$m
        done < <(index_modules "$out" cuda/)
        bad=0
        for ((b = 1; b < 256; b++)); do
                ((b == 0x2f)) && continue
                hex=$(printf '%02x' $b)
                if refused_byte $b $fmt; then
                        [[ -v has[$hex] ]] && { fail "$fmt: byte 0x$hex: a module was written (${has[$hex]})"; bad=1; }
                else
                        [[ -v has[$hex] ]] || { fail "$fmt: byte 0x$hex: no module was written"; bad=1; }
                fi
        done
        [ $bad = 0 ] && say "$fmt: a cuda module for exactly the bytes the rule keeps (${#has[@]} of 254)"
        grep -q 'gets no module' "$out.log" || fail "$fmt: no warning names a refused install"
        unset has
done
while read -r hex verdict; do
        b=$((16#$hex))
        if refused_byte $b scan; then want=unsafe; else want=safe; fi
        [ "$verdict" = "$want" ] || fail "scan: byte 0x$hex: $verdict, want $want"
done <"$MT_TMP/bytes.unsafe"
[ "$(wc -l <"$MT_TMP/bytes.unsafe")" = 254 ] || fail "scan found $(wc -l <"$MT_TMP/bytes.unsafe") cuda installs of 254"
no_pwned || true

say "time: ${SECONDS}s"
# --- 2. loads ------------------------------------------------------------------
keep=
for ((b = 1; b < 256; b++)); do
        ((b == 0x2f)) || refused_byte $b tcl || { byte_char $b; keep+=$BYTE; }
done
cases=(
        "tcl2lua-quote|x\",os.execute(\"touch PWNED\"),\""
        "lua-long-0|a]]os.execute('touch PWNED')--"
        "lua-long-1|a]=]b"
        "lua-long-3|a]===]os.execute('touch PWNED')--[===["
        "lua-long-8|a]========]b"
        "tcl-exec|a[exec touch PWNED]b"
        "tcl-exec-open|a[exec touch PWNED"
        "tcl-variable|a\$env(HOME)b"
        "tcl-backslash|a\\"
        "shell-dollar|a\$(touch PWNED)b"
        "shell-backtick|a\`touch PWNED\`b"
        "quote-run|a\"\"\"\"b"
        "single-quotes|a''''b';touch PWNED;'"
        "brackets-braces|a[[b{c}d[=["
        "shell-specials|a;touch PWNED;&|<>*?~!#%^()b"
        "utf8|aé漢b"
        "every-kept-byte|$keep"
)
L=$MT_TMP/loads
declare -A want_refused=()
for c in "${cases[@]}"; do
        name=${c%%|*} bytes=${c#*|}
        cuda_into "$L/$name/$bytes" || fail "$name: cannot copy the toolkit"
        refused=0
        for ((i = 0; i < ${#bytes}; i++)); do
                ch=${bytes:i:1}
                [[ $ch == [\"\$\\\]\`] ]] && refused=1
        done
        want_refused[$name]=$refused
done
# The modules of each tree: $MT_TMP/mods.FORMAT, "MODULE<TAB>INSTALL\0".
for fmt in lua tcl; do
        out=$MT_TMP/loads.$fmt
        run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$out" --format $fmt --layout flat "$L" \
                >"$out.log" 2>&1 || fail "generate --format $fmt of the load corpus failed: $(tail -3 "$out.log")"
        declare -A got=()
        index_modules "$out" cuda/ >"$MT_TMP/mods.$fmt"
        while IFS=$'\t' read -r -d '' m inst; do
                rel=${inst#"$L/"}
                got[${rel%%/*}]=1
        done <"$MT_TMP/mods.$fmt"
        for c in "${cases[@]}"; do
                name=${c%%|*}
                if [ "${want_refused[$name]}" = 1 ] || { [ $fmt = tcl ] && [ "$name" = utf8 ]; }; then
                        [[ -v got[$name] ]] && fail "$fmt: $name: a module was written for a path a reader takes as code"
                elif [[ ! -v got[$name] ]]; then
                        fail "$fmt: $name: no module was written"
                fi
        done
        unset got
        # Nothing of the refused paths reached any file (the kept ones
        # hold 'touch PWNED' as data, no one 'os.execute').
        if grep -rlF 'os.execute' "$out" >/dev/null 2>&1; then
                fail "$fmt: a written file holds a refused path: $(grep -rlF 'os.execute' "$out" | head -3)"
        fi
done

# load_all TOOL LMOD-INIT FMT LABEL: load and unload each cuda module of
# that tree in one shell, then avail and spider; CUDA_HOME must be the
# install path byte for byte, and the start must come back.
load_all() {
        local tool=$1 init=$2 fmt=$3 label=$4 dir=$MT_TMP/s.$4 m inst i=0 script=
        while IFS=$'\t' read -r -d '' m inst; do
                script+="step load-$i load $m"$'\n'"step unload-$i unload $m"$'\n'
                i=$((i + 1))
        done <"$MT_TMP/mods.$fmt"
        script="snap base"$'\n'"step avail avail"$'\n'"$script"
        [ "$tool" = lmod ] && script+="step spider spider cuda"$'\n'
        CUDAMOD_LMOD_INIT=$init session "$tool" "$dir" "$MT_TMP/loads.$fmt" <<<"$script"
        i=0
        while IFS=$'\t' read -r -d '' m inst; do
                if ! rc_is "$dir/load-$i" 0; then
                        fail "$label: module load $m failed: $(head -c 300 "$dir/load-$i.out")"
                elif ! env_value "$dir/load-$i.env" CUDA_HOME || [ "$VAL" != "$inst" ]; then
                        fail "$label: $m: CUDA_HOME is $(printf '%q' "$VAL"), want $(printf '%q' "$inst")"
                fi
                env_delta "$dir/base.env" "$dir/unload-$i.env"
                check_unchanged "$label: $m: after unload" || true
                i=$((i + 1))
        done <"$MT_TMP/mods.$fmt"
        rc_is "$dir/avail" 0 || fail "$label: module avail failed: $(head -c 300 "$dir/avail.out")"
        if [ "$tool" = lmod ]; then
                rc_is "$dir/spider" 0 || fail "$label: module spider cuda failed: $(head -c 300 "$dir/spider.out")"
        fi
        say "$label: $i modules loaded and unloaded"
        no_pwned || true
}

# spider_cache INIT FMT LABEL: the system spider cache of that Lmod over
# the tree, then `module avail` and `module spider` reading it.
spider_cache() {
        local init=$1 fmt=$2 label=$3 libexec cache=$MT_TMP/cache.$3 rc=$MT_TMP/lmodrc.$3.lua
        libexec=$(cd "$(dirname "$init")/../libexec" && pwd)
        mkdir -p "$cache"
        printf 'scDescriptT = {\n  { ["dir"] = "%s", ["timestamp"] = "%s/timestamp" },\n}\n' "$cache" "$cache" >"$rc"
        if ! (cd "$MT_TMP/cwd" && env -i HOME="$MT_TMP/home" PATH=/usr/bin:/bin \
                "$libexec/update_lmod_system_cache_files" -d "$cache" -t "$cache/timestamp" "$MT_TMP/loads.$fmt") \
                >"$cache.log" 2>&1; then
                fail "$label: update_lmod_system_cache_files failed: $(tail -c 300 "$cache.log")"
                return
        fi
        CUDAMOD_LMOD_INIT=$init session lmod "$MT_TMP/s.$label" "$MT_TMP/loads.$fmt" <<EOF
export LMOD_RC=$rc
step avail avail
step spider spider cuda
EOF
        rc_is "$MT_TMP/s.$label/avail" 0 || fail "$label: module avail with the cache failed"
        rc_is "$MT_TMP/s.$label/spider" 0 || fail "$label: module spider with the cache failed: $(head -c 300 "$MT_TMP/s.$label/spider.out")"
        grep -q 'cuda' "$MT_TMP/s.$label/spider.out" || fail "$label: the cache does not list cuda"
        no_pwned || true
}

for l in "${LMODS[@]}"; do
        v=${l%%$'\t'*} init=${l#*$'\t'}
        load_all lmod "$init" lua "lmod-$v-lua"
        load_all lmod "$init" tcl "lmod-$v-tcl"
        say "time: ${SECONDS}s"
        spider_cache "$init" lua "lmod-$v-lua-cache"
        spider_cache "$init" tcl "lmod-$v-tcl-cache"
done
load_all em "" tcl "em-$(em_version || echo 5)-tcl"
# cudamod's own evaluator.
for fmt in lua tcl; do
        while IFS=$'\t' read -r -d '' m inst; do
                if ! run_cudamod show --json --modulepath "$MT_TMP/loads.$fmt" "$m" >"$MT_TMP/show.json" 2>"$MT_TMP/show.err"; then
                        fail "show $fmt: $m failed: $(head -c 300 "$MT_TMP/show.err")"
                        continue
                fi
                got=$(python3 - "$MT_TMP/show.json" <<'EOF'
import json, sys, os
d = json.load(open(sys.argv[1], encoding="utf-8"), strict=False)
v = [e.get("value") for e in d["environment"] if e["name"] == "CUDA_HOME"]
sys.stdout.buffer.write((v[0] if v else "").encode())
EOF
)
                [ "$got" = "$inst" ] || fail "show $fmt: $m: CUDA_HOME is $(printf '%q' "$got"), want $(printf '%q' "$inst")"
        done <"$MT_TMP/mods.$fmt"
done
no_pwned || true

say "time: ${SECONDS}s"
# --- 3. config values ----------------------------------------------------------
msg='use cuda/13 "now": $HOME \ [x {y} '"'z'"
for fmt in lua tcl; do
        cfg=$MT_TMP/msg.$fmt.yaml out=$MT_TMP/msg.$fmt
        python3 - "$cfg" "$msg" <<'EOF'
import json, sys
open(sys.argv[1], "w").write("defaults: {cuda: latest, cudnn: latest, nccl: latest}\n"
    "modulerc: {cuda: {'12.9': {deprecated: %s}}}\n" % json.dumps(sys.argv[2]))
EOF
        run_cudamod --config "$cfg" generate -o "$out" --format $fmt --layout flat "$D/sw" >"$out.log" 2>&1 ||
                { fail "$fmt: generate with a deprecation message failed: $(cat "$out.log")"; continue; }
        tools=()
        for l in "${LMODS[@]}"; do tools+=("lmod|${l#*$'\t'}|lmod-${l%%$'\t'*}"); done
        [ $fmt = tcl ] && tools+=("em||em")
        for t in "${tools[@]}"; do
                IFS='|' read -r tool init label <<<"$t"
                CUDAMOD_LMOD_INIT=$init session "$tool" "$MT_TMP/m.$fmt.$label" "$out" <<<"step load load cuda/12.9"
                grep -qF -- "$msg" "$MT_TMP/m.$fmt.$label/load.out" ||
                        fail "$label ($fmt): the message is not printed byte for byte: $(head -c 300 "$MT_TMP/m.$fmt.$label/load.out")"
        done
done
no_pwned || true
# Refused at the config's position, nothing written.
refuse_config() {
        local name=$1 text=$2 want=$3 cfg=$MT_TMP/$1.yaml out=$MT_TMP/$1.out rc=0
        printf '%s\n' "$text" >"$cfg"
        run_cudamod --config "$cfg" generate -o "$out" --format tcl --layout flat "$D/sw" >"$out.log" 2>&1 || rc=$?
        [ $rc != 0 ] || fail "$name: generate accepted it"
        grep -qE "^(cudamod: )?(error: )?$cfg:[0-9]+:[0-9]+: .*$want" "$out.log" ||
                fail "$name: no FILE:LINE:COL message holding '$want': $(cat "$out.log")"
        [ -z "$(find "$out" -type f ! -name '.cudamod*' 2>/dev/null)" ] || fail "$name: files were written"
}
refuse_config deprecated-long-bracket "modulerc: {cuda: {'12.9': {deprecated: 'a]===]os.execute(\"touch PWNED\")--'}}}" "']'"
refuse_config env-quote "env: {cuda: {prepend_path: {FOO: '/x\",os.execute(\"touch PWNED\"),\"'}}}" "'\"'"
refuse_config env-dollar "env: {cuda: {setenv: {FOO: 'a\$(touch PWNED)'}}}" "'\\$'"

say "time: ${SECONDS}s"
# --- 4. the index --------------------------------------------------------------
for fmt in lua tcl; do
        out=$MT_TMP/index.$fmt
        run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$out" --format $fmt --layout flat "$D/sw" \
                >"$out.log" 2>&1 || { fail "$fmt: generate failed: $(cat "$out.log")"; continue; }
        python3 - "$out/.cudamod-index.json" <<'EOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for k, v in d["files"].items():
    if v.get("module", "").startswith("cuda/"):
        v["module"] = 'cuda/9",os.execute("touch PWNED"),"'
json.dump(d, open(p, "w"), indent=1)
EOF
        rc=0
        run_cudamod --config "$MT_LIB_DIR/site.yaml" generate -o "$out" --format $fmt --layout flat --force "$D/sw" \
                >"$out.2.log" 2>&1 || rc=$?
        grep -q 'not trusted' "$out.2.log" || fail "$fmt: a hostile module name in the index: no warning: $(cat "$out.2.log")"
        if grep -rlF 'os.execute' "$out" --exclude=.cudamod-index.json >/dev/null 2>&1; then
                fail "$fmt: the index's module name reached a file: $(grep -rlF 'os.execute' "$out" --exclude=.cudamod-index.json | head -3)"
        fi
        for l in "${LMODS[@]}"; do
                CUDAMOD_LMOD_INIT=${l#*$'\t'} session lmod "$MT_TMP/i.$fmt.${l%%$'\t'*}" "$out" <<<$'step avail avail\nstep load load cuda'
        done
        [ $fmt = tcl ] && session em "$MT_TMP/i.$fmt.em" "$out" <<<$'step avail avail\nstep load load cuda'
        no_pwned || true
done

say "time: ${SECONDS}s"
mt_finish
