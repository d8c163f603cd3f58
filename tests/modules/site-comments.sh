#!/usr/bin/env bash
# tests/modules/site-comments.sh TOOL: a site template that puts {{%source}}
# comment text where a byte of it could end what it stands in: a Tcl braced
# body (a proc ModulesHelp's comment) and Lua long comments. The demo is
# installed under directories named to end those (the issue's names):
#   a};exec touch PWNED;proc z {} {
#   a]] os.execute("touch PWNED") --[[b
# generate must either refuse (a path holding ']' gets no module since
# issue 30) or neutralise the text, and the real tool
# (Lmod: the Lua tree and the Tcl tree, which Lmod reads too; Environment
# Modules: the Tcl tree) loading the module and showing its help must not
# run anything: no PWNED, and the module's own setenv arrives unchanged.
source "$(dirname "$0")/lib.sh"

tool=${1:?usage: site-comments.sh lmod|em}
MT_SELF="$tool-site-comments"
need "$tool"

formats=(tcl)
[ "$tool" = lmod ] && formats=(lua tcl)

mkdir -p "$MT_TMP/tpl/lua" "$MT_TMP/tpl/tcl"
cat >"$MT_TMP/tpl/lua/cuda.lua.in" <<'EOF'
-- from {{%source}}
--[[ installed in {{%source}} ]]
--[==[ {{%prefix}} ]==]
help([[
{{%source}}
]])
setenv("SITE_CUDA", {{prefix}})
EOF
cat >"$MT_TMP/tpl/tcl/cuda.tcl.in" <<'EOF'
#%Module
proc ModulesHelp { } { # from {{%source}}
    puts stderr "installed in {{%source}}"
}
if {1} {
    # {{%prefix}}
    setenv SITE_CUDA {{prefix}}
}
EOF
printf 'defaults: { cuda: latest, cudnn: latest, nccl: latest }\ntemplates: %s/tpl\n' "$MT_TMP" >"$MT_TMP/site.yaml"

cases=(
        'tcl-braced-body|a};exec touch PWNED;proc z {} {'
        'lua-long-comment|a]] os.execute("touch PWNED") --[[b'
        'lua-long-comment-level|a]==] os.execute("touch PWNED") --[==[b'
)
for c in "${cases[@]}"; do
        name=${c%%|*} bytes=${c#*|}
        root=$MT_TMP/c/$name/$bytes
        mkdir -p "$root"
        (cd "$MT_TMP/cwd" && "$MKFIXTURE" demo "$root") >"$MT_TMP/$name.mkfixture.log" 2>&1 ||
                die "$name: mkfixture demo failed: $(cat "$MT_TMP/$name.mkfixture.log")"
        for fmt in "${formats[@]}"; do
                out=$MT_TMP/c/$name.$fmt
                log=$out.generate.log
                what="$name ($fmt, $tool)"
                if ! run_cudamod --config "$MT_TMP/site.yaml" generate -o "$out" --format "$fmt" \
                        --layout flat "$root/sw" >"$log" 2>&1; then
                        # Refused is safe, if nothing was written.
                        if [ -e "$out/cuda" ]; then
                            fail "$what: generate failed and left modules: $(cat "$log")"
                        else
                            say "$what: refused by cudamod: $(head -c 200 "$log")"
                        fi
                        continue
                fi
                # An install path holding ']' gets no module at all (doc/
                # guide.md "Threat model"): refused, with the warning.
                if [ ! -e "$out/cuda" ]; then
                        if grep -q 'gets no module' "$log"; then
                                say "$what: refused by cudamod: $(grep -m1 'gets no module' "$log" | head -c 200)"
                        else
                                fail "$what: no cuda module, and no warning says why: $(cat "$log")"
                        fi
                        continue
                fi
                sdir=$out.s
                session "$tool" "$sdir" "$out" <<'EOF'
step load load cuda/12.9
step help help cuda/12.9
step show show cuda/12.9
EOF
                no_pwned || true
                rc_is "$sdir/load" 0 || fail "$what: module load cuda/12.9 failed: $(cat "$sdir/load.out")"
                if env_value "$sdir/load.env" SITE_CUDA; then
                        [ "$VAL" = "$root/sw/cuda-12.9" ] ||
                                fail "$what: SITE_CUDA is $(printf '%q' "$VAL"), not $(printf '%q' "$root/sw/cuda-12.9")"
                else
                        fail "$what: SITE_CUDA is not set: $(cat "$sdir/load.out")"
                fi
        done
done
mt_finish
