"""Every checker tests on inputs that vary every parameter: the rule, over every exercise of every notebook.

A checker that draws its inputs with a parameter fixed (lambda = 1, one clip epsilon, one beta, T equal
to max_len, zeros off the mask, positive symbol values only) accepts an answer that hard-codes or forgets
that parameter. So, for every exercise module under unified_rl.course.ex (found automatically: a new
notebook's module is checked as soon as it exists), the inputs each checker really runs are inspected:

- a function exercise: every parameter of its solution's signature is passed in every random draw (none
  left at its default); a number is drawn from a range (at least two values) that excludes 0, 1 and its
  default; masks vary in T and in B, their rows are ragged, and T differs from `max_len`; a per-token
  tensor carries non-zero values off its mask (every reference masks them, so the convention allows it);
- an expression exercise: every symbol whose domain allows negative numbers is evaluated at points of
  both signs where the expected expression is finite; a symbol declared positive is one of the reviewed
  declarations below.

`problems(q)` states each violation; the planted tests fix one parameter back and watch it found.
"""

import importlib
import inspect
import pkgutil

import pytest
import sympy
import torch

import unified_rl.course.ex as ex_pkg
from unified_rl.course import exercises as E
from unified_rl.course.symbolic import _number, may_be_negative

MODULES = sorted(m.name for m in pkgutil.iter_modules(ex_pkg.__path__))
ALL = [(m, n, q) for m in MODULES
       for n, q in E.exercises_in(importlib.import_module(f"unified_rl.course.ex.{m}")).items()]
FUNCTIONS = [(m, n, q) for m, n, q in ALL if isinstance(q, E.FunctionExercise)]
EXPRESSIONS = [(m, n, q) for m, n, q in ALL if isinstance(q, E.ExpressionExercise)]
_ids = lambda rows: [f"{m}.{n}" for m, n, _ in rows]  # noqa: E731

# Symbols declared positive, each reviewed: its quantity cannot be negative (or 0), so positive points suffice.
POSITIVE = {
    "beta": "a KL or preference strength, > 0", "tau": "IPO's regulariser, > 0",
    "gamma": "a discount in (0, 1]", "lam": "GAE's weight in [0, 1]",
    "n1": "a response length", "n2": "a response length", "GC": "solved for, not evaluated",
    "n": "a number of samples", "c": "a number of correct samples",
    "I_1": "an indicator, 0 or 1 (positive points stand for 1)", "I_2": "an indicator, 0 or 1",
    "r": "a 0/1 reward (positive points stand for 1)", "epsilon": "a flip probability",
    "rho": "a sampler's probability of a right answer",
}


def _params(fn):
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _defaults(q):
    out = {}
    for fn in (q.reference, q.solution_value):
        for p in inspect.signature(fn).parameters.values():
            if p.default is not p.empty and isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                out.setdefault(p.name, set()).add(float(p.default))
    return out


def _draws(q):
    return [kw for where, kw in q.inputs() if where.startswith("random")]


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _mask_for(name, masks):
    """The mask a per-token tensor is paired with: by affix (`logp_chosen` -> `mask_chosen`), else `mask`."""
    for m in masks:
        affix = m.replace("mask", "").strip("_")
        if affix and affix in name:
            return m
    return "mask" if "mask" in masks else (next(iter(masks)) if len(masks) == 1 else None)


def problems(q):
    """Every way the inputs q's checker draws break the varied-input rule, in words (empty: none)."""
    if isinstance(q, E.ExpressionExercise):
        return _expression_problems(q)
    if not isinstance(q, E.FunctionExercise):
        return []
    draws = _draws(q)
    if len(draws) < 3:
        return [f"draws {len(draws)} random inputs; at least 3 are needed to vary anything"]
    out, defaults = [], _defaults(q)
    for name in _params(q.solution_value):
        missing = sum(name not in kw for kw in draws)
        if missing:
            out.append(f"`{name}` is left at its default in {missing} of {len(draws)} draws")
    for name in sorted({k for kw in draws for k, v in kw.items() if _is_number(v)}):
        values = [float(kw[name]) for kw in draws if _is_number(kw.get(name))]
        banned = {**{d: "its default" for d in defaults.get(name, ())}, 0.0: "0", 1.0: "1"}
        hits = [(v, what) for v in values for b, what in banned.items() if abs(v - b) <= 1e-9 * max(1.0, abs(b))]
        if hits:
            v, what = hits[0]
            out.append(f"`{name}` = {v:g} is {what} in {len(hits)} draws: an answer that hard-codes or forgets it "
                       "would pass")
        if len(set(values)) < 2:
            out.append(f"`{name}` takes one value ({values[0]:g}) in every draw: a hard-coded {values[0]:g} would pass")
    mask_names = sorted({k for kw in draws for k, v in kw.items()
                         if "mask" in k and torch.is_tensor(v) and v.dim() == 2})
    for m in mask_names:
        shapes = [tuple(kw[m].shape) for kw in draws]
        if len({s[1] for s in shapes}) < 2:
            out.append(f"`{m}` has T = {shapes[0][1]} in every draw")
        if len({s[0] for s in shapes}) < 2:
            out.append(f"`{m}` has B = {shapes[0][0]} rows in every draw")
        ragged = sum(len(set(kw[m].sum(-1).tolist())) > 1 for kw in draws)
        if 2 * ragged < len(draws):
            out.append(f"`{m}`'s rows are ragged in only {ragged} of {len(draws)} draws")
        off_mask = sum(bool((kw[m] == 0).any()) for kw in draws)
        if 2 * off_mask < len(draws):
            out.append(f"`{m}` has positions off the mask in only {off_mask} of {len(draws)} draws")
    for kw in draws:
        if "max_len" in kw and any(float(kw["max_len"]) == kw[m].shape[-1] for m in mask_names):
            out.append(f"max_len = {kw['max_len']:g} is the padded width T: the padded width for L would pass")
            break
    for name in sorted({k for kw in draws for k, v in kw.items()
                        if torch.is_tensor(v) and v.dim() == 2 and v.is_floating_point() and "mask" not in k}):
        for kw in draws:
            m = _mask_for(name, [k for k in mask_names if k in kw])
            if m is None or kw[m].shape != kw[name].shape or not (kw[m] == 0).any():
                continue
            if not kw[name].detach()[kw[m] == 0].ne(0).any():
                out.append(f"`{name}` is 0 everywhere off `{m}`: an unmasked sum would pass")
                break
    return out


def _expression_problems(q):
    want = sympy.sympify(q.solution_value)
    out = [f"`{s.name}` is declared positive without a reviewed reason (a log-prob or an advantage is not)"
           for s in want.free_symbols if not may_be_negative(s) and s.name not in POSITIVE]
    evaluated = [p for p in q.eval_points() if _number(want, p) is not None]
    if 2 * len(evaluated) < len(q.eval_points()):
        out.append(f"the expected expression is finite at only {len(evaluated)} of {len(q.eval_points())} points")
    for s in sorted(want.free_symbols, key=lambda s: s.name):
        if may_be_negative(s) and len({p[s] > 0 for p in evaluated}) < 2:
            out.append(f"`{s.name}` may be negative but the checker evaluates it at one sign only")
    return out


@pytest.mark.parametrize("module,name,q", FUNCTIONS + EXPRESSIONS, ids=_ids(FUNCTIONS + EXPRESSIONS))
def test_every_checker_varies_every_input(module, name, q):
    assert problems(q) == [], f"{module}.{name}: " + "; ".join(problems(q))


def test_every_notebook_module_is_covered():
    """The rule runs over every notebook's module (00-11 today; a new one is picked up by pkgutil)."""
    numbered = {m for m in MODULES if m.startswith("nb")}
    assert {f"nb{i:02d}" for i in range(12)} <= {m[:4] for m in numbered}
    assert {m for m, _, _ in FUNCTIONS + EXPRESSIONS} >= {"nb00_paradigm", "nb10_beyond_grpo", "nb11_preference"}


# Planted: the rule must find a parameter fixed back, a T equal to max_len, zeros off the mask, one sign.
def _planted(q, change):
    def random_inputs(gen):
        return change(q.random_inputs(gen))
    return E.FunctionExercise(q.reference, random_inputs=random_inputs, n_random=q.n_random, detached=q.detached,
                              solution_value=q.solution_value, seed=q.seed)


def test_planted_fixed_parameters_are_found():
    from unified_rl.course.ex import nb10_beyond_grpo as nb10
    from unified_rl.course.ex import nb11_preference as nb11
    assert problems(nb10.q1) == [] and problems(nb11.q3) == []
    found = "; ".join(problems(_planted(nb11.q3, lambda kw: {**kw, "lam_u": 1.0})))
    assert "`lam_u` = 1 is 1 in 5 draws" in found and "`lam_u` takes one value" in found
    found = "; ".join(problems(_planted(nb10.q1, lambda kw: {**kw, "max_len": float(kw["mask"].shape[-1])})))
    assert "the padded width for L would pass" in found
    found = "; ".join(problems(_planted(nb10.q1, lambda kw: {**kw, "logp": kw["logp"] * kw["mask"]})))
    assert "`logp` is 0 everywhere off `mask`" in found
    found = "; ".join(problems(_planted(nb10.q1, lambda kw: {k: v for k, v in kw.items() if k != "beta"})))
    assert "`beta` is left at its default" in found
    full = lambda kw: {**kw, "mask": torch.ones_like(kw["mask"])}  # noqa: E731
    assert "rows are ragged in only 0" in "; ".join(problems(_planted(nb10.q1, full)))


def test_planted_one_signed_symbol_is_found():
    x, beta = sympy.Symbol("x", positive=True), sympy.Symbol("beta", positive=True)
    q = E.ExpressionExercise(beta / (1 + sympy.exp(beta * x)), wrong=[1, 2])
    assert "`x` is declared positive" in "; ".join(problems(q))
    x = sympy.Symbol("x", real=True)
    assert problems(E.ExpressionExercise(beta / (1 + sympy.exp(beta * x)), wrong=[1, 2])) == []
    q = E.ExpressionExercise(sympy.log(x), wrong=[1, 2])  # finite (real) at positive x only
    assert "one sign only" in "; ".join(problems(q))


# The wrong answers the rule exposed, each with the input fixed back under which the checker accepted it.
_zeros_off = lambda *names: lambda kw: {**kw, **{n: kw[n] * kw[_mask_for(n, [k for k in kw if "mask" in k])]  # noqa: E731
                                                 for n in names}}
EXPOSED = [
    ("example", "q2", "_eps_ignored", lambda kw: {k: v for k, v in kw.items() if k != "eps"}),
    ("nb04_dpo", "q2", "_unmasked", _zeros_off("logp_chosen", "logp_ref_chosen", "logp_rejected", "logp_ref_rejected")),
    ("nb05_ppo", "q5", "_eps_hard_coded", lambda kw: {**kw, "clip_eps": 0.2}),
    ("nb05_ppo", "q5", "_no_mask", _zeros_off("adv")),
    ("nb06_grpo", "q2", "_beta_hard_coded", lambda kw: {**kw, "beta": 0.1}),
    ("nb08_effective_rl", "q2", "_eps_ignored", lambda kw: {k: v for k, v in kw.items() if k != "eps"}),
    ("nb10_beyond_grpo", "q1", "_dr_padded_width", lambda kw: {**kw, "max_len": float(kw["mask"].shape[-1])}),
    ("nb10_beyond_grpo", "q2", "_cispo_eps_hard_coded", lambda kw: {**kw, "clip_eps_high": 0.28}),
    ("nb11_preference", "q2", "_simpo_unmasked", _zeros_off("logp_chosen", "logp_rejected")),
    ("nb11_preference", "q3", "_kto_no_lam_u", lambda kw: {**kw, "lam_u": 1.0}),
    ("nb11_preference", "q3", "_kto_unmasked", _zeros_off("logp", "logp_ref")),
]


@pytest.mark.parametrize("module,name,wrong,fixed_back", EXPOSED, ids=[f"{m}.{n}.{w}" for m, n, w, _ in EXPOSED])
def test_the_rule_exposes_each_pinned_wrong_answer(module, name, wrong, fixed_back):
    """Rejected on varied inputs; accepted once the input is fixed back: the rule, not luck, rejects it."""
    mod = importlib.import_module(f"unified_rl.course.ex.{module}")
    q, fn = getattr(mod, name), getattr(mod, wrong)
    assert fn in q.wrong and not q.check(fn) and q.last_status == E.WRONG, q.last_message
    planted = _planted(q, fixed_back)
    assert planted.check(q.solution_value), planted.last_message
    assert planted.check(fn), f"{wrong} is rejected even with the input fixed back: {planted.last_message}"
    assert problems(planted), "the rule does not see the input fixed back"


def test_a_one_signed_advantage_hid_the_lost_sign():
    """nb05 q1: |A| r agrees with A r wherever A > 0, the only sign its checker used to try."""
    from unified_rl.course.ex import nb05_ppo as nb05
    wrong = sympy.Abs(nb05.A) * sympy.exp(nb05.ell - nb05.ell_old)
    assert any(sympy.simplify(w - wrong) == 0 for w in nb05.q1.wrong)
    assert not nb05.q1.check(wrong) and "not equal" in nb05.q1.last_message
    a_pos = sympy.Symbol("A", positive=True)
    assert sympy.simplify((wrong - nb05.q1.solution_value).subs(nb05.A, a_pos)) == 0


def _exercise_cells(path):
    """The code cells of a notebook from the one importing its exercise module on."""
    import json
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    start = next((i for i, c in enumerate(cells) if "from unified_rl.course.ex." in c), None)
    return [] if start is None else cells[start:]


NOTEBOOKS = sorted((__import__("pathlib").Path(__file__).parents[1] / "course").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_notebooks_own_solutions_pass_the_varied_checkers(path, capsys):
    """The solutions written in the notebooks (not only the modules' sample solutions) meet the new inputs."""
    import re
    cells = _exercise_cells(path)
    ns, checked = {}, []
    exec("import math, itertools\nimport sympy, torch\n"
         "from unified_rl import advantages, coefficients, metrics, objectives, paradigm\n", ns)
    for cell in cells:
        name = re.search(r"^(q\d+)\.check\(\)", cell, re.M)
        if name and "BEGIN SOLUTION" not in cell:
            q = ns[name.group(1)]
            assert q.check(ns.get(q.var)), f"{path.name} {q.label}: {q.last_message}"
            checked.append(q)
        elif "BEGIN SOLUTION" in cell:
            exec(cell, ns)
        else:
            try:
                exec(cell, ns)
            except NameError:  # a demonstration on the notebook's own model (12's SmolLM2), not an answer
                pass
    assert checked or not cells, f"{path.name}: no check() cell found in its exercise section"
