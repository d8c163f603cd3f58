/* lmod-sandbox.c: evaluate one Lmod (Lua) modulefile in a sandbox.
 *
 * Ownership across Lua calls: every lua_CFunction here first checks and
 * converts all its arguments on the Lua stack (which may raise, that is
 * longjmp), and only then allocates with the xmalloc family and appends the
 * finished op to the context, with no Lua call in between. So a Lua error
 * never leaks a half-built op, and no _cleanup_ variable lives across a call
 * that may longjmp. The context lives on sandbox_eval's C stack (reached
 * from Lua through lua_getextraspace); its ops go to *ret only after
 * lua_pcall returned 0, and are freed otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lmod-sandbox.h"
#include "strbuf.h"

#define SANDBOX_HOOK_STEP 1000
/* Work done inside library functions, which the count hook cannot see,
 * charged to the instruction budget: an instruction per this many bytes
 * allocated, per this many (worst-case) pattern-matching steps. */
#define SANDBOX_BYTES_PER_INSTRUCTION 64
#define SANDBOX_MATCH_STEPS_PER_INSTRUCTION 256
/* Lua call depth at which the hook ends the run with "stack overflow",
 * long before Lua's own limit (a million stack slots) would need more
 * memory than the cap allows. */
#define SANDBOX_MAX_DEPTH 20000

struct sandbox {
        const struct sandbox_options *o;
        const char *path;
        size_t own_used, mem_max;
        size_t *used; /* &own_used, or the options' mem_pool */
        size_t n_flushed; /* the recorded calls given to on_call */
        int call_failed;  /* on_call's error, or 0 */
        struct diag call_diag;
        bool mem_exceeded;
        unsigned long instructions, max_instructions;
        int hook_step;
        bool budget_exhausted;
        const char *exhausted; /* "instruction budget exhausted", "CPU time limit exceeded" */
        uint64_t cpu_deadline_ns;
        unsigned max_calls;
        size_t ops_alloc;
        unsigned exhausted_line; /* where a call limit was hit (0: unknown) */
        char limit_message[128];
        struct sandbox_result res;
};

static const char *const op_names[_SANDBOX_OP_MAX] = {
        [SANDBOX_SETENV] = "setenv",
        [SANDBOX_PUSHENV] = "pushenv",
        [SANDBOX_UNSETENV] = "unsetenv",
        [SANDBOX_PREPEND_PATH] = "prepend_path",
        [SANDBOX_APPEND_PATH] = "append_path",
        [SANDBOX_REMOVE_PATH] = "remove_path",
        [SANDBOX_FAMILY] = "family",
        [SANDBOX_DEPENDS_ON] = "depends_on",
        [SANDBOX_LOAD] = "load",
        [SANDBOX_PREREQ] = "prereq",
        [SANDBOX_CONFLICT] = "conflict",
        [SANDBOX_WHATIS] = "whatis",
        [SANDBOX_HELP] = "help",
        [SANDBOX_PROPERTY] = "add_property",
        [SANDBOX_MODULE_VERSION] = "module_version",
        [SANDBOX_MESSAGE] = "LmodMessage",
        [SANDBOX_WARNING] = "LmodWarning",
        [SANDBOX_SET_ALIAS] = "set_alias",
        [SANDBOX_SET_SHELL_FUNCTION] = "set_shell_function",
        [SANDBOX_UNLOAD] = "unload",
        [SANDBOX_EXTENSIONS] = "extensions",
        [SANDBOX_MODULE_ALIAS] = "module_alias",
        [SANDBOX_HIDE_VERSION] = "hide_version",
        [SANDBOX_HIDE_MODULEFILE] = "hide_modulefile",
};

const char *sandbox_op_kind_to_string(enum sandbox_op_kind k)
{
        if ((unsigned)k >= _SANDBOX_OP_MAX)
                return NULL;
        return op_names[k];
}

static void sandbox_op_release(struct sandbox_op *op)
{
        free(op->name);
        free(op->value);
        strv_release(&op->args);
}

void sandbox_result_release(struct sandbox_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_ops; i++)
                sandbox_op_release(&r->ops[i]);
        free(r->ops);
        r->ops = NULL;
        r->n_ops = 0;
}

/* --- the state's allocator, capped at mem_max bytes --- */

/* What the cap leaves (a state run inside this one's on_call may have
 * taken the pool past this one's cap). */
static size_t mem_left(const struct sandbox *s)
{
        return *s->used >= s->mem_max ? 0 : s->mem_max - *s->used;
}

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
        struct sandbox *s = ud;
        void *p;

        if (!ptr)
                osize = 0; /* Lua passes the object type here */
        if (nsize == 0) {
                free(ptr);
                *s->used -= osize;
                return NULL;
        }
        if (nsize > osize && nsize - osize > mem_left(s)) {
                s->mem_exceeded = true;
                return NULL; /* Lua raises a memory error */
        }
        if (nsize > osize) {
                /* Bytes allocated are work done (string.rep, .., gsub, …):
                 * charged to the instruction budget, which the hook then
                 * enforces. Past the budget nothing more is allocated. */
                s->instructions += (nsize - osize) / SANDBOX_BYTES_PER_INSTRUCTION;
                if (s->instructions >= s->max_instructions && s->hook_step) {
                        s->budget_exhausted = true;
                        if (!s->exhausted)
                                s->exhausted = "instruction budget exhausted";
                        return NULL;
                }
        }
        p = realloc(ptr, nsize);
        if (!p)
                return NULL;
        *s->used = *s->used - osize + nsize;
        return p;
}

/* --- helpers for the API functions (all may raise before allocating) --- */

static struct sandbox *sandbox_of(lua_State *L)
{
        return *(struct sandbox **)lua_getextraspace(L);
}

/* The line of the Lua code that called the running C function (0: none). */
static unsigned caller_line(lua_State *L)
{
        lua_Debug ar;

        if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar) && ar.currentline > 0)
                return (unsigned)ar.currentline;
        return 0;
}

/* A string argument (numbers converted in place) without NUL bytes. */
static const char *check_str(lua_State *L, int arg, size_t *ret_len)
{
        size_t len;
        const char *s = luaL_checklstring(L, arg, &len);

        if (memchr(s, '\0', len))
                luaL_argerror(L, arg, "string contains a NUL byte");
        if (ret_len)
                *ret_len = len;
        return s;
}

/* A variable name: a string (check_str) that is not empty and holds no
 * '=', which an environment entry cannot carry ("A=B" set to "x" is the
 * entry "A=B=x", variable A). Real Lmod (8.6) prints such a name raw into
 * the shell code it writes: `=x;`, `A=B=x; export A=B;`. */
static const char *check_var_name(lua_State *L, int arg)
{
        size_t len;
        const char *s = check_str(L, arg, &len);

        if (len == 0)
                luaL_argerror(L, arg, "the variable name is empty");
        if (memchr(s, '=', len))
                luaL_argerror(L, arg, "a variable name cannot hold '='");
        return s;
}

/* An already checked string on the stack: no conversion, cannot raise. */
static char *dup_arg(lua_State *L, int idx)
{
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);

        return xstrndup(s, len);
}

static _Noreturn void budget_raise(lua_State *L, struct sandbox *s, const char *why);

/* Give the calls recorded so far to on_call; its error ends the run (L
 * NULL: after it, no raising). */
static void flush_calls(lua_State *L, struct sandbox *s)
{
        while (s->n_flushed < s->res.n_ops) {
                const struct sandbox_op *op = &s->res.ops[s->n_flushed++];
                int r;

                if (!s->o->on_call || s->call_failed)
                        continue;
                r = s->o->on_call(s->o->userdata, op, &s->call_diag);
                if (r < 0) {
                        s->call_failed = r;
                        if (L)
                                budget_raise(L, s, "a modulefile call failed");
                }
        }
}

/* A new op, once its (checked) arguments are on the stack: the call is
 * counted and the bytes its copies will take charged to the memory cap
 * first, so that a loop of calls ends with an error, not with gigabytes
 * of copies outside the cap. Like the budget, either limit ends the run
 * for good: a pcall in the file cannot catch it and go on. */
static struct sandbox_op *push_op(lua_State *L, enum sandbox_op_kind kind, unsigned line)
{
        struct sandbox *s = sandbox_of(L);
        size_t bytes = sizeof(struct sandbox_op);
        struct sandbox_op *op;

        flush_calls(L, s);
        for (int i = 1; i <= lua_gettop(L); i++)
                if (lua_type(L, i) == LUA_TSTRING)
                        bytes += lua_rawlen(L, i) + 1 + sizeof(char *);
        if (s->res.n_ops >= s->max_calls || bytes > mem_left(s)) {
                /* As for the budget: every instruction fails from now on. */
                s->instructions = s->max_instructions;
                if (!s->exhausted)
                        s->exhausted_line = line;
        }
        if (s->res.n_ops >= s->max_calls) {
                snprintf(s->limit_message, sizeof(s->limit_message),
                         "more than %u calls to modulefile functions (setenv, prepend_path, …); "
                         "a modulefile makes tens",
                         s->max_calls);
                budget_raise(L, s, s->limit_message);
        }
        if (bytes > mem_left(s)) {
                s->mem_exceeded = true;
                budget_raise(L, s, "memory limit exceeded");
        }
        *s->used += bytes;
        s->res.bytes += bytes;
        if (s->res.n_ops == s->ops_alloc) {
                s->ops_alloc = s->ops_alloc ? s->ops_alloc * 2 : 16;
                s->res.ops = xreallocarray(s->res.ops, s->ops_alloc, sizeof(*s->res.ops));
        }
        op = &s->res.ops[s->res.n_ops++];
        *op = (struct sandbox_op){ .kind = kind, .delim = ':', .line = line };
        return op;
}

/* Check that every argument is a string; at least min of them. */
static int check_all_str(lua_State *L, int min)
{
        int n = lua_gettop(L);

        if (n < min)
                luaL_checklstring(L, n + 1, NULL); /* raises "bad argument … (string expected, got no value)" */
        for (int i = 1; i <= n; i++)
                check_str(L, i, NULL);
        return n;
}

/* Join all (checked) arguments into one string, which replaces them. */
static void concat_args(lua_State *L)
{
        check_all_str(L, 0);
        lua_concat(L, lua_gettop(L));
}

/* --- the Lmod API --- */

static int name_value_op(lua_State *L, enum sandbox_op_kind kind, bool value_may_be_false)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;
        bool cleared = false;

        if (kind == SANDBOX_PROPERTY)
                check_str(L, 1, NULL);
        else
                check_var_name(L, 1);
        if (value_may_be_false && lua_isboolean(L, 2) && !lua_toboolean(L, 2))
                cleared = true;
        else
                check_str(L, 2, NULL);
        op = push_op(L, kind, line);
        op->name = dup_arg(L, 1);
        op->value = cleared ? NULL : dup_arg(L, 2);
        return 0;
}

static int l_setenv(lua_State *L)
{
        return name_value_op(L, SANDBOX_SETENV, false);
}

/* pushenv("N", false) clears N: recorded with value NULL. */
static int l_pushenv(lua_State *L)
{
        return name_value_op(L, SANDBOX_PUSHENV, true);
}

static int l_add_property(lua_State *L)
{
        return name_value_op(L, SANDBOX_PROPERTY, false);
}

static int l_unsetenv(lua_State *L)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;

        check_var_name(L, 1);
        op = push_op(L, SANDBOX_UNSETENV, line);
        op->name = dup_arg(L, 1);
        return 0;
}

/* prepend_path("VAR", "val"[, "delim"]) or prepend_path{"VAR", "val",
 * delim=";", priority=N}. The priority is checked (a number) but not
 * recorded: struct sandbox_op has no place for it. */
static int path_op(lua_State *L, enum sandbox_op_kind kind)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;
        const char *delim = NULL;
        size_t delim_len = 0;

        if (lua_istable(L, 1)) {
                lua_settop(L, 1);
                lua_rawgeti(L, 1, 1);                        /* 2: name */
                lua_rawgeti(L, 1, 2);                        /* 3: value */
                lua_pushliteral(L, "delim");
                lua_rawget(L, 1);                            /* 4: delim */
                lua_pushliteral(L, "priority");
                lua_rawget(L, 1);                            /* 5: priority */
                if (!lua_isnil(L, 5) && !lua_isnumber(L, 5))
                        luaL_error(L, "bad argument 'priority' to '%s' (number expected, got %s)",
                                   op_names[kind], luaL_typename(L, 5));
                lua_remove(L, 1);
                lua_settop(L, 3); /* name, value, delim */
        }
        check_var_name(L, 1);
        check_str(L, 2, NULL);
        if (!lua_isnoneornil(L, 3)) {
                delim = check_str(L, 3, &delim_len);
                if (delim_len != 1)
                        luaL_argerror(L, 3, "the delimiter must be one character");
        }
        op = push_op(L, kind, line);
        op->name = dup_arg(L, 1);
        op->value = dup_arg(L, 2);
        if (delim)
                op->delim = delim[0];
        return 0;
}

static int l_prepend_path(lua_State *L)
{
        return path_op(L, SANDBOX_PREPEND_PATH);
}

static int l_append_path(lua_State *L)
{
        return path_op(L, SANDBOX_APPEND_PATH);
}

static int l_remove_path(lua_State *L)
{
        return path_op(L, SANDBOX_REMOVE_PATH);
}

static int value_op(lua_State *L, enum sandbox_op_kind kind)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;

        check_str(L, 1, NULL);
        op = push_op(L, kind, line);
        op->value = dup_arg(L, 1);
        return 0;
}

static int l_family(lua_State *L)
{
        return value_op(L, SANDBOX_FAMILY);
}

static int l_whatis(lua_State *L)
{
        return value_op(L, SANDBOX_WHATIS);
}

/* help(...) and LmodMessage(...): the texts joined without separator, as
 * Lmod does. */
static int joined_op(lua_State *L, enum sandbox_op_kind kind)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;

        concat_args(L);
        op = push_op(L, kind, line);
        op->value = dup_arg(L, -1);
        return 0;
}

static int l_help(lua_State *L)
{
        return joined_op(L, SANDBOX_HELP);
}

static int l_LmodMessage(lua_State *L)
{
        return joined_op(L, SANDBOX_MESSAGE);
}

/* Ops whose arguments are module names. For load and prereq, name holds
 * the Lmod function ("load", "always_load", "try_load"; "prereq",
 * "prereq_any") so the variants stay apart. */
static int args_op(lua_State *L, enum sandbox_op_kind kind, const char *fn, int min)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;
        int n = check_all_str(L, min);

        op = push_op(L, kind, line);
        if (fn)
                op->name = xstrdup(fn);
        for (int i = 1; i <= n; i++)
                strv_push(&op->args, dup_arg(L, i));
        return 0;
}

static int l_depends_on(lua_State *L)
{
        return args_op(L, SANDBOX_DEPENDS_ON, NULL, 1);
}

static int l_load(lua_State *L)
{
        return args_op(L, SANDBOX_LOAD, "load", 1);
}

static int l_always_load(lua_State *L)
{
        return args_op(L, SANDBOX_LOAD, "always_load", 1);
}

static int l_try_load(lua_State *L)
{
        return args_op(L, SANDBOX_LOAD, "try_load", 1);
}

static int l_prereq(lua_State *L)
{
        return args_op(L, SANDBOX_PREREQ, "prereq", 1);
}

static int l_prereq_any(lua_State *L)
{
        return args_op(L, SANDBOX_PREREQ, "prereq_any", 1);
}

static int l_conflict(lua_State *L)
{
        return args_op(L, SANDBOX_CONFLICT, NULL, 1);
}

static int l_module_version(lua_State *L)
{
        return args_op(L, SANDBOX_MODULE_VERSION, NULL, 1);
}

static int l_LmodWarning(lua_State *L)
{
        return joined_op(L, SANDBOX_WARNING);
}

/* set_alias("name", "text"): recorded, never run. The name must be one a
 * shell can define (Lmod 8.6 writes it raw into `alias NAME='…'`): letters,
 * digits and _ . - + : @ only, not starting with '-'. The text is kept as
 * it is; a shell gets it quoted. */
static const char *check_shell_name(lua_State *L, int arg, const char *what)
{
        size_t len;
        const char *s = check_str(L, arg, &len);

        if (len == 0 || s[0] == '-')
                luaL_argerror(L, arg, what);
        for (size_t i = 0; i < len; i++)
                if (!ascii_isalpha(s[i]) && !ascii_isdigit(s[i]) && !strchr("_.-+:@", s[i]))
                        luaL_argerror(L, arg, what);
        return s;
}

static int l_set_alias(lua_State *L)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;

        check_shell_name(L, 1, "not a shell alias name");
        check_str(L, 2, NULL);
        lua_settop(L, 2);
        op = push_op(L, SANDBOX_SET_ALIAS, line);
        op->name = dup_arg(L, 1);
        op->value = dup_arg(L, 2);
        return 0;
}

/* set_shell_function("name", "bash body"[, "csh body"]). */
static int l_set_shell_function(lua_State *L)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;
        bool csh;

        check_shell_name(L, 1, "not a shell function name");
        check_str(L, 2, NULL);
        csh = !lua_isnoneornil(L, 3);
        if (csh)
                check_str(L, 3, NULL);
        lua_settop(L, csh ? 3 : 2);
        op = push_op(L, SANDBOX_SET_SHELL_FUNCTION, line);
        op->name = dup_arg(L, 1);
        op->value = dup_arg(L, 2);
        if (csh)
                strv_push(&op->args, dup_arg(L, 3));
        return 0;
}

static int l_unload(lua_State *L)
{
        return args_op(L, SANDBOX_UNLOAD, "unload", 1);
}

/* extensions("numpy/1.12, scipy/1.1"[, …]): recorded (what `module
 * spider` lists); a load does nothing with it. */
static int l_extensions(lua_State *L)
{
        unsigned line = caller_line(L);
        struct sandbox_op *op;
        int n = check_all_str(L, 1);

        for (int i = n; i > 1; i--) {
                lua_pushliteral(L, ", ");
                lua_insert(L, i);
        }
        lua_concat(L, lua_gettop(L));
        op = push_op(L, SANDBOX_EXTENSIONS, line);
        op->value = dup_arg(L, -1);
        return 0;
}

/* module_alias("name", "target") in a modulerc. */
static int l_module_alias(lua_State *L)
{
        lua_settop(L, 2);
        return args_op(L, SANDBOX_MODULE_ALIAS, NULL, 2);
}

static int l_hide_version(lua_State *L)
{
        lua_settop(L, 1);
        return value_op(L, SANDBOX_HIDE_VERSION);
}

static int l_hide_modulefile(lua_State *L)
{
        lua_settop(L, 1);
        return value_op(L, SANDBOX_HIDE_MODULEFILE);
}

/* LmodError(...): the texts joined; raises "PATH:LINE: LmodError: msg". */
static int l_LmodError(lua_State *L)
{
        flush_calls(L, sandbox_of(L));
        concat_args(L);
        luaL_where(L, 1);
        lua_pushliteral(L, "LmodError: ");
        lua_rotate(L, -3, 2); /* where, prefix, msg */
        lua_concat(L, 3);
        return lua_error(L);
}

/* Lmod's pathJoin: the non-empty arguments joined with '/', repeated
 * slashes collapsed, a trailing slash removed (a lone "/" is kept). */
static int l_pathJoin(lua_State *L)
{
        int n = lua_gettop(L);
        luaL_Buffer b;
        size_t out = 0;
        char last = 0;

        for (int i = 1; i <= n; i++)
                if (!lua_isnoneornil(L, i) && !(lua_isboolean(L, i) && !lua_toboolean(L, i)))
                        check_str(L, i, NULL);
        luaL_buffinit(L, &b);
        for (int i = 1; i <= n; i++) {
                size_t len;
                const char *s;

                if (lua_type(L, i) != LUA_TSTRING && lua_type(L, i) != LUA_TNUMBER)
                        continue;
                s = lua_tolstring(L, i, &len);
                if (len == 0)
                        continue;
                if (out > 0 && last != '/') {
                        luaL_addchar(&b, '/');
                        out++;
                        last = '/';
                }
                for (size_t k = 0; k < len; k++) {
                        if (s[k] == '/' && last == '/')
                                continue;
                        luaL_addchar(&b, s[k]);
                        out++;
                        last = s[k];
                }
        }
        if (out > 1 && last == '/')
                luaL_buffsub(&b, 1);
        luaL_pushresult(&b);
        return 1;
}

static int l_myModuleName(lua_State *L)
{
        const char *n = sandbox_of(L)->o->module_name;

        lua_pushstring(L, n ? n : "");
        return 1;
}

static int l_myModuleVersion(lua_State *L)
{
        const char *v = sandbox_of(L)->o->module_version;

        lua_pushstring(L, v ? v : "");
        return 1;
}

static void push_full_name(lua_State *L, const struct sandbox_options *o);

static int l_myModuleFullName(lua_State *L)
{
        push_full_name(L, sandbox_of(L)->o);
        return 1;
}

static int l_myFileName(lua_State *L)
{
        const char *f = sandbox_of(L)->o->module_file;

        lua_pushstring(L, f ? f : "");
        return 1;
}

static void push_full_name(lua_State *L, const struct sandbox_options *o)
{
        const char *n = o->module_name ? o->module_name : "";

        if (o->module_version && o->module_version[0])
                lua_pushfstring(L, "%s/%s", n, o->module_version);
        else
                lua_pushstring(L, n);
}

static int l_myModuleUsrName(lua_State *L)
{
        const struct sandbox_options *o = sandbox_of(L)->o;

        if (o->module_usr_name)
                lua_pushstring(L, o->module_usr_name);
        else
                push_full_name(L, o);
        return 1;
}

/* requireFullName(): an error unless the module was asked for by its full
 * name (Lmod's e_RequireFullName). */
static int l_requireFullName(lua_State *L)
{
        const struct sandbox_options *o = sandbox_of(L)->o;
        const char *full;

        lua_settop(L, 0);
        push_full_name(L, o);
        full = lua_tostring(L, 1);
        if (!o->module_usr_name || streq(o->module_usr_name, full))
                return 0;
        luaL_where(L, 1);
        lua_pushfstring(L, "LmodError: Module \"%s\" must be loaded with the version specified, "
                           "e.g. \"%s\"",
                        o->module_name ? o->module_name : "", full);
        lua_concat(L, 2);
        return lua_error(L);
}

/* isDir(p): a directory, after symlinks; isFile(p): a regular file or a
 * symlink (Lmod's posix.stat "type" is that of the link). Read only. */
static int l_isDir(lua_State *L)
{
        struct stat st;
        const char *p = lua_isstring(L, 1) ? check_str(L, 1, NULL) : NULL;

        lua_pushboolean(L, p && stat(p, &st) == 0 && S_ISDIR(st.st_mode));
        return 1;
}

static int l_isFile(lua_State *L)
{
        struct stat st;
        const char *p = lua_isstring(L, 1) ? check_str(L, 1, NULL) : NULL;

        lua_pushboolean(L, p && lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)));
        return 1;
}

/* Whether the process's group named name (effective, supplementary). */
static bool in_group_named(const char *name)
{
        gid_t groups[256];
        int n = getgroups((int)ELEMENTSOF(groups) - 1, groups);

        if (n < 0)
                n = 0;
        groups[n++] = getegid();
        for (int i = 0; i < n; i++) {
                char buf[4096];
                struct group gr, *res = NULL;

                if (getgrgid_r(groups[i], &gr, buf, sizeof(buf), &res) == 0 && res &&
                    streq(res->gr_name, name))
                        return true;
        }
        return false;
}

/* userInGroup(...) / userInGroups(...): true when the process (the user
 * running cudamod) is root or in one of the named groups, which Lmod
 * reads from `groups`: the same list, without running anything. */
static int l_userInGroups(lua_State *L)
{
        int n = check_all_str(L, 0);
        bool yes = geteuid() == 0;

        for (int i = 1; i <= n && !yes; i++)
                yes = in_group_named(lua_tostring(L, i));
        lua_pushboolean(L, yes);
        return 1;
}

/* hierarchyA(fullName, levels): the levels of the hierarchy above the
 * modulefile, from its path, as Lmod computes them: the file's path
 * without ".lua" and without fullName at its end, cut into pieces of as
 * many components as fullName has, from the end ({"gcc/4.8"} for
 * …/Compiler/gcc/4.8/boost/1.55.lua). */
static int l_hierarchyA(lua_State *L)
{
        const char *file = sandbox_of(L)->o->module_file;
        const char *pkg = check_str(L, 1, NULL);
        lua_Integer levels = luaL_checkinteger(L, 2);
        char fn[4096], pk[4096];
        const char *comp[512];
        size_t n_comp = 0, n_entries = 1, len;
        char *hit;

        lua_newtable(L);
        if (levels < 1 || !file)
                return 1;
        /* Lmod: path_regularize (repeated and trailing slashes gone), and
         * ".lua" off the end of both. */
        len = 0;
        for (const char *p = file; *p && len + 1 < sizeof(fn); p++)
                if (!(*p == '/' && len && fn[len - 1] == '/'))
                        fn[len++] = *p;
        fn[len] = '\0';
        if (len > 4 && streq(fn + len - 4, ".lua"))
                fn[len -= 4] = '\0';
        len = 0;
        for (const char *p = pkg; *p && len + 1 < sizeof(pk); p++)
                if (!(*p == '/' && len && pk[len - 1] == '/'))
                        pk[len++] = *p;
        while (len > 1 && pk[len - 1] == '/')
                len--;
        pk[len] = '\0';
        if (len > 4 && streq(pk + len - 4, ".lua"))
                pk[len -= 4] = '\0';
        /* The first occurrence of pkg, cut when it ends the path. */
        hit = *pk ? strstr(fn, pk) : NULL;
        if (hit && hit + len == fn + strlen(fn))
                *hit = '\0';
        for (const char *p = pk; *p; p++)
                n_entries += *p == '/';
        for (char *p = fn; *p && n_comp < ELEMENTSOF(comp);) {
                char *end = strchrnul(p, '/');
                bool last = !*end;

                *end = '\0';
                if (*p)
                        comp[n_comp++] = p;
                if (last)
                        break;
                p = end + 1;
        }
        for (lua_Integer level = 1; level <= levels && level <= 64; level++) {
                size_t first = n_comp >= n_entries ? n_comp - n_entries : 0;
                int pieces = 0;

                for (size_t k = first; k < n_comp; k++) {
                        if (pieces++)
                                lua_pushliteral(L, "/");
                        lua_pushstring(L, comp[k]);
                }
                if (!pieces)
                        break;
                lua_concat(L, 2 * pieces - 1);
                lua_rawseti(L, -2, level);
                n_comp = first;
        }
        return 1;
}

static int l_mode(lua_State *L)
{
        const char *m = sandbox_of(L)->o->mode;

        lua_pushstring(L, m ? m : "load");
        return 1;
}

/* isloaded(NAME): the options' answer, after the calls so far are
 * applied; without one, nothing is loaded. */
static int l_isloaded(lua_State *L)
{
        struct sandbox *s = sandbox_of(L);
        const char *spec = check_str(L, 1, NULL);

        flush_calls(L, s);
        lua_pushboolean(L, s->o->isloaded && s->o->isloaded(s->o->userdata, spec));
        return 1;
}

/* Version-bound modifiers. They return a string that depends_on, load and
 * prereq record as one argument:
 *   between("cuda", "12", "12.999999") -> "between(cuda,12,12.999999)"
 *   atleast("cuda", "12")              -> "atleast(cuda,12)"
 *   latest("cuda")                     -> "latest(cuda)"
 * (a module name never holds '(', so the form cannot be mistaken). */
static int version_bound(lua_State *L, const char *fn, int nargs)
{
        check_all_str(L, nargs);
        lua_settop(L, nargs);
        lua_pushfstring(L, "%s(", fn);
        for (int i = 1; i <= nargs; i++) {
                lua_pushvalue(L, i);
                lua_pushstring(L, i < nargs ? "," : ")");
        }
        lua_concat(L, 2 * nargs + 1);
        return 1;
}

static int l_between(lua_State *L)
{
        return version_bound(L, "between", 3);
}

static int l_atleast(lua_State *L)
{
        return version_bound(L, "atleast", 2);
}

static int l_latest(lua_State *L)
{
        return version_bound(L, "latest", 1);
}

/* os.getenv(name): from the options' environ list, or the process's. */
static int l_getenv(lua_State *L)
{
        const struct sandbox_options *o = sandbox_of(L)->o;
        size_t len;
        const char *name = check_str(L, 1, &len);
        const char *v = NULL;

        flush_calls(L, sandbox_of(L));
        if (o->getenv)
                v = o->getenv(o->userdata, name);
        else if (o->environ) {
                for (const char *const *e = o->environ; *e; e++)
                        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') {
                                v = *e + len + 1;
                                break;
                        }
        } else
                v = getenv(name);
        if (v)
                lua_pushstring(L, v);
        else
                lua_pushnil(L);
        return 1;
}

/* io.open(file[, "r"]): only the loaded NVIDIA driver's version files,
 * which the cuda module's driver check reads (config driver_check), read
 * only, below the options' sysroot. What it returns is the file's first 4
 * KiB, read at once (so nothing stays open across Lua calls), as an object
 * with read("*l"/"l": the first line, "*a"/"a": all) and close(); a file
 * that is not there (or not a regular file) gives nil and a message, as
 * Lmod's io.open does. */
static const char *const readable_files[] = { "/proc/driver/nvidia/version", "/sys/module/nvidia/version" };

static int l_file_read(lua_State *L)
{
        size_t len;
        const char *text = lua_tolstring(L, lua_upvalueindex(1), &len);
        const char *fmt = luaL_optstring(L, 2, "l");
        const char *nl;

        if (*fmt == '*')
                fmt++;
        if (*fmt == 'a') {
                lua_pushlstring(L, text, len);
                return 1;
        }
        if (*fmt != 'l' && *fmt != 'L')
                return luaL_argerror(L, 2, "only \"*l\" and \"*a\" are read in a modulefile");
        if (!len) {
                lua_pushnil(L);
                return 1;
        }
        nl = memchr(text, '\n', len);
        lua_pushlstring(L, text, nl ? (size_t)(nl - text) + (*fmt == 'L') : len);
        return 1;
}

static int l_file_close(lua_State *L)
{
        lua_pushboolean(L, 1);
        return 1;
}

static int l_io_open(lua_State *L)
{
        const struct sandbox_options *o = sandbox_of(L)->o;
        size_t len;
        const char *file = check_str(L, 1, &len);
        const char *mode = luaL_optstring(L, 2, "r");
        const char *root = o->sysroot && *o->sysroot ? o->sysroot : "";
        char path[PATH_MAX], buf[4096];
        bool known = false;
        ssize_t n = -1;
        struct stat st;
        int fd;

        for (size_t i = 0; i < ELEMENTSOF(readable_files); i++)
                known = known || streq(file, readable_files[i]);
        if (!known || !(streq(mode, "r") || streq(mode, "rb"))) {
                luaL_where(L, 1);
                lua_pushfstring(L, "io.open(\"%s\", \"%s\") is not available in a modulefile (cudamod "
                                   "evaluates modulefiles in a sandbox: io.open reads only the NVIDIA "
                                   "driver's version files)", file, mode);
                lua_concat(L, 2);
                return lua_error(L);
        }
        if ((size_t)snprintf(path, sizeof(path), "%s%s", root, file) >= sizeof(path))
                fd = -1, errno = ENAMETOOLONG;
        else
                fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
                n = read(fd, buf, sizeof(buf));
        else if (fd >= 0)
                errno = EINVAL;
        if (fd >= 0)
                close(fd);
        if (n < 0) {
                lua_pushnil(L);
                lua_pushfstring(L, "%s: %s", file, strerror(errno));
                return 2;
        }
        lua_newtable(L);
        lua_pushlstring(L, buf, (size_t)n);
        lua_pushcclosure(L, l_file_read, 1);
        lua_setfield(L, -2, "read");
        lua_pushcfunction(L, l_file_close);
        lua_setfield(L, -2, "close");
        return 1;
}

static int l_print(lua_State *L)
{
        (void)L;
        return 0;
}

static const luaL_Reg lmod_api[] = {
        { "setenv", l_setenv },
        { "pushenv", l_pushenv },
        { "unsetenv", l_unsetenv },
        { "prepend_path", l_prepend_path },
        { "append_path", l_append_path },
        { "remove_path", l_remove_path },
        { "family", l_family },
        { "depends_on", l_depends_on },
        { "load", l_load },
        { "always_load", l_always_load },
        { "try_load", l_try_load },
        { "prereq", l_prereq },
        { "prereq_any", l_prereq_any },
        { "conflict", l_conflict },
        { "whatis", l_whatis },
        { "help", l_help },
        { "add_property", l_add_property },
        { "module_version", l_module_version },
        { "LmodError", l_LmodError },
        { "LmodMessage", l_LmodMessage },
        { "LmodWarning", l_LmodWarning },
        { "set_alias", l_set_alias },
        { "set_shell_function", l_set_shell_function },
        { "unload", l_unload },
        { "always_unload", l_unload },
        { "extensions", l_extensions },
        { "module_alias", l_module_alias },
        { "hide_version", l_hide_version },
        { "hide_modulefile", l_hide_modulefile },
        { "myFileName", l_myFileName },
        { "myModuleUsrName", l_myModuleUsrName },
        { "requireFullName", l_requireFullName },
        { "isDir", l_isDir },
        { "isFile", l_isFile },
        { "userInGroup", l_userInGroups },
        { "userInGroups", l_userInGroups },
        { "hierarchyA", l_hierarchyA },
        { "pathJoin", l_pathJoin },
        { "myModuleName", l_myModuleName },
        { "myModuleVersion", l_myModuleVersion },
        { "myModuleFullName", l_myModuleFullName },
        { "mode", l_mode },
        { "isloaded", l_isloaded },
        { "between", l_between },
        { "atleast", l_atleast },
        { "latest", l_latest },
        { "print", l_print }, /* a no-op: output is recorded nowhere */
        { NULL, NULL },
};

static const char *const os_clock_functions[] = { "date", "time", "clock", "difftime" };

static const char *const safe_base[] = {
        "assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber",
        "tostring", "type", "xpcall", "rawequal", "rawget", "rawlen", "rawset",
        "setmetatable", "getmetatable",
};

/* Globals a modulefile may name but cannot have: reading one is an error
 * that says so, rather than Lua's "attempt to call a nil value". Other
 * unknown globals read as nil, as in Lmod. */
static const char *const unavailable_globals[] = {
        "require", "dofile", "loadfile", "loadstring", "debug", "package",
        "collectgarbage", "module",
};

/* __index of the environment (upvalue "") and of os (upvalue "os."). */
static int l_unavailable(lua_State *L)
{
        const char *prefix = lua_tostring(L, lua_upvalueindex(1));
        const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
        bool blocked = key && *prefix;

        for (size_t i = 0; key && !blocked && i < ELEMENTSOF(unavailable_globals); i++)
                blocked = streq(key, unavailable_globals[i]);
        if (!blocked)
                return 0;
        luaL_where(L, 1);
        lua_pushfstring(L, "%s%s is not available in a modulefile (cudamod evaluates modulefiles "
                           "in a sandbox: no io but io.open of the driver's version, no os but os.getenv "
                           "and the clock, no require or loadstring)",
                        prefix, key);
        lua_concat(L, 2);
        return lua_error(L);
}

static void set_unavailable_meta(lua_State *L, int table, const char *prefix)
{
        lua_newtable(L);
        lua_pushstring(L, prefix);
        lua_pushcclosure(L, l_unavailable, 1);
        lua_setfield(L, -2, "__index");
        lua_setmetatable(L, table);
}

/* A shallow copy of the library table global[lib] into env[lib]. */
static void copy_lib(lua_State *L, int env, const char *lib)
{
        lua_newtable(L);
        lua_getglobal(L, lib);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, -5);
        }
        lua_pop(L, 1);
        lua_setfield(L, env, lib);
}

/* --- library functions whose work the count hook cannot see --- */

/* Charge cost instructions; past the budget, end the run. */
static void charge(lua_State *L, double cost)
{
        struct sandbox *s = sandbox_of(L);

        if (s->instructions >= s->max_instructions ||
            cost >= (double)(s->max_instructions - s->instructions)) {
                s->instructions = s->max_instructions;
                budget_raise(L, s, "instruction budget exhausted");
        }
        s->instructions += (unsigned long)cost;
}

/* A worst-case count of the steps of a Lua pattern match over n bytes:
 * each start position (one when anchored), times n + 1 for each item that
 * can backtrack over the subject (x* x+ x- %b %1), plus a plain scan. The
 * matcher has no hook, so `("a"):rep(3000):find(".-.-.-.-b")` would run for
 * hours; priced here, it ends with "instruction budget exhausted". */
static double pattern_steps(const char *p, size_t m, size_t n, bool anchor_allowed)
{
        bool anchored = anchor_allowed && m > 0 && p[0] == '^';
        double steps = anchored ? 1 : (double)n + 1;
        unsigned k = 0;

        for (size_t i = anchored; i < m; i++) {
                if (p[i] == '%' && i + 1 < m) {
                        char c = p[++i];
                        if (c == 'b' || ascii_isdigit(c))
                                k++;
                        if (c == 'b')
                                i += 2;
                } else if (p[i] == '[') {
                        /* Skip the set: a leading ^ and ] are literal, %x escapes. */
                        i++;
                        if (i < m && p[i] == '^')
                                i++;
                        if (i < m && p[i] == ']')
                                i++;
                        while (i < m && p[i] != ']')
                                i += p[i] == '%' ? 2 : 1;
                } else if (p[i] == '*' || p[i] == '+' || p[i] == '-') {
                        k++;
                }
        }
        for (unsigned j = 0; j < k && steps < 1e30; j++)
                steps *= (double)n + 1;
        return steps + (double)n * (double)m;
}

enum wrapped {
        WRAP_FIND,
        WRAP_MATCH,
        WRAP_GMATCH,
        WRAP_GSUB,
        WRAP_REP,
        WRAP_TABLE_N,    /* insert, remove: the length of table 1 */
        WRAP_TABLE_SORT, /* n log n of table 1 */
        WRAP_TABLE_MOVE, /* e - f + 1 (arguments 2, 3) */
        WRAP_TABLE_RANGE, /* concat, unpack: j - i + 1, j defaulting to the length */
        WRAP_SETMETATABLE, /* refuses __gc */
};

/* Price the call, then call the library function (upvalue 1) with the
 * same arguments. */
static int l_wrapped(lua_State *L)
{
        enum wrapped w = (enum wrapped)lua_tointeger(L, lua_upvalueindex(2));
        struct sandbox *s = sandbox_of(L);
        size_t n = 0, m = 0;
        const char *p;
        double cost = 0;

        switch (w) {
        case WRAP_SETMETATABLE:
                /* Lua runs finalizers with hooks off: a __gc could loop
                 * for ever, in the run or in lua_close. Modulefiles have
                 * no use for them. */
                lua_pushliteral(L, "__gc");
                if (lua_type(L, 2) == LUA_TTABLE && lua_rawget(L, 2) != LUA_TNIL)
                        return luaL_error(L, "__gc metamethods are not available in a modulefile");
                lua_settop(L, 2);
                break;
        case WRAP_FIND:
        case WRAP_MATCH:
        case WRAP_GMATCH:
        case WRAP_GSUB: {
                lua_Integer init;
                luaL_checklstring(L, 1, &n);
                p = luaL_checklstring(L, 2, &m);
                if (w == WRAP_FIND || w == WRAP_MATCH) {
                        init = luaL_optinteger(L, 3, 1);
                        if (init > 1 && (lua_Unsigned)init <= n)
                                n -= (size_t)init - 1;
                }
                if (w == WRAP_FIND && lua_toboolean(L, 4))
                        cost = (double)n * (double)m;
                else
                        cost = pattern_steps(p, m, n, w != WRAP_GMATCH);
                cost /= SANDBOX_MATCH_STEPS_PER_INSTRUCTION;
                break;
        }
        case WRAP_REP: {
                size_t sep = 0;
                lua_Integer count;
                double total;
                luaL_checklstring(L, 1, &n);
                count = luaL_checkinteger(L, 2);
                luaL_optlstring(L, 3, "", &sep);
                if (count <= 0 || n + sep == 0) {
                        /* Lua would loop count times to build "". */
                        lua_pushliteral(L, "");
                        return 1;
                }
                total = (double)count * (double)n + ((double)count - 1) * (double)sep;
                /* Over the memory limit, the allocation of the result
                 * fails before any copying: a memory error, as it should. */
                if (total <= (double)s->mem_max)
                        cost = total / SANDBOX_BYTES_PER_INSTRUCTION;
                break;
        }
        case WRAP_TABLE_N:
        case WRAP_TABLE_SORT:
                /* luaL_len: the functions use # with its __len. */
                cost = (double)luaL_len(L, 1);
                if (w == WRAP_TABLE_SORT)
                        for (double k = cost; k > 1; k /= 2)
                                cost += (double)luaL_len(L, 1);
                break;
        case WRAP_TABLE_MOVE:
                cost = (double)luaL_checkinteger(L, 3) - (double)luaL_checkinteger(L, 2) + 1;
                break;
        case WRAP_TABLE_RANGE: {
                int first = w == WRAP_TABLE_RANGE && lua_tointeger(L, lua_upvalueindex(3)) ? 3 : 2;
                lua_Integer i = luaL_optinteger(L, first, 1);
                lua_Integer j = lua_isnoneornil(L, first + 1) ? luaL_len(L, 1)
                                                              : luaL_checkinteger(L, first + 1);
                cost = (double)j - (double)i + 1;
                break;
        }
        }
        if (cost > 0)
                charge(L, cost);
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
        return lua_gettop(L);
}

/* Replace lib[name] (the table on top of the stack) by its priced wrapper. */
static void wrap(lua_State *L, const char *name, enum wrapped w, int range_first)
{
        lua_getfield(L, -1, name);
        lua_pushinteger(L, w);
        lua_pushinteger(L, range_first);
        lua_pushcclosure(L, l_wrapped, 3);
        lua_setfield(L, -2, name);
}

static void wrap_libraries(lua_State *L)
{
        lua_getglobal(L, LUA_STRLIBNAME); /* also the strings' __index */
        wrap(L, "find", WRAP_FIND, 0);
        wrap(L, "match", WRAP_MATCH, 0);
        wrap(L, "gmatch", WRAP_GMATCH, 0);
        wrap(L, "gsub", WRAP_GSUB, 0);
        wrap(L, "rep", WRAP_REP, 0);
        lua_pop(L, 1);
        lua_pushglobaltable(L);
        wrap(L, "setmetatable", WRAP_SETMETATABLE, 0);
        lua_pop(L, 1);
        lua_getglobal(L, LUA_TABLIBNAME);
        wrap(L, "insert", WRAP_TABLE_N, 0);
        wrap(L, "remove", WRAP_TABLE_N, 0);
        wrap(L, "sort", WRAP_TABLE_SORT, 0);
        wrap(L, "move", WRAP_TABLE_MOVE, 0);
        wrap(L, "concat", WRAP_TABLE_RANGE, 1); /* concat(t, sep, i, j) */
        wrap(L, "unpack", WRAP_TABLE_RANGE, 0); /* unpack(t, i, j) */
        lua_pop(L, 1);
}

/* Runs under lua_pcall: open the libraries, build the environment, leave
 * it on the stack. */
static int build_env(lua_State *L)
{
        int env;

        luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
        luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
        luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
        luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
        lua_settop(L, 0);
        /* Also from the string metatable's __index ("").dump. */
        lua_getglobal(L, LUA_STRLIBNAME);
        lua_pushnil(L);
        lua_setfield(L, -2, "dump");
        lua_settop(L, 0);
        wrap_libraries(L);

        lua_newtable(L);
        env = lua_gettop(L);
        for (size_t i = 0; i < ELEMENTSOF(safe_base); i++) {
                lua_getglobal(L, safe_base[i]);
                lua_setfield(L, env, safe_base[i]);
        }
        copy_lib(L, env, LUA_STRLIBNAME);
        copy_lib(L, env, LUA_TABLIBNAME);
        copy_lib(L, env, LUA_MATHLIBNAME);
        lua_getfield(L, env, LUA_TABLIBNAME);
        lua_getfield(L, -1, "unpack");
        lua_setfield(L, env, "unpack");
        lua_pop(L, 1);

        lua_newtable(L);
        lua_pushcfunction(L, l_getenv);
        lua_setfield(L, -2, "getenv");
        /* The os library's clock functions (no execute, exit, remove,
         * rename, tmpname, setlocale). */
        luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
        for (size_t i = 0; i < ELEMENTSOF(os_clock_functions); i++) {
                lua_getfield(L, -1, os_clock_functions[i]);
                lua_setfield(L, -3, os_clock_functions[i]);
        }
        lua_pop(L, 1);
        set_unavailable_meta(L, lua_gettop(L), "os.");
        lua_setfield(L, env, "os");
        /* io: only io.open of the driver's version files (l_io_open). */
        lua_newtable(L);
        lua_pushcfunction(L, l_io_open);
        lua_setfield(L, -2, "open");
        set_unavailable_meta(L, lua_gettop(L), "io.");
        lua_setfield(L, env, "io");
        set_unavailable_meta(L, env, "");

        luaL_setfuncs(L, lmod_api, 0);
        lua_pushvalue(L, env);
        lua_setfield(L, env, "_G");
        return 1;
}

/* --- running --- */

static uint64_t cpu_time_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void budget_hook(lua_State *L, lua_Debug *ar)
{
        struct sandbox *s = sandbox_of(L);
        lua_Debug deep;

        (void)ar;
        s->instructions += (unsigned long)s->hook_step;
        if (s->instructions < s->max_instructions) {
                /* A call depth of more than 1000 levels can only have been
                 * reached since the last hook, so the check is cheap: the
                 * walk stops at the actual depth. */
                if (lua_getstack(L, SANDBOX_MAX_DEPTH, &deep)) {
                        luaL_where(L, 0);
                        lua_pushliteral(L, "stack overflow");
                        lua_concat(L, 2);
                        lua_error(L);
                }
                /* A single instruction can be slow (== on two long
                 * strings), so time is bounded too. */
                if (cpu_time_ns() > s->cpu_deadline_ns)
                        budget_raise(L, s, "CPU time limit exceeded");
                return;
        }
        budget_raise(L, s, "instruction budget exhausted");
}

static _Noreturn void budget_raise(lua_State *L, struct sandbox *s, const char *why)
{
        if (!s->exhausted)
                s->exhausted = why;
        if (!s->budget_exhausted || s->hook_step != 1) {
                s->budget_exhausted = true;
                /* From now on every instruction fails, so a pcall in the
                 * file cannot swallow the error and go on. */
                s->hook_step = 1;
                lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        }
        lua_pushstring(L, s->exhausted);
        lua_error(L);
        abort(); /* lua_error does not return */
}

/* The message handler: keeps the message as it is. */
static int message_handler(lua_State *L)
{
        if (lua_type(L, 1) == LUA_TSTRING)
                return 1;
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
                return 1;
        lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        return 1;
}

/* Whether prefix is how Lua names path in a message: path itself, or
 * "..." and its tail when path is longer than LUA_IDSIZE. */
static bool names_path(const char *prefix, size_t n, const char *path)
{
        size_t plen = strlen(path);

        if (n == plen && strncmp(prefix, path, n) == 0)
                return true;
        return n > 3 && strncmp(prefix, "...", 3) == 0 && plen >= n - 3 &&
               strncmp(prefix + 3, path + plen - (n - 3), n - 3) == 0;
}

/* Turn "PATH:N: rest" into file, line and message; anything else is the
 * message as it is. */
static int set_lua_diag(struct diag *d, const char *path, const char *msg)
{
        for (const char *c = strchr(msg, ':'); c; c = strchr(c + 1, ':')) {
                const char *p = c + 1;
                unsigned long line = 0;

                if (!ascii_isdigit(*p))
                        continue;
                while (ascii_isdigit(*p) && line < UINT32_MAX)
                        line = line * 10 + (unsigned long)(*p++ - '0');
                if (*p != ':' || !names_path(msg, (size_t)(c - msg), path))
                        continue;
                p++;
                if (*p == ' ')
                        p++;
                return diag_set(d, -EINVAL, path, (unsigned)line, 0, "%s", p);
        }
        return diag_set(d, -EINVAL, path, 0, 0, "%s", msg);
}

static int fail_status(struct sandbox *s, lua_State *L, int status, const char *text, size_t len,
                       struct diag *d)
{
        const char *msg;

        if (s->call_failed) {
                if (d) {
                        diag_release(d);
                        *d = s->call_diag;
                } else
                        diag_release(&s->call_diag);
                s->call_diag = (struct diag){ 0 };
                return s->call_failed;
        }
        if (s->mem_exceeded && (status == LUA_ERRMEM || status == LUA_ERRERR))
                return diag_set(d, -EINVAL, s->path, s->exhausted_line, 0, "memory limit exceeded");
        /* Past the budget, allocations fail too: a memory error then. */
        if (s->budget_exhausted)
                return diag_set(d, -EINVAL, s->path, s->exhausted_line, 0, "%s",
                                s->exhausted ? s->exhausted : "instruction budget exhausted");
        if (status == LUA_ERRMEM)
                return diag_set(d, -EINVAL, s->path, 0, 0, "memory limit exceeded");
        if (status == LUA_ERRSYNTAX && len > 0 && text[0] == LUA_SIGNATURE[0])
                return diag_set(d, -EINVAL, s->path, 0, 0, "binary chunks are not accepted");
        msg = lua_tostring(L, -1);
        return set_lua_diag(d, s->path, msg ? msg : "unknown Lua error");
}

int sandbox_eval(const char *text, size_t len, const char *path, const struct sandbox_options *o,
                 struct sandbox_result *ret, struct diag *d)
{
        static const struct sandbox_options no_options = { 0 };
        struct sandbox s = {
                .o = o ? o : &no_options,
                .path = path ? path : "?",
        };
        _cleanup_free_ char *chunkname = NULL;
        lua_State *L;
        int status, r;

        s.mem_max = s.o->max_memory ? s.o->max_memory : SANDBOX_DEFAULT_MEMORY;
        s.used = s.o->mem_pool ? s.o->mem_pool : &s.own_used;

        s.max_instructions = s.o->max_instructions ? s.o->max_instructions : SANDBOX_DEFAULT_INSTRUCTIONS;
        s.max_calls = s.o->max_calls ? s.o->max_calls : SANDBOX_DEFAULT_MAX_CALLS;

        if (len >= strlen(LUA_SIGNATURE) && memcmp(text, LUA_SIGNATURE, strlen(LUA_SIGNATURE)) == 0)
                return diag_set(d, -EINVAL, s.path, 0, 0, "binary chunks are not accepted");

        L = lua_newstate(sandbox_alloc, &s);
        if (!L)
                return diag_set(d, -EINVAL, s.path, 0, 0, "memory limit exceeded");
        *(struct sandbox **)lua_getextraspace(L) = &s;

        lua_pushcfunction(L, message_handler); /* 1 */
        lua_pushcfunction(L, build_env);
        status = lua_pcall(L, 0, 1, 1);        /* 2: env */
        if (status != LUA_OK) {
                r = fail_status(&s, L, status, text, len, d);
                goto out;
        }

        chunkname = xasprintf("@%s", s.path);
        status = luaL_loadbufferx(L, text, len, chunkname, "t"); /* 3: chunk */
        if (status != LUA_OK) {
                r = fail_status(&s, L, status, text, len, d);
                goto out;
        }
        lua_pushvalue(L, 2);
        if (!lua_setupvalue(L, 3, 1)) /* _ENV */
                lua_pop(L, 1);

        s.hook_step = s.max_instructions < SANDBOX_HOOK_STEP ? (int)s.max_instructions : SANDBOX_HOOK_STEP;
        s.cpu_deadline_ns = cpu_time_ns() +
                            (uint64_t)(s.o->max_cpu_ms ? s.o->max_cpu_ms : SANDBOX_DEFAULT_CPU_MS) * 1000000u;
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, s.hook_step);
        status = lua_pcall(L, 0, 0, 1);
        if (status != LUA_OK) {
                r = fail_status(&s, L, status, text, len, d);
                goto out;
        }
        flush_calls(NULL, &s);
        if (s.call_failed) {
                r = fail_status(&s, L, status, text, len, d);
                goto out;
        }

        *ret = s.res;
        s.res = (struct sandbox_result){ 0 };
        r = 0;
out:
        /* Finalizers (__gc) run in lua_close: with the budget spent, each
         * fails at its first instruction instead of running unbounded. */
        s.instructions = s.max_instructions;
        s.budget_exhausted = true;
        s.hook_step = 1;
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        lua_close(L);
        /* A failed run's calls leave the pool; a result's stay in it
         * until the caller is done. */
        if (s.o->mem_pool && r < 0)
                *s.used -= s.res.bytes;
        sandbox_result_release(&s.res);
        diag_release(&s.call_diag);
        return r;
}
