"""The course notebooks as files: stored without outputs, importing (never redefining) the package,
and each method notebook carrying every part of the arc (docs/ARCHITECTURE.md, "The course"). `make test`
also executes every notebook (nbval); this file checks what execution cannot see."""

import ast
import inspect
import json
import re
from pathlib import Path

import pytest

from unified_rl import advantages, coefficients, kl, metrics, objectives, paradigm

COURSE = Path(__file__).resolve().parents[1] / "course"
NOTEBOOKS = sorted(COURSE.glob("*.ipynb"))
METHOD_NOTEBOOKS = {"01_sft", "02_rft", "03_online_rft", "04_dpo", "05_ppo", "06_grpo", "10_beyond_grpo",
                    "11_preference_family", "13_teachers_and_stale_samples"}
EXPECTED = ["00_unified_paradigm", *sorted(METHOD_NOTEBOOKS), "07_why_rl_works", "08_more_effective_rl", "09_summary",
            "12_real_model"]
PACKAGE_NAMES = {name for mod in (advantages, coefficients, kl, metrics, objectives, paradigm)
                 for name, obj in vars(mod).items() if inspect.isfunction(obj) and obj.__module__ == mod.__name__
                 and not name.startswith("_")}


def load(path):
    return json.loads(path.read_text())


def code(nb):
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_every_notebook_of_the_course_exists():
    """The method notebooks and their frame exist, and nothing outside the course's numbering does."""
    names = [p.stem for p in NOTEBOOKS]
    assert sorted(names) == sorted(EXPECTED), f"missing {sorted(set(EXPECTED) - set(names))}, " \
                                               f"outside the course map {sorted(set(names) - set(EXPECTED))}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    for cell in load(path)["cells"]:
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, f"{path.name} carries outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_imports_the_package_and_redefines_none_of_it(path):
    src = code(load(path))
    assert "unified_rl" in src
    lines = [l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    # a learner's exercise answer may be named like the package's function only inside a solution
    clash = {d for d in defined & PACKAGE_NAMES if f"def {d}(" not in _solutions(src)}
    assert not clash, f"{path.name} redefines package functions {sorted(clash)}"


def _solutions(src):
    return "\n".join(re.findall(r"### BEGIN SOLUTION(.*?)### END SOLUTION", src, flags=re.S))


def calls(nb):
    """The names of every function a notebook's code calls (`derivations.derive(...)` -> "derive"), read
    from its syntax tree: a comment or a string that mentions a call is not one."""
    names = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "\n".join(l for l in "".join(cell["source"]).splitlines() if not l.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call):
                f = node.func
                names.append(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and re.fullmatch(r"q\d+", f.value.id):
                    names.append(f"{f.value.id}.{f.attr}")
    return names


def exercises(nb):
    """(answer cell, check cell) pairs as nbgrader sees them: a solution cell, then a graded test cell
    that calls that exercise's check()."""
    cells = nb["cells"]
    out = []
    for a, b in zip(cells, cells[1:]):
        ma, mb = a.get("metadata", {}).get("nbgrader", {}), b.get("metadata", {}).get("nbgrader", {})
        if ma.get("solution") and mb.get("grade") and mb.get("points", 0) > 0:
            checks = [c for c in calls({"cells": [b]}) if c.endswith(".check")]
            src = "".join(a["source"])
            if checks and src.count("### BEGIN SOLUTION") == src.count("### END SOLUTION") >= 1:
                out.append((a, b))
    return out


def equation_numbers(nb):
    """Equation numbers the Markdown shows: `\\tag{N}` in a display or "eq N" / "equation N" in the text."""
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return re.findall(r"\\tag\{(\d+)\}|\beq(?:uation)?s?\.? ?(\d+)", text, flags=re.I)


ARC = {  # the arc's parts (docs/ARCHITECTURE.md, "The course") as the calls that make them
    "a sympy derivation": {"derive", "check", "diff"},
    "an autograd check on the model's parameters": {"model_oracle"},
    "a widget": None,  # any call of a *_explorer
    "a training run through the package": {"train"},
}


def missing_arc(nb):
    """The parts of the arc a notebook lacks (empty: the whole arc)."""
    called = set(calls(nb))
    lacks = [part for part, names in ARC.items()
             if not (any(c.endswith("_explorer") for c in called) if names is None else names & called)]
    if not equation_numbers(nb):
        lacks.append("an equation number in its Markdown")
    if len(exercises(nb)) < 3:
        lacks.append(f"three graded exercises (has {len(exercises(nb))})")
    return lacks


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem in METHOD_NOTEBOOKS], ids=lambda p: p.stem)
def test_method_notebook_has_the_whole_arc(path):
    assert missing_arc(load(path)) == []


def test_the_arc_check_reads_structure_not_words():
    """A notebook whose calls survive only in comments and strings, or whose exercises lost their nbgrader
    cells, is missing those parts."""
    nb = load(COURSE / "06_grpo.ipynb")
    assert missing_arc(nb) == []
    commented = json.loads(json.dumps(nb))
    for cell in commented["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = ["# " + line if "model_oracle(" in line or "train(" in line else line
                              for line in "".join(cell["source"]).splitlines(keepends=True)]
    lacks = missing_arc(commented)
    assert "an autograd check on the model's parameters" in lacks and "a training run through the package" in lacks
    ungraded = json.loads(json.dumps(nb))
    for cell in ungraded["cells"]:
        cell.get("metadata", {}).pop("nbgrader", None)
    assert any(x.startswith("three graded exercises") for x in missing_arc(ungraded))
