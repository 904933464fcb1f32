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
                    "11_preference_family"}
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
    """The method notebooks and their frame exist; nothing outside the course's numbering does.
    (07 and 08 present the §5.2 experiments and join as they land.)"""
    names = [p.stem for p in NOTEBOOKS]
    missing = [n for n in EXPECTED if n not in names and n not in ("07_why_rl_works", "08_more_effective_rl")]
    assert not missing, f"missing notebooks: {missing}"
    assert set(names) <= set(EXPECTED), f"notebooks outside the course map: {sorted(set(names) - set(EXPECTED))}"


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


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem in METHOD_NOTEBOOKS], ids=lambda p: p.stem)
def test_method_notebook_has_the_whole_arc(path):
    src = code(load(path))
    text = "\n".join("".join(c["source"]) for c in load(path)["cells"])
    assert re.search(r"\\tag\{\d+\}|\(\d+\)|eq(uation)?\.? ?\d+", text, flags=re.I), "no equation number"
    assert "derive(" in src or "derivations." in src, "no sympy derivation"
    assert "model_oracle(" in src, "no autograd check on the model's parameters"
    assert "_explorer(" in src, "no widget"
    assert "train(" in src, "no training run"
    assert len(re.findall(r"\bq\d+\.check\(", src)) >= 3, "fewer than three checked exercises"
    assert src.count("### BEGIN SOLUTION") >= 3 and src.count("### BEGIN SOLUTION") == src.count("### END SOLUTION")
