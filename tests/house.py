#!/usr/bin/env python3
"""house.py SRC BUILD: keep the house in order (STYLE.md, "Headers and layers").

A room is foo.c with its own header foo.h. The rooms need each other through
their `#include "..."` lines and through their calls: which object file of
the core library (and of the cudamod executable) defines a symbol, which one
uses it (nm). Fails, naming the files, when
  (a) rooms need each other, directly or around a circle;
  (b) a header other than a .c's own declares what the .c defines (a shared
      header);
  (c) a .c uses what another .c defines without including that .c's own
      header.
and prints the rooms by layer, lowest first."""
import glob
import os
import re
import subprocess
import sys

# What is not split yet (a finding that names one of these rooms is printed
# but does not fail; a circle fails when it still closes without them).
ALLOWED = [
        # Nothing: every room is split. A room named here would have its
        # findings printed without failing, while it is being split.
]

src, build = sys.argv[1], sys.argv[2]
NM = os.environ.get("NM", "nm")

files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
room = lambda f: os.path.splitext(f)[0]
rooms = sorted({room(f) for f in files})
crooms = {room(f) for f in files if f.endswith(".c")}


def text_of(f):
        with open(os.path.join(src, f), errors="replace") as fp:
                return fp.read()


def strip_comments(s):
        return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), s, flags=re.S)


# --- includes -----------------------------------------------------------
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
includes = {}  # file -> the headers of src it includes
for f in files:
        includes[f] = [h for h in inc_re.findall(strip_comments(text_of(f))) if h in files]

# --- symbols --------------------------------------------------------------
objects = sorted(glob.glob(os.path.join(build, "src", "libcudamod-core.a.p", "*.c.o")) +
                 glob.glob(os.path.join(build, "src", "cudamod.p", "*.c.o")))
if not objects:
        sys.exit("house.py: no object files under %s/src: build first" % build)
defined = {}   # symbol -> room
used = {}      # room -> set of symbols it uses
for o in objects:
        r = os.path.basename(o)[:-len(".c.o")]
        if r not in crooms:
                continue  # generated (builtin-templates.c)
        out = subprocess.run([NM, "-P", o], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                        continue
                sym, kind = parts[0], parts[1]
                if kind == "U":
                        used.setdefault(r, set()).add(sym)
                elif kind.isupper() and kind not in "N":
                        defined[sym] = r


def declared(f):
        """The symbols of `defined` that header f declares: the names outside
        parentheses of its top-level statements (not typedefs, not macros,
        not static inline bodies)."""
        s = strip_comments(text_of(f))
        s = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", "", s, flags=re.M)
        names, stmt, depth = set(), [], 0
        i = 0
        while i < len(s):
                ch = s[i]
                if ch == "{":
                        if depth == 0:
                                body_of_function = "".join(stmt).rstrip().endswith(")")
                        depth += 1
                elif ch == "}":
                        depth -= 1
                        if depth == 0 and body_of_function:
                                stmt = []
                elif depth == 0:
                        if ch == ";":
                                t = "".join(stmt)
                                if not re.match(r"\s*typedef\b", t):
                                        flat, pd = [], 0
                                        for c in t:
                                                pd += c == "("
                                                if pd == 0:
                                                        flat.append(c)
                                                pd -= c == ")"
                                        flat = re.sub(r"\b(?:struct|enum|union)\s+\w+", "", "".join(flat))
                                        names |= {w for w in re.findall(r"\b\w+\b", flat) if w in defined}
                                stmt = []
                        else:
                                stmt.append(ch)
                i += 1
        return names


decl = {f: declared(f) for f in files if f.endswith(".h")}

# --- the graph -------------------------------------------------------------
edges = {r: {} for r in rooms}  # room -> {room: why}
for f in files:
        for h in includes[f]:
                if room(h) != room(f):
                        edges[room(f)].setdefault(room(h), "%s includes %s" % (f, h))
for r, syms in used.items():
        for sym in sorted(syms):
                t = defined.get(sym)
                if t and t != r:
                        edges[r].setdefault(t, "%s.c uses %s (%s.c)" % (r, sym, t))

def components(rooms, edges):
        """Tarjan's strongly connected components, dependencies first."""
        index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]

        def visit(v):
                index[v] = low[v] = n[0]
                n[0] += 1
                stack.append(v)
                on.add(v)
                for w in edges[v]:
                        if w not in rooms:
                                continue
                        if w not in index:
                                visit(w)
                                low[v] = min(low[v], low[w])
                        elif w in on:
                                low[v] = min(low[v], index[w])
                if low[v] == index[v]:
                        c = []
                        while True:
                                w = stack.pop()
                                on.discard(w)
                                c.append(w)
                                if w == v:
                                        break
                        comps.append(c)

        for v in sorted(rooms):
                if v not in index:
                        visit(v)
        return comps


def circle(c):
        inside = sorted("    %s" % why for v in c for w, why in edges[v].items() if w in c)
        return "circle: %s\n%s" % (" <-> ".join(sorted(c)), "\n".join(inside))


sys.setrecursionlimit(10000)
comps = components(set(rooms), edges)
findings = []  # (rooms it names, text)
# (a) circles: those among the rooms not ALLOWED fail; those that need an
# ALLOWED room to close are printed.
strict = [c for c in components({r for r in rooms if r not in ALLOWED}, edges) if len(c) > 1]
for c in strict:
        findings.append(([], circle(c)))
for c in comps:
        if len(c) > 1 and not any(set(c) >= set(s) for s in strict):
                findings.append((c, circle(c)))

# (b) shared headers
for h, syms in sorted(decl.items()):
        for sym in sorted(syms):
                if defined[sym] != room(h):
                        findings.append(([room(h), defined[sym]], "shared header: %s declares %s, defined in %s.c (declare it in %s.h)"
                                         % (h, sym, defined[sym], defined[sym])))

# (c) a use without the definer's own header
for r, syms in sorted(used.items()):
        own = set(includes.get(r + ".c", [])) | set(includes.get(r + ".h", []))
        for sym in sorted(syms):
                t = defined.get(sym)
                if not t or t == r:
                        continue
                if t + ".h" not in own:
                        findings.append(([r, t], "%s.c uses %s without including %s.h, the header of %s.c"
                                         % (r, sym, t, t)))
                elif sym not in decl.get(t + ".h", set()):
                        findings.append(([r, t], "%s.c uses %s, which %s.h does not declare" % (r, sym, t)))

# --- the layers --------------------------------------------------------------
layer = {}
for c in comps:  # dependencies first
        l = 1 + max([layer[w] for v in c for w in edges[v] if w in layer and w not in c] or [-1])
        for v in c:
                layer[v] = l
for l in sorted(set(layer.values())):
        print("layer %2d: %s" % (l, " ".join(sorted(r for r in layer if layer[r] == l))))

failed = 0
for names, text in findings:
        if any(r in ALLOWED for r in names):
                print("allowed (ALLOWED in tests/house.py): " + text)
        else:
            print("FAIL " + text)
            failed += 1
print("%d rooms, %d findings (%d allowed for now)" % (len(rooms), len(findings), len(findings) - failed))
sys.exit(1 if failed else 0)
