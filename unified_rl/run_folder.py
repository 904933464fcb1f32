"""Which folders a run may write into, and one writer per run folder.

A run folder is recognisable: it holds MARK (JSON: the folder format and the package version) and
MANIFEST (every path the run wrote, one per line). Only a run folder is ever replaced, and only the
paths of its manifest; every other file in it (an `evaluate --out OUT/eval.json`, the user's notes)
is kept by a resume and makes `--overwrite` refuse. Refused before anything is written: an empty
name, a symlink, anything that is not a plain folder (a file, a FIFO, a device), the current folder
or one holding it, the home folder or one holding it, a repository root (holds .git), a folder of
files this package did not write.

The lock: `flock` on OUT/LOCK, held for the whole run (`hold`), so a second writer is refused at
once; the kernel releases it when its process dies, so a killed run's lock is never stale.
"""

import contextlib
import errno
import fcntl
import json
import os
import tempfile
import threading

from . import __version__

MARK, MANIFEST, COMPLETE = ".unified_rl-run", "MANIFEST", "COMPLETE"
LOCK, STAGE, PROBE = ".unified_rl-lock", ".unified_rl-save", ".unified_rl-probe"
FORMAT = 1
"""The run folder's format: what MARK says, so a later layout can tell an older one."""


def internal(rel):
    """Whether `rel` (a path inside a run folder) is the package's bookkeeping, never a user file."""
    top = rel.split("/", 1)[0]
    return top in (LOCK, STAGE) or top.startswith(PROBE)


def manifest(out):
    """The paths the run in `out` wrote (relative, '/'-separated), or None if `out` is no run folder."""
    try:
        with open(os.path.join(out, MARK)) as f:
            mark = json.load(f)
        with open(os.path.join(out, MANIFEST)) as f:
            paths = [line.rstrip("\n") for line in f if line.strip()]
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(mark, dict) or mark.get("format") != FORMAT:
        return None
    return paths


def entries(out):
    """Every file and folder under `out` (relative, '/'-separated), bookkeeping aside; links not followed."""
    found = []
    for d, dirs, files in os.walk(out):
        rel_d = os.path.relpath(d, out).replace(os.sep, "/")
        rel_d = "" if rel_d == "." else rel_d + "/"
        dirs[:] = [x for x in dirs if not internal(rel_d + x)]
        found += [rel_d + x for x in sorted(dirs + files) if not internal(rel_d + x)]
    return found


def foreign(out, paths):
    """The entries of `out` that are neither in `paths` nor a folder holding one of them."""
    own = set(paths) | {p.rsplit("/", i)[0] for p in paths for i in range(1, p.count("/") + 1)}
    return sorted(e for e in entries(out) if e not in own)


def _is_within(inner, outer):
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def check_path(out):
    """Refuse, with one line, an `out` that no run may ever be written to (whatever the flags)."""
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError(f"the run folder's name is empty ({str(out)!r}); give a folder such as runs/NAME "
                         "(an unset shell variable?)")
    out = os.fspath(out)
    if os.path.islink(out):
        raise ValueError(f"{out} is a symbolic link; give the folder itself (a run never replaces a link)")
    if os.path.lexists(out) and not os.path.isdir(out):
        kind = "a file" if os.path.isfile(out) else "not a plain folder (a FIFO, a device or a socket)"
        raise ValueError(f"{out} is {kind}; a run is saved into a folder")
    real, cwd, home = os.path.realpath(out), os.path.realpath(os.getcwd()), os.path.realpath(os.path.expanduser("~"))
    if _is_within(cwd, real):
        raise ValueError(f"{out} is the current folder or holds it; a run goes into a folder of its own "
                         "(e.g. runs/NAME)")
    if _is_within(home, real):
        raise ValueError(f"{out} is the home folder or holds it; a run goes into a folder of its own")
    if os.path.lexists(os.path.join(out, ".git")):
        raise ValueError(f"{out} is a repository root (it holds .git); a run goes into a folder of its own")


def _listing(names):
    shown = ", ".join(repr(n) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def check_contents(out, overwrite=False, resume=False):
    """Refuse what the flags do not allow for what `out` holds now, describing it truthfully."""
    if resume and overwrite:
        raise ValueError("--resume continues the run in the folder and --overwrite replaces it: give one of them")
    held = entries(out) if os.path.isdir(out) else []
    paths = manifest(out) if held else None
    if resume:
        if paths is None:
            raise ValueError(f"cannot resume: {out} holds no saved run state (state.pt); "
                             + ("it is not a run folder this package wrote" if held else "it is empty or absent"))
        return
    if not held:
        return
    if paths is None:
        raise ValueError(f"{out} is not a run folder (it holds {_listing(held)}); "
                         + ("--overwrite replaces only a run folder; " if overwrite else "")
                         + "choose a new or empty folder")
    if not overwrite:
        raise ValueError(f"{out} already holds a run; pass --overwrite (overwrite=True) to replace it "
                         "or --resume (resume=True) to continue it")
    other = foreign(out, paths)
    if other:
        raise ValueError(f"{out} holds files the run did not write ({_listing(other)}); --overwrite replaces "
                         "only the run's own files: move those out first")


def probe(out):
    """ValueError if a run cannot be written at `out` (tried by creating and removing a folder)."""
    where = out if os.path.isdir(out) else os.path.dirname(os.path.abspath(out))
    try:
        os.makedirs(where, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(dir=where, prefix=PROBE))
    except OSError as e:
        raise ValueError(f"cannot write the run to {out}: {e.strerror or e}") from None


_HELD = {}
"""realpath -> [fd, count]: the run folders this process holds, so a nested hold is free."""


@contextlib.contextmanager
def hold(out, wait=False):
    """Hold the run folder `out` (created if absent) for one writer: ValueError at once if another
    process holds it, unless `wait`. A folder it created and left empty is removed again."""
    key = (os.path.realpath(out), threading.get_ident())  # re-entrant in one thread; ranks simulated as threads queue
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    created = not os.path.isdir(out)
    os.makedirs(out, exist_ok=True)
    fd = _lock(out, wait)
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):  # unlinked while held: a waiter notices and locks afresh
            os.unlink(os.path.join(out, LOCK))
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(out)  # only if nothing was written into it


def _lock(out, wait):
    path = os.path.join(out, LOCK)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:  # the last holder removed the folder it had created and left empty
            os.makedirs(out, exist_ok=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            if not wait:
                pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
                os.close(fd)
                raise ValueError(f"{out} is in use by another run (process {pid or '?'}); wait for it to "
                                 "finish or choose another folder") from None
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file its last holder unlinked while we waited
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


def mark_text():
    return json.dumps({"format": FORMAT, "package": __version__}) + "\n"
