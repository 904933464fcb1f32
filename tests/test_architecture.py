"""The layers of docs/ARCHITECTURE.md hold: core <- lab <- experiments <- course, with no import
cycle. Read from the source (every import, those inside functions too), so a late import counts."""

import ast
import os
import subprocess
import sys

import pytest

import unified_rl

PACKAGE = os.path.dirname(unified_rl.__file__)
CORE = {"paradigm", "coefficients", "objectives", "advantages", "kl", "metrics", "derivations", "_checks", "text", "parts"}
LAZY_FACES = {("parts", "methods.table"), ("parts", "methods.preference")}
"""Imports made inside a function to hand a name on from a higher layer: `parts.compose` and `parts.compose_pairs`
build a Method (data source, reward, critic: the lab) only when called, so importing `parts` loads no lab module
(tested below in a process)."""
HEAVY = {"matplotlib", "ipywidgets", "jupyterlab", "IPython"}


def modules():
    """{dotted name under unified_rl: path}."""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), PACKAGE)[:-3].split(os.sep)
                out[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = os.path.join(d, f)
    return out


def imports(name, path, known):
    """(package modules, third-party top-level names) that `name` imports anywhere in its source."""
    is_pkg = path.endswith("__init__.py")
    own, other = set(), set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("unified_rl."):
                    own.add(a.name[len("unified_rl."):])
                elif a.name != "unified_rl":
                    other.add(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if (node.module or "").startswith("unified_rl"):
                    base = node.module[len("unified_rl."):] if "." in node.module else ""
                else:
                    other.add(node.module.split(".")[0])
                    continue
            else:
                parts = name.split(".") if name else []
                parts = parts if is_pkg else parts[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:  # `from . import x` names a submodule when one exists
                sub = f"{base}.{a.name}" if base else a.name
                own.add(sub if sub in known else base)
    own.discard("")
    return {m for m in own if m in known}, other


def graph():
    known = modules()
    g = {n: imports(n, p, known) for n, p in known.items()}
    for name, dep in LAZY_FACES:
        g[name][0].discard(dep)
    return g


def closure(g, start):
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += g[n][0]
    return seen


def top(name):
    return name.split(".")[0]


def test_the_core_imports_no_lab_module():
    g = graph()
    for name in g:
        if top(name) in CORE:
            outside = {m for m in closure(g, name) if top(m) not in CORE and m != ""}
            assert not outside, f"core module {name} imports lab modules {sorted(outside)}"


def test_the_trainer_and_experiments_import_no_course_helpers():
    g = graph()
    for start in ("trainer", "verify", "cache", "experiments.common"):
        reach = closure(g, start)
        assert not {m for m in reach if top(m) == "course"}, start
        if top(start) != "experiments":  # the lab needs no plotting; the experiments draw their figures
            heavy = {lib for m in reach for lib in g[m][1]} & HEAVY
            assert not heavy, f"{start} imports {sorted(heavy)}"


def test_the_experiments_import_no_course_helpers():
    g = graph()
    for name in [n for n in g if top(n) == "experiments"]:
        course = sorted(m for m in closure(g, name) if top(m) == "course")
        assert not course, f"{name} imports {course}: an experiment's plot belongs in the experiment"


def test_no_import_cycles():
    g = graph()
    cycles = set()
    for name in g:
        for dep in g[name][0]:
            if name in closure(g, dep) and dep != name and not name.startswith(dep + ".") \
                    and not dep.startswith(name + "."):
                cycles.add(tuple(sorted((name, dep))))
    assert not cycles, f"modules that import each other (directly or through others): {sorted(cycles)}"


@pytest.mark.slow
def test_importing_the_trainer_loads_no_course_or_plotting():
    code = ("import sys, unified_rl.trainer, unified_rl.cli, unified_rl.verify; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'matplotlib', 'ipywidgets', 'jupyterlab'} or m.startswith('unified_rl.course')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


def test_the_lazy_faces_are_lazy():
    """Importing the core's parts loads no lab module: `parts.compose` reaches the lab only when it is called."""
    code = ("import sys, unified_rl.parts, unified_rl.coefficients, unified_rl.objectives; "
            "print(sorted(m for m in sys.modules if m.startswith('unified_rl.') and m.split('.')[1] not in "
            f"{sorted(CORE)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
    for name, dep in LAZY_FACES:  # each face is an import inside a function, never at module level
        tree = ast.parse(open(modules()[name]).read())
        top_level = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
        assert not any(dep.split(".")[0] in (m or "") for m in top_level), (name, dep)


def test_no_part_or_method_imports_the_process_group():
    """The world travels on the Step (`Step.across`): no part and no method imports `distributed` (nor fsdp,
    collectives, launch), so a new method cannot forget to reduce over the ranks."""
    g = graph()
    world = {"distributed", "collectives", "fsdp", "launch"}
    for name in g:
        if top(name) in ("parts", "methods"):
            direct = {m for m in g[name][0] if top(m) in world}
            assert not direct, f"{name} imports {sorted(direct)}"


def test_the_layer_table_names_every_module():
    """docs/ARCHITECTURE.md's layer table is complete: every module and subpackage of unified_rl is in it."""
    import re
    doc = open(os.path.join(os.path.dirname(PACKAGE), "docs", "ARCHITECTURE.md")).read()
    table = doc[doc.index("| layer | modules |"):doc.index("Importing `unified_rl.trainer`")]
    named = {n.strip("/") for n in re.findall(r"`([\w/]+)`", table)}
    top = {m.split(".")[0] for m in modules() if m and not m.startswith("__")}
    assert top - named == set(), f"modules the layer table does not name: {sorted(top - named)}"


def test_the_parts_table_names_every_registered_part():
    """docs/ARCHITECTURE.md's table of the axes names every part each registry holds, and no part that is not one:
    a part added without its row in the table, or a row left for a part that is gone, fails here."""
    import re

    from unified_rl import parts
    doc = open(os.path.join(os.path.dirname(PACKAGE), "docs", "ARCHITECTURE.md")).read()
    start = doc.index("| axis (registry) | parts |")
    table = doc[start:doc.index("\n\n", start)]
    for axis, registry in parts.REGISTRIES.items():
        row = next((line for line in table.splitlines() if f"`parts.{_registry_name(axis)}`" in line), None)
        assert row is not None, f"no row for the {axis} axis"
        named = set(re.findall(r"`([\w\-+]+)`", row.split("|")[2]))
        missing = sorted(set(registry) - named)
        assert not missing, f"{axis}: parts the table does not name: {missing}"


def _registry_name(axis):
    from unified_rl import parts
    return next(k for k in ("ADVANTAGES", "POLICY_TERMS", "KL_TERMS", "TERMS", "AGGREGATIONS", "MASKS", "PAIR_SCORES",
                            "PAIR_LOSSES")
                if getattr(parts, k) is parts.REGISTRIES[axis])
