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
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>
#include <stdlib.h>

#include "lmod-sandbox.h"
#include "strbuf.h"

#define SANDBOX_DEFAULT_INSTRUCTIONS 10000000UL
#define SANDBOX_DEFAULT_MEMORY ((size_t)64 << 20)
#define SANDBOX_HOOK_STEP 1000
/* Lua call depth at which the hook ends the run with "stack overflow",
 * long before Lua's own limit (a million stack slots) would need more
 * memory than the cap allows. */
#define SANDBOX_MAX_DEPTH 20000

struct sandbox {
        const struct sandbox_options *o;
        const char *path;
        size_t mem_used, mem_max;
        bool mem_exceeded;
        unsigned long instructions, max_instructions;
        int hook_step;
        bool budget_exhausted;
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

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
        struct sandbox *s = ud;
        void *p;

        if (!ptr)
                osize = 0; /* Lua passes the object type here */
        if (nsize == 0) {
                free(ptr);
                s->mem_used -= osize;
                return NULL;
        }
        if (nsize > osize && nsize - osize > s->mem_max - s->mem_used) {
                s->mem_exceeded = true;
                return NULL; /* Lua raises a memory error */
        }
        p = realloc(ptr, nsize);
        if (!p)
                return NULL;
        s->mem_used = s->mem_used - osize + nsize;
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

/* An already checked string on the stack: no conversion, cannot raise. */
static char *dup_arg(lua_State *L, int idx)
{
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);

        return xstrndup(s, len);
}

static struct sandbox_op *push_op(lua_State *L, enum sandbox_op_kind kind, unsigned line)
{
        struct sandbox *s = sandbox_of(L);
        struct sandbox_op *op;

        s->res.ops = xreallocarray(s->res.ops, s->res.n_ops + 1, sizeof(*s->res.ops));
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

        check_str(L, 1, NULL);
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

        check_str(L, 1, NULL);
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
        check_str(L, 1, NULL);
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

/* LmodError(...): the texts joined; raises "PATH:LINE: LmodError: msg". */
static int l_LmodError(lua_State *L)
{
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

static int l_myModuleFullName(lua_State *L)
{
        const struct sandbox_options *o = sandbox_of(L)->o;
        const char *n = o->module_name ? o->module_name : "";

        if (o->module_version && o->module_version[0])
                lua_pushfstring(L, "%s/%s", n, o->module_version);
        else
                lua_pushstring(L, n);
        return 1;
}

static int l_mode(lua_State *L)
{
        const char *m = sandbox_of(L)->o->mode;

        lua_pushstring(L, m ? m : "load");
        return 1;
}

/* Nothing is loaded in the sandbox. */
static int l_isloaded(lua_State *L)
{
        check_str(L, 1, NULL);
        lua_pushboolean(L, 0);
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

        if (o->environ) {
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

static const char *const safe_base[] = {
        "assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber",
        "tostring", "type", "xpcall", "rawequal", "rawget", "rawlen", "rawset",
        "setmetatable", "getmetatable",
};

/* Globals a modulefile may name but cannot have: reading one is an error
 * that says so, rather than Lua's "attempt to call a nil value". Other
 * unknown globals read as nil, as in Lmod. */
static const char *const unavailable_globals[] = {
        "io", "require", "dofile", "loadfile", "loadstring", "debug", "package",
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
                           "in a sandbox: no io, no os but os.getenv, no require or loadstring)",
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
        set_unavailable_meta(L, lua_gettop(L), "os.");
        lua_setfield(L, env, "os");
        set_unavailable_meta(L, env, "");

        luaL_setfuncs(L, lmod_api, 0);
        lua_pushvalue(L, env);
        lua_setfield(L, env, "_G");
        return 1;
}

/* --- running --- */

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
                return;
        }
        if (!s->budget_exhausted) {
                s->budget_exhausted = true;
                /* From now on every instruction fails, so a pcall in the
                 * file cannot swallow the error and go on. */
                lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1);
        }
        lua_pushliteral(L, "instruction budget exhausted");
        lua_error(L);
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

        if (status == LUA_ERRMEM || (s->mem_exceeded && status == LUA_ERRERR))
                return diag_set(d, -EINVAL, s->path, 0, 0, "memory limit exceeded");
        if (s->budget_exhausted)
                return diag_set(d, -EINVAL, s->path, 0, 0, "instruction budget exhausted");
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
        s.max_instructions = s.o->max_instructions ? s.o->max_instructions : SANDBOX_DEFAULT_INSTRUCTIONS;

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
        lua_sethook(L, budget_hook, LUA_MASKCOUNT, s.hook_step);
        status = lua_pcall(L, 0, 0, 1);
        lua_sethook(L, NULL, 0, 0);
        if (status != LUA_OK) {
                r = fail_status(&s, L, status, text, len, d);
                goto out;
        }

        *ret = s.res;
        s.res = (struct sandbox_result){ 0 };
        r = 0;
out:
        lua_close(L);
        sandbox_result_release(&s.res);
        return r;
}
