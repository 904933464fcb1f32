"""The course's translations are a gettext catalogue: the .po files (read by Babel) are what the shipped .mo files
(read by Python's gettext, all the runtime reads) say, entry for entry; the .po check catches each kind of slip;
the views i18n builds are the catalogue's and read-only; a wheel carries the .mo; Babel is no runtime dependency.
"""

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("babel")

from unified_rl.course import catalogue, i18n  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _copy(tmp_path):
    """A copy of the package's locale folder to plant slips in."""
    shutil.copytree(catalogue.LOCALE, tmp_path / "locale")
    return str(tmp_path / "locale")


def _plant(locale, lang, old, new):
    """Replace the one occurrence of `old` in language `lang`'s .po of `locale`."""
    po = Path(catalogue.path(lang, "po", locale))
    text = po.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {po}"
    po.write_text(text.replace(old, new), encoding="utf-8")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "unified_rl.course.catalogue", *args], capture_output=True,
                          text=True, timeout=300)


def test_the_shipped_mo_is_the_po_compiled():
    """Every msgid and msgstr of each shipped .mo, as gettext reads it, is what Babel compiles from the .po."""
    for lang in catalogue.LANGUAGES:
        want = catalogue.mo_entries(catalogue.compiled(catalogue.read(lang)))
        with open(catalogue.path(lang, "mo"), "rb") as f:
            have = catalogue.mo_entries(f.read())
        assert len(want) > 300
        missing, extra = sorted(set(want) - set(have)), sorted(set(have) - set(want))
        changed = sorted(k for k in set(want) & set(have) if want[k] != have[k])
        assert not (missing or extra or changed), (
            f"{lang}: the .mo is stale (run {catalogue.COMPILE}): not in it {missing[:3]}, "
            f"only in it {extra[:3]}, changed {changed[:3]}")
    assert catalogue.stale() == []


def test_a_stale_mo_is_caught_and_compile_refreshes_it(tmp_path):
    """An edited .po without a compile: `stale` and `--check` name the language; `--compile` writes the .mo
    that gettext then reads with the new Chinese."""
    locale = _copy(tmp_path)
    assert catalogue.stale(locale) == []
    _plant(locale, "zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "对了"')
    assert catalogue.stale(locale) == ["zh"]
    r = _cli("--check", "--locale", locale)
    assert r.returncode == 1 and "zh/LC_MESSAGES/unified_rl.mo is not its .po compiled" in r.stdout, r.stdout
    r = _cli("--compile", "--locale", locale)
    assert r.returncode == 0 and r.stdout.count("wrote ") == 2, r.stderr
    assert catalogue.stale(locale) == [] and _cli("--check", "--locale", locale).returncode == 0
    with open(catalogue.path("zh", "mo", locale), "rb") as f:
        assert catalogue.mo_entries(f.read())["check.correct"] == "对了"
    Path(catalogue.path("en", "mo", locale)).unlink()  # a missing .mo is stale too
    assert catalogue.stale(locale) == ["en"]


def test_zh_sync_status_names_a_stale_mo(tmp_path, monkeypatch, capsys):
    """The maintainers' status command runs the catalogue's check: in step today, exit 1 on a stale .mo."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("zh_sync", REPO / "scripts" / "zh_sync.py")
    zh_sync = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zh_sync)
    assert zh_sync.catalogue_lines() == ([], False)
    locale = _copy(tmp_path)
    _plant(locale, "zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "对了"')
    monkeypatch.setattr(zh_sync.catalogue, "LOCALE", locale)
    capsys.readouterr()
    assert zh_sync.main(["--status"]) == 1
    out = capsys.readouterr().out
    assert f"catalogue: {catalogue.path('zh', 'mo', locale)} is not its .po compiled" in out, out


def test_the_po_files_have_no_problem():
    assert catalogue.problems() == []


PLANTS = {  # (language, old text, new text): fragment of the problem it must raise
    "stale English comment": (("en", 'msgid "check.correct"\nmsgstr "Correct"', 'msgid "check.correct"\nmsgstr "Right"'),
                              "#. comment is not the English"),
    "a field dropped": (("zh", 'msgstr "在上面的单元格中定义 `{var}`，', 'msgstr "在上面的单元格中定义 `var`，'),
                        "fields differ"),
    "a single brace": (("zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "正确 {"'),
                       "not a str.format template"),
    "a quote left open": (("zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "正确'),
                          "not one quoted string"),
    "a quote too many": (("zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "正"确"'),
                         "not one quoted string"),
    "no area": (("zh", '#: core\nmsgid "check.correct"', 'msgid "check.correct"'), "no #: reference"),
    "written twice": (("zh", 'msgid "check.correct"\nmsgstr "正确"\n',
                       'msgid "check.correct"\nmsgstr "正确"\n\n#: core\nmsgid "check.correct"\nmsgstr "错"\n'),
                      "written twice"),
    "another area than the English": (("zh", '#: core\nmsgid "check.correct"', '#: plots\nmsgid "check.correct"'),
                                      "is not the en catalogue's"),
    "a fuzzy English": (("en", '#: core\nmsgid "check.correct"', '#: core\n#, fuzzy\nmsgid "check.correct"'),
                        "no English"),
    "a key without English": (("en", '#: core\nmsgid "check.correct"\nmsgstr "Correct"\n', ""),
                              "that the en catalogue lacks"),
}


@pytest.mark.parametrize("name", list(PLANTS))
def test_the_po_check_catches(tmp_path, name):
    """Negative controls: each slip is reported, and `--compile` refuses to write any .mo (one line, exit 1)."""
    (lang, old, new), fragment = PLANTS[name]
    locale = _copy(tmp_path)
    _plant(locale, lang, old, new)
    found = catalogue.problems(locale)
    assert any(fragment in line for line in found), found
    before = {lang: Path(catalogue.path(lang, "mo", locale)).read_bytes() for lang in catalogue.LANGUAGES}
    r = _cli("--compile", "--locale", locale)
    assert r.returncode == 1 and "nothing compiled" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert before == {lang: Path(catalogue.path(lang, "mo", locale)).read_bytes() for lang in catalogue.LANGUAGES}


def test_a_po_that_is_not_a_po_is_a_clear_error(tmp_path):
    locale = _copy(tmp_path)
    _plant(locale, "zh", 'msgid "check.correct"\nmsgstr "正确"', 'msgid "check.correct"\nmsgstr "正确"\nnot po')
    r = _cli("--check", "--locale", locale)
    assert r.returncode == 1 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr


def test_the_views_are_the_catalogue_and_read_only():
    """i18n.CATALOGUE and i18n.SENTENCES (built from the .mo by gettext) are the .po's areas merged, and
    nothing can write to them."""
    assert dict(i18n.CATALOGUE) == catalogue.merged(catalogue.message_groups())
    assert dict(i18n.SENTENCES) == catalogue.merged(catalogue.sentence_groups())
    assert not set(i18n.CATALOGUE) & set(i18n.SENTENCES)
    with pytest.raises(TypeError):
        i18n.CATALOGUE["check.correct"] = ("Right", "对")
    with pytest.raises(TypeError):
        i18n.SENTENCES["for all values"] = "?"


def test_a_doubled_brace_is_a_literal_brace_in_both_languages():
    english = "Eq 12-14 condition on o_{{<=t}}; o_{{<t}} is meant."
    assert english in i18n.SENTENCES and "{{<=t}}" in i18n.SENTENCES[english]
    try:
        i18n.set_language("zh")
        assert "o_{<=t}" in i18n.tr(english) and "{{" not in i18n.tr(english)
    finally:
        i18n.set_language("en")
    assert i18n.tr(english) == "Eq 12-14 condition on o_{<=t}; o_{<t} is meant."


def test_the_runtime_reads_the_mo_through_gettext_without_babel():
    code = ("import sys; sys.modules['babel'] = None\n"
            "from unified_rl.course import i18n\n"
            "i18n.set_language('zh')\n"
            "print(i18n.t('check.correct'), i18n.tr('for all values'), len(i18n.CATALOGUE), 'gettext' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["正确", "对所有取值", str(len(i18n.CATALOGUE)), "True"]


def test_a_missing_mo_names_the_command_that_builds_it(tmp_path):
    code = ("import sys; from unified_rl.course import catalogue; catalogue.LOCALE = sys.argv[1]\n"
            "from unified_rl.course import i18n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and catalogue.COMPILE in r.stderr.strip().splitlines()[-1], r.stderr


def _tr_calls(source):
    """(every tr("...") English of a code cell, those outside an f-string): an AST walk, not Babel's tokenizer."""
    tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "tr"
             and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)]
    return {n.args[0].value for n in calls}, {n.args[0].value for n in calls if id(n) not in inside}


def test_babel_finds_the_notebooks_sentences_under_their_notebooks_area():
    """Babel's extractor (what `--extract` runs) finds every tr() sentence an AST walk finds outside f-strings
    (inside them, some Python versions hide it from Babel), nothing else, and each under its notebook's area."""
    every, outside = set(), set()
    for notebook in sorted(glob.glob(str(REPO / "course" / "[0-9][0-9]_*.ipynb"))):
        for cell in json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                a, b = _tr_calls("".join(cell["source"]))
                every |= a
                outside |= b
    found = catalogue.notebook_sentences()
    assert len(outside) > 200 and outside <= set(found) <= every, (outside - set(found), set(found) - every)
    groups = catalogue.sentence_groups()
    misplaced = {en: area for en, area in found.items() if en not in groups.get(area, {})}
    assert not misplaced, f"sentences not under the #: area of the notebook that prints them: {misplaced}"


def _notebook(folder, name, *sources):
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None} for s in sources]
    (folder / name).write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_extract_adds_only_new_sentences_untranslated(tmp_path):
    """`--extract` appends a new tr() sentence to the zh .po (msgstr "", its notebook's area), leaves every other
    byte as it was, adds nothing the second time; compiled, the new entry is left out (English is shown)."""
    locale, notebooks = _copy(tmp_path), tmp_path / "course"
    notebooks.mkdir()
    _notebook(notebooks, "05_x.ipynb", '%matplotlib inline\nprint(tr("a brand new sentence {x}", x=1))',
              'print(tr("for all values"))\nprint(f"{tr(\'can rise\')}")')
    po = Path(catalogue.path("zh", "po", locale))
    before = po.read_text(encoding="utf-8")
    r = _cli("--extract", "--locale", locale, "--notebooks", str(notebooks))
    assert r.returncode == 0 and "1 new sentence(s)" in r.stdout, r.stderr
    after = po.read_text(encoding="utf-8")
    assert after.startswith(before) and after[len(before):] == (
        '#: nb05\n#, python-brace-format\nmsgid "a brand new sentence {x}"\nmsgstr ""\n\n')
    assert catalogue.extract_new(locale, str(notebooks)) == [] and po.read_text(encoding="utf-8") == after
    assert "a brand new sentence {x}" not in catalogue.mo_entries(catalogue.compiled(catalogue.read("zh", locale)))
    r = _cli("--extract", "--locale", locale, "--notebooks", str(tmp_path / "nowhere"))
    assert r.returncode == 1 and "no English notebooks" in r.stderr and "Traceback" not in r.stderr


def test_a_wheel_carries_the_compiled_catalogue(source_wheel):
    """pyproject's package data puts both .mo files in the wheel, byte for byte the shipped ones."""
    wheel = source_wheel
    with zipfile.ZipFile(wheel) as z:
        for lang in catalogue.LANGUAGES:
            inside = os.path.relpath(catalogue.path(lang, "mo"), REPO).replace(os.sep, "/")
            assert z.read(inside) == Path(catalogue.path(lang, "mo")).read_bytes(), inside
