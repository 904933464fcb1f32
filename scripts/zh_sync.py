"""Keep the Chinese edition (course/zh/) in step with the English notebooks (course/).

    python scripts/zh_sync.py --status      what needs work, per notebook; exit 1 if anything does
    python scripts/zh_sync.py --update      rewrite the twins' code cells from the English ones

The rule (docs/ARCHITECTURE.md, "The Chinese edition"): a twin has the English notebook's cells, in
order, with the same ids and types. Its code cells are the English ones, except that the first code
cell importing unified_rl (not the Colab install cell) starts with `LANG_LINE`. Each Markdown cell
is a translation and records, in metadata["unified_rl"]["translates"], the first 16 hex digits of
the sha256 of the English source it translates; `None` there means "not translated yet".

Code cells are compared without their comments, which a twin translates (`code_only`); --update
rewrites a twin's code from the English and keeps its translated comments on every line whose code
is unchanged (`carry_comments`), so the twin runs exactly the English code. nbgrader's markers
(`### BEGIN SOLUTION`) are code, not comments.

--update never changes a Markdown cell's text: a translation, valid or stale, stays as written (a
stale one keeps its old hash, so --status and the tests still ask for it). A twin's Markdown cell
follows its English cell by hash first, then by id, so a translation survives reordering and
renumbered ids. A new English cell gets the English text with `translates: None`; a twin cell whose
English cell is gone is dropped. An English notebook without a twin gets a skeleton twin. Running
--update twice changes nothing the second time. Run it after anything rewrites the English
notebooks' code cells or their metadata (scripts/colab.py, scripts/nbgrader_cells.py).
--status also names the package text listed to translate (unified_rl/course/to_translate.py) and what the
course's gettext catalogue's check finds (a .po problem, a .mo not compiled from its .po: `catalogue.check`).
Tests: tests/test_zh_edition.py.
"""

import argparse
import copy
import difflib
import glob
import hashlib
import importlib.util
import io
import os
import re
import sys
import tokenize

import nbformat

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def _load(name):
    """unified_rl/course/NAME.py, read as a file (no package import: this script needs no torch)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "unified_rl", "course", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


to_translate = _load("to_translate")
catalogue = _load("catalogue")  # the gettext catalogue's check: a .po problem, a .mo not compiled from its .po


def catalogue_lines():
    """(lines, dirty) of the course's gettext catalogue; not checked, and said so, where Babel is missing."""
    try:
        found = catalogue.check()
    except RuntimeError as e:
        return [f"catalogue not checked: {e}"], False
    except (OSError, ValueError) as e:
        return [f"catalogue: {e}"], True
    return [f"catalogue: {line}" for line in found], bool(found)
LANG_LINE = 'from unified_rl.course.i18n import set_language; set_language("zh")  # 中文版'


def source_of(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def english_hash(source: str) -> str:
    """The hash a translation records: first 16 hex digits of sha256 of the English source."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


# nbgrader's markers are comments that nbgrader reads: they are code here, never translated
MARKER = re.compile(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)")


def comments(source):
    """[(row, col, end_col)] of the comments of Python `source` (nbgrader's markers aside), or None if
    it does not tokenize (then the cell is compared byte for byte)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return [(t.start[0], t.start[1], t.end[1]) for t in toks
            if t.type == tokenize.COMMENT and not MARKER.match(t.string)]


def code_only(source):
    """What runs: `source` without its comments, the spaces before them, and the lines they filled."""
    found = comments(source)
    if found is None:
        return source
    lines = source.split("\n")
    for row, col, end in reversed(found):
        lines[row - 1] = (lines[row - 1][:col] + lines[row - 1][end:]).rstrip()
    cut = {row for row, col, _ in found if not source.split("\n")[row - 1][:col].strip()}
    return "\n".join(line for i, line in enumerate(lines, 1) if i not in cut)


def carry_comments(old, new):
    """`new` (the English code) with the twin's translated comments from `old` kept wherever a line's
    code is unchanged (lines aligned by their code); elsewhere the English comments. The code is `new`'s."""
    if comments(old) is None or comments(new) is None:
        return new

    def split(source):  # per line: (code, comment or "")
        spans = {row: (col, end) for row, col, end in comments(source)}
        out = []
        for i, line in enumerate(source.split("\n"), 1):
            col, end = spans.get(i, (len(line), len(line)))
            out.append((line[:col], line[col:end]))
        return out

    o, n = split(old), split(new)
    keep = {}
    matcher = difflib.SequenceMatcher(None, [c.rstrip() for c, _ in o], [c.rstrip() for c, _ in n], autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            if o[a + k][1] and n[b + k][1]:
                keep[b + k] = o[a + k][1]
    return "\n".join(code + keep.get(i, comment) for i, (code, comment) in enumerate(n))


def translates(cell):
    return cell.get("metadata", {}).get("unified_rl", {}).get("translates")


def declared_index(nb):
    """Index of the code cell that gets LANG_LINE: the first importing unified_rl, not the Colab one."""
    for i, cell in enumerate(nb.cells):
        src = source_of(cell)
        if (cell.cell_type == "code" and ("from unified_rl" in src or "import unified_rl" in src)
                and "google.colab" not in src):
            return i
    return None


def twin_code_cell(en_nb, i):
    """The twin of English code cell i: the same cell, outputs empty, LANG_LINE where declared."""
    cell = copy.deepcopy(en_nb.cells[i])
    cell.outputs, cell.execution_count = [], None
    if i == declared_index(en_nb):
        cell.source = LANG_LINE + "\n" + source_of(cell)
    return cell


def twin_metadata(en_nb, name):
    meta = copy.deepcopy(dict(en_nb.metadata))
    meta["unified_rl"] = {"edition": "zh", "source": f"../{name}"}
    return meta


def markdown_twin(en_cell, source, translated):
    """A twin Markdown cell: `source`, the English cell's metadata, translates = hash or None."""
    cell = copy.deepcopy(en_cell)
    cell.source = source
    cell.metadata.setdefault("unified_rl", {})
    cell.metadata["unified_rl"]["translates"] = translated
    return cell


def compare(en_nb, zh_nb, name):
    """What is out of step between an English notebook and its twin: a dict of lists (empty: in step)."""
    en_ids, zh_ids = [c.get("id") for c in en_nb.cells], [c.get("id") for c in zh_nb.cells]
    common = [i for i in en_ids if i in set(zh_ids)]
    report = {"added": [i for i in en_ids if i not in set(zh_ids)],
              "removed": [i for i in zh_ids if i not in set(en_ids)],
              "reordered": [] if common == [i for i in zh_ids if i in set(en_ids)] else common,
              "type": [], "stale": [], "untranslated": [], "code": [], "metadata": []}
    zh_by_id = {c.get("id"): c for c in zh_nb.cells}
    for i, en in enumerate(en_nb.cells):
        zh = zh_by_id.get(en.get("id"))
        if zh is None:
            continue
        if zh.cell_type != en.cell_type:
            report["type"].append(en.id)
        elif en.cell_type == "code":
            want = twin_code_cell(en_nb, i)
            if (code_only(source_of(zh)) != code_only(source_of(want)) or zh.metadata != want.metadata
                    or zh.get("outputs") != [] or zh.get("execution_count") is not None):
                report["code"].append(en.id)
        elif en.cell_type == "markdown":
            h = translates(zh)
            if h is None:
                report["untranslated"].append(en.id)
            elif h != english_hash(source_of(en)):
                report["stale"].append(en.id)
            else:
                meta = copy.deepcopy(dict(zh.metadata))
                meta["unified_rl"] = {k: v for k, v in meta["unified_rl"].items() if k != "translates"}
                if not meta["unified_rl"]:
                    del meta["unified_rl"]
                if meta != dict(en.metadata):
                    report["metadata"].append(en.id)
        elif source_of(zh) != source_of(en):  # raw cells: copied as they are
            report["code"].append(en.id)
    if dict(zh_nb.metadata) != twin_metadata(en_nb, name):
        report["metadata"].append("notebook")
    return report


def update(en_nb, zh_nb, name):
    """The twin brought in step (a new notebook node); Markdown text is never rewritten."""
    pool = [c for c in (zh_nb.cells if zh_nb is not None else []) if c.cell_type == "markdown"]
    used = set()

    def take(pred):
        for k, c in enumerate(pool):
            if k not in used and pred(c):
                used.add(k)
                return c
        return None

    old_code = {c.get("id"): source_of(c) for c in (zh_nb.cells if zh_nb is not None else []) if c.cell_type == "code"}
    cells = [None] * len(en_nb.cells)
    for i, en in enumerate(en_nb.cells):  # first pass: valid translations, same id preferred
        if en.cell_type == "markdown":
            h = english_hash(source_of(en))
            cells[i] = (take(lambda c: translates(c) == h and c.get("id") == en.get("id"))
                        or take(lambda c: translates(c) == h))
    for i, en in enumerate(en_nb.cells):  # second pass: the rest by id, else new
        if en.cell_type == "code":
            cells[i] = twin_code_cell(en_nb, i)
            before = old_code.get(en.get("id"))
            if before is not None:  # the twin's translated comments stay on the lines whose code is the same
                cells[i].source = carry_comments(before, cells[i].source)
        elif en.cell_type != "markdown":
            cells[i] = copy.deepcopy(en)
        elif cells[i] is None:
            cells[i] = take(lambda c: c.get("id") == en.get("id"))
        if en.cell_type == "markdown":
            old = cells[i]
            cells[i] = (markdown_twin(en, source_of(en), None) if old is None
                        else markdown_twin(en, source_of(old), translates(old)))
            cells[i]["id"] = en.get("id")
    nb = nbformat.v4.new_notebook(cells=cells, metadata=twin_metadata(en_nb, name))
    nb.nbformat, nb.nbformat_minor = en_nb.nbformat, en_nb.nbformat_minor
    return nb


def read(path):
    """A notebook node; ValueError naming the file if it is not a notebook."""
    try:
        return nbformat.read(path, as_version=4)
    except Exception as e:  # nbformat raises several kinds (NotJSONError, KeyError, ...)
        raise ValueError(f"{path} is not a readable notebook ({type(e).__name__}: {str(e)[:120]})") from None


def notebooks(course):
    return sorted(glob.glob(os.path.join(course, "[0-9]*.ipynb")))


def status_lines(course):
    """(lines to print, whether anything needs work) for every English notebook of `course`."""
    zh_dir, lines, dirty = os.path.join(course, "zh"), [], False
    english = notebooks(course)
    for path in english:
        name = os.path.basename(path)
        twin = os.path.join(zh_dir, name)
        if not os.path.exists(twin):
            lines.append(f"{name}: no twin (zh_sync.py --update writes a skeleton)")
            dirty = True
            continue
        r = compare(read(path), read(twin), name)
        problems = [f"{k} {', '.join(map(str, v))}" for k, v in r.items() if v]
        dirty |= bool(problems)
        lines.append(f"{name}: " + ("in step" if not problems else "; ".join(problems)))
    for twin in notebooks(zh_dir):
        if os.path.basename(twin) not in {os.path.basename(p) for p in english}:
            lines.append(f"zh/{os.path.basename(twin)}: no English notebook of that name")
            dirty = True
    # the package's own text still in English (methods, derivations): reported for the package's own course
    ours = os.path.realpath(course) == os.path.realpath(os.path.join(REPO, "course"))
    pending = to_translate.report() if ours else []
    po_lines, po_dirty = catalogue_lines() if ours else ([], False)
    return lines + pending + po_lines, dirty or bool(pending) or po_dirty


def update_all(course):
    """Bring every twin in step; the paths written (an unchanged twin is not rewritten)."""
    zh_dir, written = os.path.join(course, "zh"), []
    for path in notebooks(course):
        name = os.path.basename(path)
        twin = os.path.join(zh_dir, name)
        old = read(twin) if os.path.exists(twin) else None
        new = update(read(path), old, name)
        if old is None or nbformat.writes(new) != nbformat.writes(old):
            os.makedirs(zh_dir, exist_ok=True)
            nbformat.write(new, twin)
            written.append(twin)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--status", action="store_true", help="list what needs work; exit 1 if anything does")
    mode.add_argument("--update", action="store_true", help="rewrite code cells, add skeletons; never a translation")
    ap.add_argument("--course", default=os.path.join(REPO, "course"), help="the English notebooks' folder")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.course):
        print(f"zh_sync: no folder {args.course}", file=sys.stderr)
        return 2
    try:
        if args.update:
            for path in update_all(args.course):
                print(f"updated  {os.path.relpath(path, args.course)}")
        lines, dirty = status_lines(args.course)
    except (ValueError, OSError) as e:
        print(f"zh_sync: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if dirty and args.status else 0


if __name__ == "__main__":
    sys.exit(main())
