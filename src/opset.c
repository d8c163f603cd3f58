/* opset.c: a module's environment operations as they are gathered (opset.h). */
#include "install.h"
#include "opset.h"
#include "util-path.h"
#include "util.h"
#include "banned.h"

void opset_push(struct opset *s, enum env_op_kind kind, const char *name, const char *value)
{
        if (s->n == s->alloc) {
                s->alloc = s->alloc ? 2 * s->alloc : 16;
                s->ops = xreallocarray(s->ops, s->alloc, sizeof(*s->ops));
        }
        s->ops[s->n++] = (struct plan_op){ kind, xstrdup(name), xstrdup(value), NULL };
}

static bool opset_has(const struct opset *s, enum env_op_kind kind, const char *name,
                      const char *value)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->ops[i].kind == kind && streq(s->ops[i].name, name) &&
                    streq(s->ops[i].value, value))
                        return true;
        return false;
}

void opset_path_add(const struct opset *s, struct strv *v, const char *dir)
{
        if (!dir || !install_path_present(s->in, dir) || path_is_system_dir(dir) || path_has_component(dir, "stubs") ||
            strv_contains(v, dir))
                return;
        strv_add(v, dir);
}

void opset_prepends(struct opset *s, const char *var, struct strv *dirs)
{
        for (size_t i = s->no_paths ? 0 : dirs->len; i > 0; i--)
                if (!opset_has(s, ENV_OP_PREPEND_PATH, var, dirs->items[i - 1]))
                        opset_push(s, ENV_OP_PREPEND_PATH, var, dirs->items[i - 1]);
        strv_release(dirs);
}

void opset_setenv(struct opset *s, const char *var, const char *value)
{
        if (value && *value)
                opset_push(s, ENV_OP_SETENV, var, value);
}

void opset_pushenv(struct opset *s, const char *var, const char *value)
{
        if (value && *value)
                opset_push(s, ENV_OP_PUSHENV, var, value);
}

void opset_pkgconfig(const struct opset *s, struct strv *v, const char *lib_dir)
{
        _cleanup_free_ char *pc = lib_dir ? path_join(lib_dir, "pkgconfig") : NULL;

        opset_path_add(s, v, pc);
}
