#!/usr/bin/env python3
"""treecheck.py: check an output tree of `cudamod generate` against the two
trees it may legitimately hold a mix of, A (before the run) and B (what the
run generates). Run as a co-process by tests/stress/lib.sh (treecheck_start,
tc): one command a line on stdin, fields separated by tabs, one reply a line
on stdout, "ok ..." or "FAIL reason". Starting python once and keeping the
trees in memory keeps a check to a few milliseconds.

Commands:
  load NAME DIR      read DIR (every regular file but the lock) as state NAME
                     (A or B)
  rewind OUT NAME    replace OUT by a copy of NAME's directory; it becomes
                     the "before" state of the next check
  before OUT         take OUT as it is now as the "before" state
  check OUT MODE     check OUT; OUT becomes the "before" state of the next
                     check. Always: every entry below OUT is a directory or a
                     regular file, every file (but temporary files, the lock
                     and the index) is byte for byte A's or B's version, and
                     the index is "relaxed-consistent": each file it lists is
                     absent and not in B, or holds the recorded sha256, or is
                     B's version; each file it does not list is B's version
                     (so the next run adopts it). MODE adds:
      kill           the index is the one before the run or B's, byte for byte
      fault          the index is "strict-consistent" (it lists exactly the
                     files there are, each with its sha256) and there is no
                     temporary file
      fault-stale    as fault, except that the index may also be the one
                     before the run (its write is what failed)
      fault-tmp      as fault, but temporary files may remain (removing them
                     is what failed)
      term           nothing changed since before, or OUT is exactly B
                     (the signal came before or after the write phase)
      term-strict    the index is strict-consistent and there is no
                     temporary file at all (write_tree was interrupted)
      done           OUT is exactly B (index included), no temporary file
  The reply to check: "ok state=A|B|mixed a=N b=N tmp=N newtmp=N
  index=strict|relaxed same=0|1" (same: OUT is what it was before, files and
  temporary files alike).
"""
import hashlib
import json
import os
import shutil
import sys

TMP = ".cudamod-tmp."
INDEX = ".cudamod-index.json"
LOCK = ".cudamod.lock"


class Fail(Exception):
    pass


def read_tree(top):
    """{relative path: bytes} of every regular file below top but the lock;
    raises Fail on anything that is neither a directory nor a regular file."""
    files = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(top, rel) if rel else top) as it:
            for e in it:
                p = rel + "/" + e.name if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    stack.append(p)
                elif e.is_file(follow_symlinks=False):
                    if p == LOCK:
                        continue
                    with open(e.path, "rb") as f:
                        files[p] = f.read()
                else:
                    raise Fail("'%s' is neither a directory nor a regular file" % p)
    return files


def is_tmp(p):
    return os.path.basename(p).startswith(TMP)


def sha(b):
    return hashlib.sha256(b).hexdigest()


class Checker:
    def __init__(self):
        self.states = {}
        self.dirs = {}
        self.before = None

    def load(self, name, top):
        self.states[name] = read_tree(top)
        self.dirs[name] = top
        return "ok %d files" % len(self.states[name])

    def rewind(self, out, name):
        """Make OUT hold exactly NAME's files (the lock aside), writing only
        those that differ: a full copy costs more than the run under test."""
        want = self.states[name]
        try:
            cur = read_tree(out)
        except (Fail, OSError):
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(self.dirs[name], out, symlinks=True)
            self.before = dict(want)
            return "ok"
        for p in sorted(set(cur) - set(want)):
            os.unlink(os.path.join(out, p))
        for p, b in sorted(want.items()):
            if cur.get(p) != b:
                path = os.path.join(out, p)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                # A new file, not a truncated one: ext4 (auto_da_alloc)
                # flushes a file truncated and rewritten when it is closed.
                if p in cur:
                    os.unlink(path)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                try:
                    os.write(fd, b)
                finally:
                    os.close(fd)
        wanted_dirs = {""}
        for p in want:
            while "/" in p:
                p = p.rsplit("/", 1)[0]
                wanted_dirs.add(p)
        for top, dirs, _ in os.walk(out, topdown=False):
            rel = os.path.relpath(top, out)
            if rel != "." and rel not in wanted_dirs:
                os.rmdir(top)
        self.before = dict(want)
        return "ok"

    def take_before(self, out):
        self.before = read_tree(out)
        return "ok"

    def check(self, out, mode):
        A, B = self.states["A"], self.states["B"]
        cur = read_tree(out)
        before = self.before if self.before is not None else {}
        self.before = cur
        tmps = sorted(p for p in cur if is_tmp(p))
        newtmps = [p for p in tmps if p not in before]
        files = {p: b for p, b in cur.items() if not is_tmp(p)}
        na = nb = 0
        for p, b in sorted(files.items()):
            if p == INDEX:
                continue
            inA, inB = A.get(p) == b, B.get(p) == b
            if not inA and not inB:
                raise Fail("'%s' is neither A's nor B's version (sha256 %s)" % (p, sha(b)))
            na += inA and not inB
            nb += inB and not inA
        if files == {p: b for p, b in A.items()}:
            state = "A"
        elif files == B:
            state = "B"
        else:
            state = "mixed"
        same = int(cur == before)

        # The index against the tree.
        raw = files.get(INDEX)
        entries = {}
        if raw is not None:
            try:
                doc = json.loads(raw)
                entries = doc["files"]
                assert isinstance(entries, dict)
            except Exception as e:  # noqa: BLE001
                raise Fail("the index does not parse: %s" % e)
        modfiles = {p: b for p, b in files.items() if p != INDEX}
        strict = []
        for p, e in sorted(entries.items()):
            rec = e.get("sha256") if isinstance(e, dict) else None
            if p not in modfiles:
                strict.append("'%s' is in the index but not on disk" % p)
                if p in B:
                    raise Fail("'%s' is in the index and in B but not on disk" % p)
            elif sha(modfiles[p]) != rec:
                strict.append("'%s' does not hold the sha256 the index records" % p)
                if modfiles[p] != B.get(p):
                    raise Fail("'%s' holds neither the sha256 the index records nor B's version" % p)
        for p in sorted(modfiles):
            if p not in entries:
                strict.append("'%s' is on disk but not in the index" % p)
                if modfiles[p] != B.get(p):
                    raise Fail("'%s' is not in the index and not B's version: the next run would "
                               "take it for a file cudamod did not write" % p)
        index = "relaxed" if strict else "strict"

        def need_strict():
            if strict:
                raise Fail("the index does not describe the tree: " + "; ".join(strict[:4]))

        def no_tmp():
            if tmps:
                raise Fail("temporary files remain: " + ", ".join(tmps[:4]))

        if mode == "kill":
            if raw not in (before.get(INDEX), B.get(INDEX)):
                raise Fail("the index is neither the one before the run nor B's")
        elif mode == "fault":
            need_strict()
            no_tmp()
        elif mode == "fault-stale":
            if raw != before.get(INDEX):
                need_strict()
            no_tmp()
        elif mode == "fault-tmp":
            need_strict()
        elif mode == "term":
            if not same and not (state == "B" and not tmps):
                raise Fail("killed by SIGTERM before or after the write phase (no message), "
                           "yet the tree changed and is not B")
        elif mode == "term-strict":
            need_strict()
            no_tmp()
        elif mode == "done":
            no_tmp()
            if state != "B":
                missing = sorted(set(B) - set(files))[:3]
                extra = sorted(set(files) - set(B))[:3]
                raise Fail("the tree is not B (missing %s, extra %s)" % (missing, extra))
        else:
            raise Fail("unknown mode '%s'" % mode)
        return "ok state=%s a=%d b=%d tmp=%d newtmp=%d index=%s same=%d" % (
            state, na, nb, len(tmps), len(newtmps), index, same)


def main():
    c = Checker()
    for line in sys.stdin:
        f = line.rstrip("\n").split("\t")
        try:
            if f[0] == "load" and len(f) == 3:
                reply = c.load(f[1], f[2])
            elif f[0] == "rewind" and len(f) == 3:
                reply = c.rewind(f[1], f[2])
            elif f[0] == "before" and len(f) == 2:
                reply = c.take_before(f[1])
            elif f[0] == "check" and len(f) == 3:
                reply = c.check(f[1], f[2])
            else:
                reply = "FAIL bad command: %r" % line
        except Fail as e:
            reply = "FAIL " + str(e)
        except OSError as e:
            reply = "FAIL " + str(e)
        print(reply.replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
