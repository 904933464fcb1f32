"""The command line's arguments, checked without importing torch: one-line errors with a suggestion,
the value types, and whether --out can be written."""

import argparse
import difflib
import errno
import math
import os
import tempfile


def suggest(word, options, quote=repr):
    """"did you mean X?" for the `options` closest to a mistyped `word` (difflib; ties broken by the
    letters alone, so a transposition wins; several if still tied), else ""."""
    def score(option):
        return difflib.SequenceMatcher(None, word, option).ratio(), \
            difflib.SequenceMatcher(None, sorted(word), sorted(option)).ratio()

    close = difflib.get_close_matches(word, list(options), n=max(1, len(options)), cutoff=0.6)
    best = max(map(score, close), default=None)
    tied = [o for o in options if o in close and score(o) == best]  # in the options' own order
    return f"did you mean {' or '.join(map(quote, tied))}?" if close else ""


class Parser(argparse.ArgumentParser):
    commands = {}  # the top-level parser's: subcommand -> its parser (build_parser sets it)

    def error(self, message):  # one clear line, no usage dump
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def _check_value(self, action, value):  # argparse's check, with a suggestion instead of the whole list
        if action.choices is not None and value not in action.choices:
            hint = suggest(value, action.choices) or f"choose from {', '.join(map(repr, action.choices))}"
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} ({hint})")

    def parse_args(self, args=None, namespace=None):
        """argparse's, naming for an unknown option the closest one of the command it was given to."""
        args, extra = self.parse_known_args(args, namespace)
        if extra:
            parser = self.commands.get(getattr(args, "command", None), self)
            known = {s.lstrip("-"): s for a in parser._actions for s in a.option_strings}  # "--" alike in all
            hints = {w: suggest(w.split("=")[0].lstrip("-"), known, known.get) for w in extra if w.startswith("-")}
            hints = {w: h for w, h in hints.items() if h}
            hint = "".join(f" ({h})" if len(hints) == 1 else f" ({w}: {h})" for w, h in hints.items())
            parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
        return args


def ks(text):
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k takes comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"--k values must be >= 1, got {text!r}")
    return values


def at_least(low):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"expected a number >= {low}, got {v}")
        return v
    return parse


def temperature(text):
    """A sampling temperature: a finite number > 0 (inf and nan would end in a sampling error or
    in JSON that is not JSON)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return v


def folder(text):
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty (an unset shell variable?); give a folder such as runs/NAME")
    return text


def check_writable(out):
    """ValueError unless a file can be written at `out`; the probe leaves no file and changes none."""
    path = os.path.abspath(out)
    if os.path.isdir(path):
        raise ValueError(f"--out {out} is a folder; give a file name such as {os.path.join(out, 'eval.json')}")
    if os.path.isfile(path):  # replaced at the end: opened for writing now, neither truncated nor touched
        return _probe(lambda: os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK)), out, "opening it")
    if os.path.exists(path):  # a device or a pipe (/dev/stdout): written as it is
        return
    parent = os.path.dirname(path)
    while not os.path.lexists(parent):  # the nearest that exists: the folders below it are created at the end
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"--out {out} cannot be written: {parent} is not a folder")
    _probe(lambda: _tmpfile(parent), out, f"creating a file in {parent}")


def _tmpfile(parent):
    """Create an unnamed file in `parent` (O_TMPFILE: gone when closed), else a named one, removed at once."""
    try:
        os.close(os.open(parent, os.O_TMPFILE | os.O_WRONLY, 0o600))
    except (AttributeError, OSError) as e:  # no O_TMPFILE on this system or file system: a named file
        if isinstance(e, OSError) and e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            raise
        fd, name = tempfile.mkstemp(dir=parent, prefix=".unified_rl-probe-")
        os.close(fd)
        os.unlink(name)


def _probe(attempt, out, doing):
    try:
        attempt()
    except OSError as e:
        raise ValueError(f"--out {out} cannot be written: {doing}: {e.strerror or e}") from None
