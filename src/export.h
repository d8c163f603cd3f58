/* export.h: what a generated tree offers its neighbours (export.c):
 * Spack's packages.yaml externals and EasyBuild's external modules
 * metadata, made from the tree's index. */
#ifndef CUDAMOD_EXPORT_H
#define CUDAMOD_EXPORT_H

#include "diag.h"

struct strbuf;
struct strv;

enum export_format {
        EXPORT_SPACK,
        EXPORT_EASYBUILD,
        _EXPORT_FORMAT_MAX,
        _EXPORT_FORMAT_INVALID = -1,
};

/* "spack" -> EXPORT_SPACK; _EXPORT_FORMAT_INVALID for another word. */
enum export_format export_format_from_string(const char *s);

/* The export of outdir, a directory `cudamod generate` wrote (read
 * through its index), appended to out; the modules left out, one line
 * each ("cusparselt/0.8.1: a runtime-only install ..."), added to
 * left_out. Every module of the index that has an install is in it, in
 * the component table's order, then by version, then by module name: the
 * same index gives the same bytes. -ENOENT (d: "not a directory cudamod
 * generate wrote") when outdir has no index; -EBADMSG when the index is
 * not one to trust (an entry that fails its checks, or one from a
 * cudamod that did not record what an export needs). */
int export_tree(const char *outdir, enum export_format f, struct strbuf *out, struct strv *left_out,
                struct diag *d);

#endif
