"""Every exercise checker fails on the stub, fails on plausible wrong answers and passes on its solution.

The generic test runs over every exercise module under unified_rl.course.ex, so each notebook's
exercises are checked as soon as their module exists.
"""

import importlib
import pkgutil

import pytest
import sympy
import torch

import unified_rl.course.ex as ex_pkg
from unified_rl import advantages, coefficients
from unified_rl.course import exercises as E
from unified_rl.course.ex import example

MODULES = sorted(m.name for m in pkgutil.iter_modules(ex_pkg.__path__))
ALL = [(m, n) for m in MODULES for n in E.exercises_in(importlib.import_module(f"unified_rl.course.ex.{m}"))]


@pytest.mark.parametrize("module,name", ALL, ids=[f"{m}.{n}" for m, n in ALL])
def test_every_exercise_checker(module, name, capsys):
    q = getattr(importlib.import_module(f"unified_rl.course.ex.{module}"), name)
    assert q.check(q.stub) is False and q.last_status == E.NOT_ATTEMPTED
    assert "Not attempted yet" in capsys.readouterr().out
    assert q.check(q.solution_value) is True, q.last_message
    assert q.wrong, f"{module}.{name} lists no plausible wrong answers to test its checker on"
    for w in q.wrong:
        assert q.check(w) is False and q.last_status == E.WRONG, f"{module}.{name} accepted {w!r}"
    q.hint()
    q.solution()
    assert capsys.readouterr().out.strip()


def test_example_module_has_every_kind():
    kinds = {type(q) for q in E.exercises_in(example).values()}
    assert {E.ExpressionExercise, E.FunctionExercise, E.ValueExercise, E.SignExercise, E.ChoiceExercise} <= kinds
    assert example.q1.name == "q1"


def test_check_reads_the_declared_variable_from_the_callers_globals(capsys):
    ns = {"q": example.q5}
    exec("ok = q.check()", ns)  # like a notebook cell: the answer is a global of the caller
    assert ns["ok"] is False and "define `online_rft_differs_in`" in capsys.readouterr().out
    exec("online_rft_differs_in = 'Data source'\nok = q.check()", ns)
    assert ns["ok"] is True


def test_check_reads_the_callers_locals_too():
    online_rft_differs_in = "coefficient"  # noqa: F841 - read by check() through the frame
    assert example.q5.check() is False
    assert "eq 10 and eq 11" in example.q5.last_message


def test_check_without_variable_needs_an_argument():
    q = E.ValueExercise(1.0, wrong=[2.0])
    with pytest.raises(ValueError, match="declares no variable"):
        q.check()


def test_placeholders_are_not_attempted():
    for answer in (None, ...):
        assert example.q4.check(answer) is False and example.q4.last_status == E.NOT_ATTEMPTED


def test_value_messages():
    q = E.ValueExercise(2.0, atol=0.1)
    assert q.check(2.05) and q.check(torch.tensor(1.95))
    assert not q.check(2.5) and "too high" in q.last_message
    assert not q.check(-2.0) and "wrong sign" in q.last_message
    assert not q.check("two") and "expected a number" in q.last_message
    assert not q.check(float("nan")) and "NaN" in q.last_message


def test_value_tensor_messages():
    q = E.ValueExercise(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert q.check(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert not q.check(torch.tensor([1.0, 2.0, 3.0, 4.0])) and "shape (4,), expected (2, 2)" in q.last_message
    assert not q.check(torch.tensor([[1.0, 2.0], [3.0, 5.0]])) and "index (1, 1)" in q.last_message
    assert not q.check(torch.tensor([[1.0, float("nan")], [3.0, 4.0]])) and "NaN at index (0, 1)" in q.last_message
    assert not q.check([[1.0, 2.0], [3.0, 4.0]]) and "should be a tensor" in q.last_message


def test_predict_then_run_computes_the_expected_value_once():
    runs = []
    q = E.ValueExercise(lambda: runs.append(1) or 0.5, atol=0.01)
    assert runs == []  # nothing runs at import time
    assert q.check(0.5) and not q.check(0.6)
    assert runs == [1]


def test_choice_and_sign():
    assert not example.q5.check("model size") and "not one of the options" in example.q5.last_message
    assert example.q5.check("  DATA SOURCE ")
    for yes in ("negative", "-", -1, -3.5, -0.2):
        assert example.q3.check(yes), yes
    for no in ("positive", "+", 1, 0, 0.3, "zero"):
        assert not example.q3.check(no), no
    with pytest.raises(ValueError, match="not one of the options"):
        E.ChoiceExercise(["a", "b"], "c")


def test_expression_accepts_equivalent_forms():
    b, x = sympy.symbols("beta x")  # no assumptions: matched to the exercise's symbols by name
    q = example.q1
    assert q.check(b * sympy.exp(-b * x) / (1 + sympy.exp(-b * x)))
    assert q.check("beta/(1 + exp(beta*x))")
    assert q.check(b * (1 - 1 / (1 + sympy.exp(-b * x))))


def test_expression_messages():
    b, x, y = sympy.symbols("beta x y")
    q = example.q1
    assert not q.check(-b / (1 + sympy.exp(b * x))) and "sign is flipped" in q.last_message
    assert not q.check(2 * b / (1 + sympy.exp(b * x))) and "constant factor of 2" in q.last_message
    assert not q.check(b / (1 + sympy.exp(b * y))) and "uses y" in q.last_message
    assert not q.check(sympy.Eq(x, b)) and "not an equation" in q.last_message
    assert not q.check("beta +* x") and "could not read" in q.last_message
    assert not q.check(1 / (1 + sympy.exp(b * x))) and "yours gives" in q.last_message


def test_function_reports_the_failing_case():
    def crashes(rewards, group_size, eps=1e-6):
        return rewards.view(group_size, -1)[5]

    q = example.q2
    assert not q.check(crashes) and "raised IndexError" in q.last_message and "case 'two groups of two'" in q.last_message
    assert not q.check(lambda rewards: rewards) and "unexpected keyword argument 'group_size'" in q.last_message
    assert not q.check(42) and "expected a function" in q.last_message


def test_function_catches_the_all_equal_edge_case():
    def no_guard(rewards, group_size, eps=1e-6):
        r = rewards.view(-1, group_size)
        return ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + eps)).view(-1)

    assert not example.q2.check(no_guard)
    assert "all equal and eps=0" in example.q2.last_message and "NaN" in example.q2.last_message


def test_function_detects_in_place_modification():
    def in_place(rewards, group_size, eps=1e-6):
        out = advantages.group_relative(rewards, group_size, eps)
        rewards.zero_()
        return out

    assert not example.q2.check(in_place) and "modifies its input `rewards`" in example.q2.last_message


def test_function_detached_and_tuple_outputs():
    mask = torch.ones(2, 3)
    q = E.FunctionExercise(coefficients.ppo, {"one": {"adv": torch.randn(2, 3, requires_grad=True), "mask": mask}},
                           detached=True, solution_value=coefficients.ppo, wrong=[lambda adv, mask: adv * mask])
    assert q.check(coefficients.ppo)
    assert not q.check(lambda adv, mask: adv * mask) and "requires grad" in q.last_message

    gae = E.FunctionExercise(advantages.gae, random_inputs=lambda g: {
        "rewards": torch.rand(2, 4, generator=g), "values": torch.rand(2, 4, generator=g),
        "mask": torch.ones(2, 4), "gamma": 0.9, "lam": 0.8})
    assert gae.check(advantages.gae)
    assert not gae.check(lambda **kw: advantages.gae(**kw)[0]) and "tuple of 2" in gae.last_message
    swapped = lambda **kw: advantages.gae(**kw)[::-1]  # noqa: E731
    assert not gae.check(swapped) and "value 0 of the result" in gae.last_message
    with pytest.raises(ValueError, match="needs cases or random_inputs"):
        E.FunctionExercise(advantages.gae)


def test_hint_and_solution_show_markdown_in_a_notebook(monkeypatch):
    shown = []
    monkeypatch.setattr(E, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    example.q2.hint(2)
    example.q2.solution()
    example.q2.check(example.q2.solution_value)
    texts = [s.data for s in shown]
    assert "**Hint 2/2**" in texts[0]
    assert "def my_group_relative(" in texts[1] and "```python" in texts[1]
    assert "Correct" in texts[2] and "color:" in texts[2]
