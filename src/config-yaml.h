/* config-yaml.h: the YAML reader of the site config
 * (config-yaml.c), for config.c and its parts. The reader walks libyaml's
 * events with a struct parser: its iterators and getters work on the
 * current event and return a negative errno with p->d filled (the event's
 * position and the dotted key in p->path) when the event is not what the
 * schema expects. */
#ifndef CUDAMOD_CONFIG_YAML_H
#define CUDAMOD_CONFIG_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "diag.h"
#include "hashmap.h"
#include "strbuf.h"
#include "util.h"

/* A set of strings it does not own, to find duplicates in linear time
 * (a map may hold a hundred thousand keys in 1 MiB). Zeroed is empty. */
struct keyset {
        struct hashmap map; /* of struct keyset_entry (config-yaml.c) */
};

bool keyset_add(struct keyset *set, const char *s);
void keyset_release(struct keyset *set);

struct parser {
        yaml_parser_t yaml;
        bool yaml_ready;
        yaml_event_t event; /* the current event */
        const char *file;
        const char *buf;
        size_t len;
        unsigned nesting;   /* open mappings and sequences */
        struct strbuf path; /* dotted key path of the current value */
        struct diag *d;
};

void parser_release(struct parser *p);
/* NUL bytes and invalid UTF-8; then, after parser_start, the first
 * pass (check_stream), and after parser_start again the second. */
int check_bytes(struct parser *p);
void parser_start(struct parser *p);
int check_stream(struct parser *p);
int parser_next(struct parser *p);

/* An error at m, or at the current value ("'KEY': expected WHAT, not
 * VALUE"). */
__attribute__((format(printf, 3, 4))) int error_at(struct parser *p, const yaml_mark_t *m,
                                                   const char *fmt, ...);
int expected(struct parser *p, const char *what);
bool scalar_is_null(const yaml_event_t *e);
char *describe(const yaml_event_t *e);
void path_truncate(struct parser *p, size_t len);

/* Walks one mapping: map_begin at its start event, then each map_next
 * that returns 1 leaves the value of the next key as the current event
 * (and the key in p->path), 0 at the end. Duplicate keys are refused;
 * with keys set, so are keys not in it. */
struct map_iter {
        const char *const *keys; /* NULL-terminated; NULL: any key */
        struct strv seen;        /* owns the keys */
        struct keyset seen_set;  /* finds them */
        size_t path_len;
        const char *key;
        int index;               /* of key in keys, or -1 */
        yaml_mark_t key_mark;
};

void map_iter_release(struct map_iter *it);
int map_begin(struct parser *p, struct map_iter *it, const char *const *keys);
int map_next(struct parser *p, struct map_iter *it);

/* Walks one sequence like map_iter; the path gets "[i]". */
struct seq_iter {
        size_t path_len;
        size_t index;
};

int seq_begin(struct parser *p, struct seq_iter *it, const char *what);
int seq_next(struct parser *p, struct seq_iter *it);

/* The current value as a string (not null), a boolean, or an integer in
 * [min, max]; a list of non-empty strings replaces list. */
int get_string(struct parser *p, const char *what, const char **ret);
int set_string(struct parser *p, char **field);
int get_bool(struct parser *p, bool *ret);
int get_uint(struct parser *p, unsigned min, unsigned max, unsigned *ret);
int parse_string_list(struct parser *p, struct strv *list);

#endif
