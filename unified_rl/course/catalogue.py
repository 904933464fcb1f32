"""The course's translations, a gettext catalogue: `locale/LANG/LC_MESSAGES/unified_rl.po` (edited), `.mo` (read).

    python -m unified_rl.course.catalogue --compile   check each .po, then write its .mo beside it
    python -m unified_rl.course.catalogue --check     exit 1 if a .po has a problem or a .mo is not its .po compiled
    python -m unified_rl.course.catalogue --extract   add the English notebooks' new tr() sentences to the zh .po

`en` holds the keyed messages' English (msgid: the key, e.g. "check.correct"); `zh` holds their Chinese (msgid:
the key; an extracted comment `#.` repeats the English for the translator) and the printed sentences' Chinese
(msgid: the English template itself). A `#:` reference names the area an entry belongs to (`nb05`: notebook
05's printed sentences, `ex_nb05`: its exercises' messages, `derivations`, `widgets`, ...). Reading and
compiling a .po takes Babel (the test extra); the course itself reads only the .mo, through Python's
`gettext` (`i18n`), so Babel is no dependency of the package. docs/ARCHITECTURE.md, "The Chinese edition".
"""

import gettext
import io
import os
import re
import string
import sys

LOCALE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "locale")
DOMAIN = "unified_rl"
LANGUAGES = ("en", "zh")
COMPILE = "python -m unified_rl.course.catalogue --compile"
NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(LOCALE))), "course")  # in the repository
WIDTH = 76  # Babel's own: a .po read and written again by Babel is the same file


def fields(message):
    """The names of the {fields} of a message, as a sorted tuple (ValueError if it is not a valid format)."""
    return tuple(sorted({f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(message) if f}))


def path(lang, ext="po", locale=None):
    """Where language `lang`'s catalogue lives: locale/LANG/LC_MESSAGES/unified_rl.EXT (po or mo)."""
    return os.path.join(locale or LOCALE, lang, "LC_MESSAGES", f"{DOMAIN}.{ext}")


def mo_entries(data):
    """{msgid: msgstr} of a compiled catalogue (bytes), as gettext reads it, its header ("") left out."""
    # gettext has no public way to list a catalogue: GNUTranslations keeps what it parsed in _catalog
    return {k: v for k, v in gettext.GNUTranslations(io.BytesIO(data))._catalog.items() if k}


def _babel():
    try:
        from babel.messages import mofile, pofile
    except ImportError:
        raise RuntimeError("reading the .po files needs Babel: pip install 'unified_rl[test]'") from None
    return pofile, mofile


def read(lang, locale=None):
    """Language `lang`'s .po as a Babel catalogue (ValueError naming the line where it is not a .po)."""
    pofile, _ = _babel()
    with open(path(lang, "po", locale), "rb") as f:
        try:
            return pofile.read_po(f, locale=lang, domain=DOMAIN, abort_invalid=True)
        except pofile.PoFileError as e:
            raise ValueError(f"{path(lang, 'po', locale)}: {e}") from None


def write(lang, catalogue, locale=None):
    """Write a Babel catalogue as language `lang`'s .po."""
    pofile, _ = _babel()
    with open(path(lang, "po", locale), "wb") as f:
        pofile.write_po(f, catalogue, width=WIDTH)


QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')  # one PO string: quotes, and inside them no bare quote


def written_wrong(lang, locale=None):
    """Lines where a .po is not what Babel reads back exactly: a string with a missing or extra quote (Babel
    would keep part of it without a word) and a msgid written twice (Babel would keep the first translation)."""
    pofile, _ = _babel()
    out, ids, parts = [], [], None
    with open(path(lang, "po", locale), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            keyword, _, rest = line.partition(" ") if line.startswith("msg") else ("", "", line)
            if line.startswith(("msg", '"')) and not QUOTED.fullmatch(rest):
                out.append(f"{lang} line {n}: not one quoted string: {line[:60]!r}")
            if keyword == "msgid":
                parts = [rest]
                ids.append((n, parts))
            elif line.startswith('"') and parts is not None:
                parts.append(line)
            else:
                parts = None
    seen = set()
    for n, msgid in ((n, pofile.denormalize("\n".join(p))) for n, p in ids):
        if msgid in seen:
            out.append(f"{lang} line {n}: {msgid!r} written twice (one msgid, one entry)")
        seen.add(msgid)
    return out


def compiled(catalogue):
    """The .mo bytes of a Babel catalogue (untranslated and fuzzy entries left out, as gettext expects)."""
    _, mofile = _babel()
    out = io.BytesIO()
    mofile.write_mo(out, catalogue, use_fuzzy=False)
    return out.getvalue()


def _translated(catalogue):
    """The entries a compiled catalogue keeps: translated and not fuzzy (the header left out)."""
    return [m for m in catalogue if m.id and m.string and not m.fuzzy]


def _groups(message):
    return [name for name, _ in message.locations]


def message_groups(locale=None):
    """{area: {key: (English, Chinese)}} of the keyed messages, read from the .po (Chinese "" where it has none)."""
    zh = {m.id: m.string for m in _translated(read("zh", locale))}
    out = {}
    for m in _translated(read("en", locale)):
        for group in _groups(m):
            out.setdefault(group, {})[m.id] = (m.string, zh.get(m.id, ""))
    return out


def sentence_groups(locale=None):
    """{area: {English template: Chinese}} of the sentences (the zh entries whose msgid is no key), from the .po."""
    keys = {m.id for m in read("en", locale) if m.id}
    out = {}
    for m in _translated(read("zh", locale)):
        if m.id not in keys:
            for group in _groups(m):
                out.setdefault(group, {})[m.id] = m.string
    return out


def merged(groups):
    """One {msgid: value} of several areas' tables."""
    return {k: v for table in groups.values() for k, v in table.items()}


def _format_problem(where, text):
    try:
        fields(text)
    except ValueError as e:
        return f"{where}: not a str.format template ({e}); a literal brace is doubled"
    return None


def problems(locale=None):
    """Readable lines for what is wrong in the .po files (none when they are fine)."""
    en, zh = read("en", locale), read("zh", locale)
    english = {m.id: m.string for m in en if m.id}
    areas = {m.id: _groups(m) for m in en if m.id}
    out = [f"{lang} {m.id!r}: no #: reference naming its area" for lang, cat in (("en", en), ("zh", zh))
           for m in cat if m.id and not m.locations]
    out += [line for lang in LANGUAGES for line in written_wrong(lang, locale)]
    for m in en:
        if m.id and (not m.string or m.fuzzy):
            out.append(f"en {m.id!r}: no English (or marked fuzzy, which gettext leaves out)")
    for m in zh:
        if not m.id:
            continue
        comment = " ".join(" ".join(m.auto_comments).split())
        if m.id in english:
            if comment != " ".join(english[m.id].split()):
                out.append(f"zh {m.id!r}: its #. comment is not the English of the en catalogue: "
                           "update the Chinese to the English, then the comment")
            if m.locations and _groups(m) != areas[m.id]:
                out.append(f"zh {m.id!r}: its #: area {_groups(m)} is not the en catalogue's {areas[m.id]}")
            source = english[m.id]
        elif m.auto_comments:
            out.append(f"zh {m.id!r}: a keyed message (it has a #. English) that the en catalogue lacks")
            continue
        else:
            source = m.id
        if not m.string:
            continue
        bad = _format_problem(f"zh {m.id!r}", m.string) or _format_problem(f"{m.id!r}", source)
        if bad:
            out.append(bad)
        elif fields(source) != fields(m.string):
            out.append(f"zh {m.id!r}: fields differ from the English: {fields(source)} vs {fields(m.string)}")
    return out


def stale(locale=None):
    """The languages whose shipped .mo does not hold exactly what their .po compiles to."""
    out = []
    for lang in LANGUAGES:
        want = mo_entries(compiled(read(lang, locale)))
        try:
            with open(path(lang, "mo", locale), "rb") as f:
                have = mo_entries(f.read())
        except (OSError, ValueError):  # missing, or not a catalogue gettext can read
            have = None
        if have != want:
            out.append(lang)
    return out


def check(locale=None):
    """Every problem of the .po files, then every language whose .mo is not its .po compiled: readable lines."""
    return problems(locale) + [f"{path(lang, 'mo', locale)} is not its .po compiled: run {COMPILE}"
                               for lang in stale(locale)]


def compile_all(locale=None):
    """Write each language's .mo from its .po; ValueError (nothing written) if a .po has a problem."""
    found = problems(locale)
    if found:
        raise ValueError(f"{len(found)} problem(s) in the .po files, nothing compiled: {found[0]}"
                         + (f" (and {len(found) - 1} more: --check lists them)" if len(found) > 1 else ""))
    written = []
    for lang in LANGUAGES:
        data = compiled(read(lang, locale))
        target = path(lang, "mo", locale)
        with open(target, "wb") as f:
            f.write(data)
        written.append(target)
    return written


def notebook_sentences(folder=NOTEBOOKS):
    """{English template: area} of every tr("...") in the English notebooks' code cells, found by Babel's
    Python extractor (area nbNN: notebook NN's printed sentences)."""
    import glob
    import json

    from babel.messages.extract import extract
    found = sorted(glob.glob(os.path.join(folder, "[0-9][0-9]_*.ipynb")))
    if not found:
        raise ValueError(f"no English notebooks in {folder}: --extract reads the repository's course/")
    out = {}
    for notebook in found:
        with open(notebook, encoding="utf-8") as f:
            cells = json.load(f)["cells"]
        code = "\n".join(line for c in cells if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()
                         if not line.lstrip().startswith(("%", "!")))  # IPython's magics are not Python
        for _, msgid, _, _ in extract("python", io.BytesIO(code.encode("utf-8")), keywords={"tr": None}):
            out.setdefault(msgid, "nb" + os.path.basename(notebook)[:2])
    return out


def extract_new(locale=None, folder=NOTEBOOKS):
    """Add each notebook sentence the zh .po lacks as an untranslated entry (msgstr "": shown in English until
    translated; the tests name it); return them."""
    catalogue = read("zh", locale)
    new = [(msgid, area) for msgid, area in notebook_sentences(folder).items() if msgid not in catalogue]
    for msgid, area in new:
        catalogue.add(msgid, "", locations=[(area, None)])
    if new:
        write("zh", catalogue, locale)
    return new


def main(argv=None):
    import argparse  # here: i18n imports this module at every course import, the command line is rare

    p = argparse.ArgumentParser(prog="python -m unified_rl.course.catalogue", description=__doc__.splitlines()[0])
    todo = p.add_mutually_exclusive_group(required=True)
    todo.add_argument("--compile", action="store_true", help="check each .po, then write its .mo")
    todo.add_argument("--check", action="store_true", help="exit 1 if a .po has a problem or a .mo is stale")
    todo.add_argument("--extract", action="store_true", help="add the notebooks' new tr() sentences to the zh .po")
    p.add_argument("--locale", default=LOCALE, help="the locale folder (default: the package's)")
    p.add_argument("--notebooks", default=NOTEBOOKS, help="the English notebooks' folder (default: course/)")
    args = p.parse_args(argv)
    try:
        if args.extract:
            new = extract_new(args.locale, args.notebooks)
            for msgid, area in new:
                print(f"{area}: {msgid!r}")
            print(f"{len(new)} new sentence(s) in {os.path.relpath(path('zh', 'po', args.locale))}: translate them, "
                  f"then {COMPILE}")
            return 0
        if args.compile:
            for target in compile_all(args.locale):
                print(f"wrote {os.path.relpath(target)}")
            return 0
        found = check(args.locale)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
