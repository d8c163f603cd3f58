/* evaluate-tcl.c: Tcl modulefiles in a Tcl safe interpreter (see
 * evaluate-tcl.h). */
#include <errno.h>
#include <limits.h>

#include "evaluate-tcl.h"
#include "process.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* Seconds for one modulefile: the driver's own time limit on the safe
 * interpreter is 5 s; this also covers tclsh's start and the records. */
#define TCL_TIMEOUT 10
/* Virtual memory of the tclsh, in KiB (ulimit -v): tclsh itself needs a
 * few MiB; a `string repeat` of gigabytes fails instead of taking the
 * machine's memory. */
#define TCL_MEMORY_KIB "1048576"
/* The records of one modulefile, at most: what process_run keeps of
 * stdout (1 MiB), less a margin for the last record. A real modulefile
 * writes a few KiB. */
#define TCL_MAX_RECORD_BYTES ((size_t)900 << 10)

/* The driver (Tcl). argv: FILE FULLNAME NAME VERSION MAX_CALLS MAX_BYTES;
 * the environment the load starts from in CUDAMOD_E0, CUDAMOD_E1, ... of
 * its own environment (each NAME=VALUE). Each record is "KIND LINE" and fields "x<hex of the bytes>". */
static const char driver[] =
        "# cudamod's Tcl driver: evaluate one modulefile in a safe interpreter.\n"
        "# argv: FILE FULLNAME NAME VERSION MAX_CALLS MAX_BYTES\n"
        "# Writes one record per line on stdout: a kind, the line of the call, then\n"
        "# each field as \"x\" and the hex of its bytes; \"end\" closes a run\n"
        "# that succeeded, \"error LINE xMSG\" one that did not.\n"
        "fconfigure stdout -translation lf -encoding ascii -buffering full\n"
        "# Bytes in, bytes out: the file, the arguments and the records are\n"
        "# iso8859-1, so that a value holds the modulefile's bytes as they are,\n"
        "# valid UTF-8 or not (Environment Modules in the C locale does the same).\n"
        "# A character above U+00FF can only come from an escape (\\u4e2d): its UTF-8.\n"
        "encoding system iso8859-1\n"
        "proc hex {s} {\n"
        "    if {![regexp {[^\\x00-\\xff]} $s]} {\n"
        "        return x[binary encode hex [encoding convertto iso8859-1 $s]]\n"
        "    }\n"
        "    set b {}\n"
        "    foreach c [split $s {}] {\n"
        "        append b [encoding convertto [expr {[scan $c %c] > 255 ? {utf-8} : {iso8859-1}}] $c]\n"
        "    }\n"
        "    return x[binary encode hex $b]\n"
        "}\n"
        "proc emit {kind line args} {\n"
        "    global n_calls max_calls n_bytes max_bytes\n"
        "    set rec \"$kind $line\"\n"
        "    foreach a $args { append rec \" \" [hex $a] }\n"
        "    incr n_bytes [string length $rec]\n"
        "    if {[incr n_calls] > $max_calls} {\n"
        "        return -code error \"more than $max_calls calls to modulefile commands (setenv, prepend-path, ...); a real modulefile makes tens\"\n"
        "    }\n"
        "    if {$n_bytes > $max_bytes} {\n"
        "        return -code error \"the calls to modulefile commands hold more than $max_bytes bytes\"\n"
        "    }\n"
        "    puts $rec\n"
        "}\n"
        "lassign $argv file fullname name version max_calls max_bytes\n"
        "set n_calls 0\n"
        "set n_bytes 0\n"
        "# The environment the load starts from: CUDAMOD_E0, CUDAMOD_E1, ... of our\n"
        "# own environment, which only its owner can read (a command line is\n"
        "# anyone's: /proc/PID/cmdline).\n"
        "set envlist {}\n"
        "for {set i 0} {[info exists ::env(CUDAMOD_E$i)]} {incr i} { lappend envlist $::env(CUDAMOD_E$i) }\n"
        "set s [interp create -safe]\n"
        "interp recursionlimit $s 200\n"
        "# A safe interpreter's own interp command creates interpreters without the\n"
        "# limits below.\n"
        "$s hide interp\n"
        "array set loaded {}\n"
        "foreach kv $envlist {\n"
        "    set eq [string first = $kv]\n"
        "    set k [string range $kv 0 [expr {$eq - 1}]]\n"
        "    set v [string range $kv [expr {$eq + 1}] end]\n"
        "    $s eval [list set ::env($k) $v]\n"
        "    set genv($k) $v\n"
        "}\n"
        "if {[info exists genv(LOADEDMODULES)]} {\n"
        "    foreach m [split $genv(LOADEDMODULES) :] { if {$m ne \"\"} { set loaded($m) 1 } }\n"
        "}\n"
        "$s eval [list set ::ModuleTool Modules]\n"
        "$s eval [list set ::ModuleToolVersion 5.0.0]\n"
        "$s eval [list set ::ModulesCurrentModulefile $file]\n"
        "\n"
        "# The line of the modulefile the command was called from.\n"
        "proc callline {} {\n"
        "    global s\n"
        "    if {[catch {$s eval {info frame -1}} f]} { return 0 }\n"
        "    if {[dict exists $f line]} { return [dict get $f line] }\n"
        "    return 0\n"
        "}\n"
        "proc refuse {what} {\n"
        "    return -code error \"$what is not available: cudamod evaluates Tcl modulefiles in a safe interpreter that runs nothing (use --trust-modulefiles to have the module tool evaluate them)\"\n"
        "}\n"
        "proc c_setenv {args} {\n"
        "    global s\n"
        "    if {[lindex $args 0] eq \"--set-if-undef\"} { set args [lrange $args 1 end] }\n"
        "    if {[llength $args] != 2} { return -code error {wrong # args: should be \"setenv ?--set-if-undef? variable value\"} }\n"
        "    lassign $args k v\n"
        "    emit setenv [callline] $k $v\n"
        "    $s eval [list set ::env($k) $v]\n"
        "    return\n"
        "}\n"
        "proc c_pushenv {k v} {\n"
        "    global s\n"
        "    emit pushenv [callline] $k $v\n"
        "    $s eval [list set ::env($k) $v]\n"
        "    return\n"
        "}\n"
        "proc c_unsetenv {args} {\n"
        "    global s\n"
        "    if {[lindex $args 0] eq \"--noop-on-unload\" || [lindex $args 0] eq \"--unset-on-unload\"} { set args [lrange $args 1 end] }\n"
        "    if {[llength $args] < 1 || [llength $args] > 2} { return -code error {wrong # args: should be \"unsetenv ?options? variable ?value?\"} }\n"
        "    set k [lindex $args 0]\n"
        "    emit unsetenv [callline] $k\n"
        "    $s eval [list unset -nocomplain ::env($k)]\n"
        "    return\n"
        "}\n"
        "proc c_path {kind cmd args} {\n"
        "    global s\n"
        "    set delim :\n"
        "    while {[string match -* [lindex $args 0]]} {\n"
        "        set o [lindex $args 0]\n"
        "        set args [lrange $args 1 end]\n"
        "        switch -glob -- $o {\n"
        "            -d - -delim - --delim { set delim [lindex $args 0]; set args [lrange $args 1 end] }\n"
        "            --delim=* { set delim [string range $o 8 end] }\n"
        "            --duplicates - --glob - --noop-on-unload - --remove-on-unload - --append-on-unload - --prepend-on-unload {}\n"
        "            --index { return -code error \"$cmd --index is not supported\" }\n"
        "            -- { break }\n"
        "            default { return -code error \"$cmd: unknown option '$o'\" }\n"
        "        }\n"
        "    }\n"
        "    if {[string length $delim] != 1} { return -code error \"$cmd: the delimiter must be one character\" }\n"
        "    if {[llength $args] < 2} { return -code error \"wrong # args: should be \\\"$cmd ?-d c? variable value ?value ...?\\\"\" }\n"
        "    set k [lindex $args 0]\n"
        "    set vals [lrange $args 1 end]\n"
        "    emit $kind [callline] $delim $k [join $vals $delim]\n"
        "    # What the modulefile reads back afterwards (EM's semantics: an entry\n"
        "    # already there stays where it is).\n"
        "    set cur [expr {[$s eval [list info exists ::env($k)]] ? [$s eval [list set ::env($k)]] : \"\"}]\n"
        "    set parts [expr {$cur eq \"\" ? {} : [split $cur $delim]}]\n"
        "    foreach v $vals {\n"
        "        foreach e [split $v $delim] {\n"
        "            if {$e eq \"\"} continue\n"
        "            if {$kind eq \"remove\"} {\n"
        "                set parts [lsearch -all -inline -exact -not $parts $e]\n"
        "            } elseif {[lsearch -exact $parts $e] < 0} {\n"
        "                if {$kind eq \"prepend\"} { set parts [linsert $parts 0 $e] } else { lappend parts $e }\n"
        "            }\n"
        "        }\n"
        "    }\n"
        "    if {$kind eq \"remove\" && ![llength $parts]} {\n"
        "        $s eval [list unset -nocomplain ::env($k)]\n"
        "    } else {\n"
        "        $s eval [list set ::env($k) [join $parts $delim]]\n"
        "    }\n"
        "    return\n"
        "}\n"
        "proc c_family {args} {\n"
        "    if {[llength $args] != 1} { return -code error {wrong # args: should be \"family name\"} }\n"
        "    emit family [callline] [lindex $args 0]\n"
        "    return\n"
        "}\n"
        "proc c_deps {kind args} {\n"
        "    set mods {}\n"
        "    foreach a $args {\n"
        "        if {[string match --* $a]} continue\n"
        "        lappend mods $a\n"
        "    }\n"
        "    if {![llength $mods]} { return -code error \"$kind: no module named\" }\n"
        "    emit $kind [callline] {*}$mods\n"
        "    foreach m $mods { if {$kind in {load prereq-all depends-on always-load}} { set ::pending($m) 1 } }\n"
        "    return\n"
        "}\n"
        "proc is_loaded {spec} {\n"
        "    global loaded\n"
        "    if {[info exists ::pending($spec)]} { return 1 }\n"
        "    foreach m [array names loaded] {\n"
        "        if {$m eq $spec || [string match \"$spec/*\" $m]} { return 1 }\n"
        "    }\n"
        "    return 0\n"
        "}\n"
        "proc c_is_loaded {args} {\n"
        "    global loaded\n"
        "    if {![llength $args]} { return [expr {[array size loaded] > 0}] }\n"
        "    foreach a $args { if {[is_loaded $a]} { return 1 } }\n"
        "    return 0\n"
        "}\n"
        "proc c_getenv {args} {\n"
        "    global s\n"
        "    if {[lindex $args 0] eq \"--return-value\"} { set args [lrange $args 1 end] }\n"
        "    lassign $args k def\n"
        "    if {[$s eval [list info exists ::env($k)]]} { return [$s eval [list set ::env($k)]] }\n"
        "    return $def\n"
        "}\n"
        "proc c_module_info {what args} {\n"
        "    global fullname name version file\n"
        "    switch -- $what {\n"
        "        name - specified { return $fullname }\n"
        "        mode { if {[llength $args]} { return [expr {[lindex $args 0] eq \"load\"}] }; return load }\n"
        "        command { if {[llength $args]} { return [expr {[lindex $args 0] eq \"load\"}] }; return load }\n"
        "        version { return [lindex $args 0] }\n"
        "        shell - shelltype { if {[llength $args]} { return [expr {[lindex $args 0] eq \"sh\"}] }; return sh }\n"
        "        flags { return 0 }\n"
        "        type { return Tcl }\n"
        "        loaded {\n"
        "            set r {}\n"
        "            foreach m [array names ::loaded] { if {$m eq [lindex $args 0] || [string match \"[lindex $args 0]/*\" $m]} { lappend r $m } }\n"
        "            return [join $r]\n"
        "        }\n"
        "        alias - symbols - tags - trace - tracepat - usergroups { return {} }\n"
        "        username { return [expr {[info exists ::genv(USER)] ? $::genv(USER) : \"\"}] }\n"
        "        default { return -code error \"module-info $what is not supported\" }\n"
        "    }\n"
        "}\n"
        "proc c_module {sub args} {\n"
        "    switch -- $sub {\n"
        "        load - add { return [c_deps load {*}$args] }\n"
        "        try-load - try-add { return [c_deps try-load {*}$args] }\n"
        "        load-any { return [c_deps load-any {*}$args] }\n"
        "        use {\n"
        "            set how prepend\n"
        "            set dirs {}\n"
        "            foreach a $args {\n"
        "                switch -- $a { -a - --append - -append { set how append } -p - --prepend - -prepend { set how prepend } default { lappend dirs $a } }\n"
        "            }\n"
        "            if {![llength $dirs]} { return -code error \"module use: no directory named\" }\n"
        "            if {$how eq \"prepend\"} { set dirs [lreverse $dirs] }\n"
        "            foreach d $dirs { c_path $how {module use} MODULEPATH $d }\n"
        "            return\n"
        "        }\n"
        "        unuse { foreach d $args { c_path remove {module unuse} MODULEPATH $d }; return }\n"
        "        unload - del - rm - remove {\n"
        "            foreach a $args { if {[is_loaded $a]} { return -code error \"module unload of the loaded '$a' in a modulefile is not supported\" } }\n"
        "            return\n"
        "        }\n"
        "        is-loaded { return [c_is_loaded {*}$args] }\n"
        "        list - avail - whatis - help - show - display - info-loaded { return }\n"
        "        default { return -code error \"module $sub is not supported in a modulefile evaluated by cudamod\" }\n"
        "    }\n"
        "}\n"
        "proc c_puts {args} {\n"
        "    set nonl 0\n"
        "    if {[lindex $args 0] eq \"-nonewline\"} { set args [lrange $args 1 end] }\n"
        "    if {[llength $args] == 2} {\n"
        "        lassign $args ch text\n"
        "        if {$ch eq \"stderr\"} { emit message [callline] $text; return }\n"
        "        if {$ch eq \"stdout\"} { refuse \"puts to stdout (shell code for the module tool)\" }\n"
        "        refuse \"puts to '$ch'\"\n"
        "    }\n"
        "    if {[llength $args] == 1} { refuse \"puts to stdout (shell code for the module tool)\" }\n"
        "    return -code error {wrong # args: should be \"puts ?-nonewline? ?channelId? string\"}\n"
        "}\n"
        "proc c_versioncmp {a b} {\n"
        "    if {[catch {package vcompare $a $b} r]} { return [string compare $a $b] }\n"
        "    return $r\n"
        "}\n"
        "proc c_uname {what} {\n"
        "    switch -- $what {\n"
        "        sysname { return $::tcl_platform(os) }\n"
        "        machine { return $::tcl_platform(machine) }\n"
        "        release { return $::tcl_platform(osVersion) }\n"
        "        nodename { return [info hostname] }\n"
        "        domain { return {} }\n"
        "        version { return {} }\n"
        "        default { return -code error \"uname $what is not supported\" }\n"
        "    }\n"
        "}\n"
        "proc c_report {kind msg} {\n"
        "    if {$kind eq \"error\"} { return -code error $msg }\n"
        "    emit message [callline] $msg\n"
        "    return\n"
        "}\n"
        "proc c_nothing {args} { return }\n"
        "# file: its string operations, and the tests of what exists; nothing that\n"
        "# opens, changes or follows anything.\n"
        "proc c_file {sub args} {\n"
        "    if {$sub in {join split tail dirname rootname extension pathtype separator exists isdirectory isfile}} {\n"
        "        return [file $sub {*}$args]\n"
        "    }\n"
        "    refuse \"file $sub\"\n"
        "}\n"
        "proc c_refuse {what args} { refuse $what }\n"
        "\n"
        "foreach {cmd target} {\n"
        "    setenv c_setenv pushenv c_pushenv unsetenv c_unsetenv\n"
        "    family c_family getenv c_getenv is-loaded c_is_loaded module-info c_module_info\n"
        "    module c_module puts c_puts versioncmp c_versioncmp uname c_uname\n"
        "} { $s alias $cmd $target }\n"
        "foreach {cmd kind} {prepend-path prepend append-path append remove-path remove} {\n"
        "    $s alias $cmd c_path $kind $cmd\n"
        "}\n"
        "foreach {cmd kind} {\n"
        "    prereq prereq prereq-any prereq prereq-all prereq-all conflict conflict\n"
        "    depends-on prereq-all always-load load\n"
        "} { $s alias $cmd c_deps $kind }\n"
        "$s alias reportError c_report error\n"
        "$s alias reportWarning c_report warning\n"
        "foreach cmd {\n"
        "    module-whatis module-version module-alias module-virtual module-tag module-hide\n"
        "    module-forbid set-alias unset-alias set-function unset-function complete uncomplete\n"
        "    x-resource add-property remove-property extensions require-fullname\n"
        "    modulepath-label chdir is-saved is-used is-avail getvariant lsb-release\n"
        "} { $s alias $cmd c_nothing }\n"
        "foreach cmd {system source-sh exit exec open socket source load unload cd pwd glob encoding fconfigure} {\n"
        "    $s alias $cmd c_refuse $cmd\n"
        "}\n"
        "$s alias file c_file\n"
        "# EM's commands found by `info commands` in a safe interpreter that are\n"
        "# none of a modulefile's business still run there, but can reach nothing.\n"
        "\n"
        "interp limit $s time -seconds [expr {[clock seconds] + 5}]\n"
        "interp limit $s command -value 50000000\n"
        "set rc [catch {$s invokehidden source $file} msg opts]\n"
        "if {$rc == 1} {\n"
        "    set line 0\n"
        "    set ei [dict get $opts -errorinfo]\n"
        "    set key \"(file \\\"$file\\\" line \"\n"
        "    set at [string last $key $ei]\n"
        "    if {$at >= 0} { scan [string range $ei [expr {$at + [string length $key]}] end] %d line }\n"
        "    puts \"error $line [hex $msg]\"\n"
        "    flush stdout\n"
        "    exit 1\n"
        "}\n"
        "if {$rc == 3} {\n"
        "    puts \"error 0 [hex {the modulefile ended with break: the module tool would not load it}]\"\n"
        "    flush stdout\n"
        "    exit 1\n"
        "}\n"
        "puts end\n"
        "flush stdout\n"
        "exit 0\n";

/* sh runs tclsh with the driver on its stdin (a here-document: the driver
 * is never a file anyone else could change); "$0" is tclsh, "$@" the
 * driver's arguments. */
static const char launcher[] =
        "ulimit -v " TCL_MEMORY_KIB " 2>/dev/null\n"
        "exec \"$0\" /dev/stdin \"$@\" <<'CUDAMOD_TCL_DRIVER_END'\n";

char *tcl_find_interpreter(char *const *env)
{
        static const char *const names[] = { "tclsh", "tclsh8.6", "tclsh9.0" };
        int err;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char *p = process_find_program(names[i], env, &err);

                if (p)
                        return p;
        }
        return NULL;
}

static int unhex_digit(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One field "x<hex>" → a string; NULL when malformed or holding a NUL. */
static char *field_decode(const char *s, size_t n)
{
        char *r;

        if (n < 1 || s[0] != 'x' || (n - 1) % 2)
                return NULL;
        r = xmalloc((n - 1) / 2 + 1);
        for (size_t i = 1, k = 0; i < n; i += 2, k++) {
                int hi = unhex_digit(s[i]), lo = unhex_digit(s[i + 1]);

                if (hi < 0 || lo < 0 || (hi | lo) == 0) {
                        free(r);
                        return NULL;
                }
                r[k] = (char)(hi << 4 | lo);
                r[k + 1] = '\0';
        }
        if (n == 1)
                r[0] = '\0';
        return r;
}

struct record {
        char kind[16];
        unsigned line;
        struct strv fields;
};

/* "KIND LINE xHEX..." → rec; false when malformed. */
static bool record_parse(char *line, struct record *rec)
{
        char *p = line, *end;
        unsigned long n;

        end = strchrnul(p, ' ');
        if ((size_t)(end - p) >= sizeof(rec->kind) || end == p)
                return false;
        memcpy(rec->kind, p, (size_t)(end - p));
        rec->kind[end - p] = '\0';
        if (!*end)
                return streq(rec->kind, "end");
        p = end + 1;
        errno = 0;
        n = strtoul(p, &end, 10);
        if (end == p || errno || n > UINT_MAX || (*end && *end != ' '))
                return false;
        rec->line = (unsigned)n;
        while (*end == ' ') {
                char *f;

                p = end + 1;
                end = strchrnul(p, ' ');
                f = field_decode(p, (size_t)(end - p));
                if (!f)
                        return false;
                strv_push(&rec->fields, f);
        }
        return !*end;
}

/* Record kinds, with the op each becomes and its fields: "n" name, "v"
 * value, "dnv" delimiter name value, "a" the fields are the args. */
static const struct {
        const char *kind;
        enum sandbox_op_kind op;
        const char *name; /* op->name for the dependency kinds */
        const char *fields;
} record_kinds[] = {
        { "setenv", SANDBOX_SETENV, NULL, "nv" },
        { "pushenv", SANDBOX_PUSHENV, NULL, "nv" },
        { "unsetenv", SANDBOX_UNSETENV, NULL, "n" },
        { "prepend", SANDBOX_PREPEND_PATH, NULL, "dnv" },
        { "append", SANDBOX_APPEND_PATH, NULL, "dnv" },
        { "remove", SANDBOX_REMOVE_PATH, NULL, "dnv" },
        { "family", SANDBOX_FAMILY, NULL, "v" },
        { "message", SANDBOX_MESSAGE, NULL, "v" },
        /* Environment Modules loads a missing requirement (its
         * auto_handling): prereq is one of, prereq-all each of. */
        { "prereq", SANDBOX_PREREQ, "prereq_any", "a" },
        { "prereq-all", SANDBOX_PREREQ, "prereq", "a" },
        { "load", SANDBOX_LOAD, "load", "a" },
        { "try-load", SANDBOX_LOAD, "try_load", "a" },
        { "load-any", SANDBOX_PREREQ, "prereq_any", "a" },
        { "conflict", SANDBOX_CONFLICT, NULL, "a" },
};

static bool record_to_op(struct record *rec, struct sandbox_op *op)
{
        for (size_t i = 0; i < ELEMENTSOF(record_kinds); i++) {
                const char *f = record_kinds[i].fields;

                if (!streq(rec->kind, record_kinds[i].kind))
                        continue;
                *op = (struct sandbox_op){ .kind = record_kinds[i].op, .line = rec->line };
                if (streq(f, "a")) {
                        if (!rec->fields.len)
                                return false;
                        op->name = record_kinds[i].name ? xstrdup(record_kinds[i].name) : NULL;
                        op->args = rec->fields;
                        rec->fields = (struct strv){ 0 };
                        return true;
                }
                if (rec->fields.len != strlen(f))
                        return false;
                for (size_t k = 0; f[k]; k++) {
                        char *v = rec->fields.items[k];

                        if (f[k] == 'd') {
                                if (strlen(v) != 1)
                                        return false;
                                op->delim = v[0];
                        } else if (f[k] == 'n') {
                                if (!*v)
                                        return false;
                                op->name = xstrdup(v);
                        } else
                                op->value = xstrdup(v);
                }
                if (op->kind == SANDBOX_FAMILY && !op->value)
                        return false;
                return true;
        }
        return false;
}

/* The records of out into ret; -EINVAL with d when the run failed (its
 * "error" record) or out is not what the driver writes. */
static int records_parse(struct strbuf *out, const char *path, struct sandbox_result *ret,
                         struct diag *d)
{
        struct sandbox_result r = { 0 };
        bool ended = false;
        int err = 0;

        for (char *line = out->buf; line && *line && !err;) {
                char *nl = strchr(line, '\n');
                struct record rec = { 0 };
                struct sandbox_op op;

                if (!nl) {
                        err = diag_set(d, -EINVAL, path, 0, 0,
                                       "the Tcl evaluation's output ends in the middle of a record");
                        break;
                }
                *nl = '\0';
                if (ended || !record_parse(line, &rec))
                        err = diag_set(d, -EINVAL, path, 0, 0,
                                       "the Tcl evaluation wrote something that is not a record");
                else if (streq(rec.kind, "end"))
                        ended = true;
                else if (streq(rec.kind, "error"))
                        err = diag_set(d, -EINVAL, path, rec.line, 0, "%s",
                                       rec.fields.len == 1 ? rec.fields.items[0] : "(no message)");
                else if (!record_to_op(&rec, &op))
                        err = diag_set(d, -EINVAL, path, rec.line, 0,
                                       "the Tcl evaluation wrote a malformed '%s' record", rec.kind);
                else if (op.name && strchr(op.name, '=')) {
                        /* "A=B" set to "x" would be the entry "A=B=x",
                         * variable A: refused, as the Lua sandbox does. */
                        err = diag_set(d, -EINVAL, path, rec.line, 0,
                                       "a variable name cannot hold '=' ('%s')", op.name);
                        free(op.name);
                        free(op.value);
                        strv_release(&op.args);
                } else {
                        r.ops = xreallocarray(r.ops, r.n_ops + 1, sizeof(*r.ops));
                        r.ops[r.n_ops++] = op;
                        r.bytes += (size_t)(nl - line);
                }
                strv_release(&rec.fields);
                line = nl + 1;
        }
        if (!err && !ended)
                err = diag_set(d, -EINVAL, path, 0, 0,
                               "the Tcl evaluation ended without finishing (its output was cut "
                               "short)");
        if (err < 0) {
                sandbox_result_release(&r);
                return err;
        }
        *ret = r;
        return 0;
}

int tcl_safe_eval(const struct modulefile *mf, const struct tcl_eval_options *o,
                  struct sandbox_result *ret, struct diag *d)
{
        /* tclsh's own environment holds only the load's, each entry under a
         * name of ours (CUDAMOD_E<i>=NAME=VALUE): none of the modulefiles'
         * variables by its own name (a TCL_LIBRARY there would choose the
         * init.tcl that tclsh runs), and no locale, so that the values
         * reach the driver as bytes (iso8859-1). Not on the command line:
         * any local user can read that while tclsh runs, and a caller's
         * environment holds tokens. */
        _cleanup_(strv_release) struct strv tcl_env = { 0 };
        _cleanup_(strv_release) struct strv argv = { 0 };
        _cleanup_(child_release) struct child c = { 0 };
        _cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
        unsigned max_calls = o->max_calls ? o->max_calls : SANDBOX_DEFAULT_MAX_CALLS;
        size_t max_bytes = o->max_bytes ? o->max_bytes : SANDBOX_DEFAULT_MEMORY;

        /* The records must fit the part of stdout that process_run keeps
         * (1 MiB). */
        if (max_bytes > TCL_MAX_RECORD_BYTES)
                max_bytes = TCL_MAX_RECORD_BYTES;
        int r;

        strbuf_addstr(&script, launcher);
        strbuf_addstr(&script, driver);
        strbuf_addstr(&script, "CUDAMOD_TCL_DRIVER_END\n");
        strv_add(&argv, "/bin/sh");
        strv_add(&argv, "-c");
        strv_add(&argv, script.buf);
        strv_add(&argv, o->tclsh);
        strv_add(&argv, mf->path);
        strv_add(&argv, mf->fullname);
        strv_add(&argv, mf->name);
        strv_add(&argv, mf->version);
        strv_push(&argv, xasprintf("%u", max_calls));
        strv_push(&argv, xasprintf("%zu", max_bytes));
        {
                size_t n = 0;

                for (char *const *e = o->environ; e && *e; e++)
                        if (strchr(*e, '='))
                                strv_push(&tcl_env, xasprintf("CUDAMOD_E%zu=%s", n++, *e));
        }
        r = process_run("/bin/sh", argv.items, tcl_env.items ? tcl_env.items : (char *[]){ NULL }, NULL,
                        TCL_TIMEOUT, &c);
        if (r < 0 || c.exec_errno)
                return diag_errorf(d, -ENOEXEC, "cannot run /bin/sh for '%s': %s", o->tclsh,
                                   strerror(r < 0 ? -r : c.exec_errno));
        if (c.timed_out)
                return diag_set(d, -EINVAL, mf->path, 0, 0,
                                "the Tcl evaluation took longer than %d s", TCL_TIMEOUT);
        r = records_parse(&c.out, mf->path, ret, d);
        if (r < 0 && !c.out.len) {
                _cleanup_free_ char *how = child_ending(&c);

                /* tclsh died before the driver said anything. */
                return diag_set(d, -EINVAL, mf->path, 0, 0, "the Tcl evaluation failed (%s)%s%s",
                                how, c.err.len ? ": " : "", c.err.buf);
        }
        return r;
}
