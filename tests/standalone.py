#!/usr/bin/env python3
"""tests/standalone.py SOURCE_ROOT: the documents and sources stand alone.

Fails, naming each file and line, when a file of the tree points at a
document that is not in the repository or the install: the design notes
(DESIGN.md) and the reference notes kept beside the tree while it was
written (../shared/reference/, ../shared/tools/). The documents an admin
reads (README.md, doc/) may not cite those notes by name either (STACK.md
§7, ...): what they rely on is in doc/ (doc/reference.md, the guide, the
man pages). ../shared/vendor stays allowed: it is where bootstrap.sh looks
for the Lmod 9.2 tarball (CUDAMOD_LMOD9_TARBALL), not a document."""
import os
import re
import sys

ANYWHERE = re.compile(r"DESIGN\.md|\.\./shared/(?!vendor)")
NOTES = re.compile(r"\b(STACK|LAYOUTS|PYTORCH|LMOD|PRIOR-ART|SLURM)\.md\b")
SKIP_DIRS = {".git", ".cache", "subprojects", "__pycache__"}
SUFFIXES = (".c", ".h", ".in", ".md", ".scd", ".py", ".sh", ".txt", ".build", ".yaml", ".lua", ".tcl", ".json")


def documents(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for f in sorted(files):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)
            if rel == "tests/standalone.py" or os.path.islink(p):
                continue
            if f.endswith(SUFFIXES) or f in ("meson.build", "bootstrap.sh") or rel.startswith(".ci/"):
                yield rel, p


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = []
    for rel, p in documents(root):
        admin_doc = rel == "README.md" or rel.startswith("doc/")
        try:
            lines = open(p, encoding="utf-8", errors="replace").read().splitlines()
        except OSError as e:
            bad.append("%s: cannot read: %s" % (rel, e))
            continue
        for n, line in enumerate(lines, 1):
            m = ANYWHERE.search(line) or (admin_doc and NOTES.search(line))
            if m:
                bad.append("%s:%d: points at '%s', which is not in the repository: %s" %
                           (rel, n, m.group(0), line.strip()[:120]))
    for b in bad:
        print(b)
    if bad:
        print("FAIL: %d pointer%s outside the repository" % (len(bad), "" if len(bad) == 1 else "s"))
        return 1
    print("ok: no document points outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
