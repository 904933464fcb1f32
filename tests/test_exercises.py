"""Every exercise checker fails on the stub, fails on plausible wrong answers and passes on its solution.

The generic tests run over every exercise module under unified_rl.course.ex, so each notebook's
exercises are checked as soon as their module exists: each declares at least two plausible wrong
answers and rejects them, reads odd answers (numpy, multi-element tensors) without crashing, and a
checker of a coefficient, objective or surrogate compares gradients and rejects a gradient leak.
"""

import importlib
import inspect
import pkgutil
import time

import numpy as np
import pytest
import sympy
import torch

import unified_rl.course.ex as ex_pkg
from unified_rl import advantages, coefficients, objectives, paradigm
from unified_rl.course import display
from unified_rl.course import exercises as E
from unified_rl.course.ex import example

MODULES = sorted(m.name for m in pkgutil.iter_modules(ex_pkg.__path__))
ALL = [(m, n) for m in MODULES for n in E.exercises_in(importlib.import_module(f"unified_rl.course.ex.{m}"))]


def _exercise(module, name):
    return getattr(importlib.import_module(f"unified_rl.course.ex.{module}"), name)


@pytest.mark.parametrize("module,name", ALL, ids=[f"{m}.{n}" for m, n in ALL])
def test_every_exercise_checker(module, name, capsys):
    q = _exercise(module, name)
    assert not q.check(q.stub) and q.last_status == E.NOT_ATTEMPTED
    assert "Not attempted yet" in capsys.readouterr().out
    assert q.check(q.solution_value), q.last_message
    assert q.last_crash is None
    assert len(q.wrong) >= 2, f"{module}.{name} lists fewer than two plausible wrong answers to test its checker on"
    for w in q.wrong:
        verdict = q.check(w)
        assert not verdict and q.last_status == E.WRONG, f"{module}.{name} accepted {w!r}"
        assert q.last_crash is None, f"{module}.{name} crashed on {w!r}: {q.last_crash!r}"
    q.hint()
    q.solution()
    assert capsys.readouterr().out.strip()


ODD_ANSWERS = [np.float64(0.3), np.int64(-1), np.array([1.0, 2.0]), np.array(0.5), torch.ones(3),
               torch.tensor([[1.0, -1.0]], requires_grad=True), "not an answer", 7, {"a": 1}, [1, 2]]


@pytest.mark.parametrize("module,name", ALL, ids=[f"{m}.{n}" for m, n in ALL])
def test_checkers_read_odd_answers_without_crashing(module, name, capsys):
    q = _exercise(module, name)
    for answer in ODD_ANSWERS:
        q.check(answer)
        assert q.last_crash is None, f"{module}.{name} crashed on {answer!r}: {q.last_crash!r}"
        assert q.last_status in (E.WRONG, E.CORRECT)


_GRADIENT_MODULES = {coefficients.__name__, objectives.__name__, paradigm.__name__}


def _checks_a_gradient_quantity(q):
    """Whether q's reference is a coefficient, an objective or the surrogate (not an advantage or metric)."""
    ref_module = inspect.getmodule(q.reference).__name__
    return any(ref_module == m or ref_module.startswith(m + ".") for m in _GRADIENT_MODULES)


GRADIENT_QS = [(m, n) for m, n in ALL if isinstance(_exercise(m, n), E.FunctionExercise)
               and _checks_a_gradient_quantity(_exercise(m, n))]


def test_gradient_exercises_are_found():
    assert {("nb00_paradigm", "q3"), ("nb01_sft", "q2"), ("nb02_rft", "q2"), ("nb03_online_rft", "q2"),
            ("nb04_dpo", "q2")} <= set(GRADIENT_QS)


@pytest.mark.parametrize("module,name", GRADIENT_QS, ids=[f"{m}.{n}" for m, n in GRADIENT_QS])
def test_gradient_checkers_reject_a_gradient_leak(module, name):
    """A coefficient, objective or surrogate is checked by its gradient: a leak with the right values fails."""
    q = _exercise(module, name)
    assert q.checks_gradient, f"{module}.{name} checks {q.reference.__name__} without comparing gradients"
    if q.grad:  # inputs that require grad exist: a forgotten detach can leak
        assert not q.check(E.leaky(q.solution_value, q.grad))
        assert q.last_status == E.WRONG and "gradient" in q.last_message, q.last_message


def test_example_module_has_every_kind():
    kinds = {type(q) for q in E.exercises_in(example).values()}
    assert {E.ExpressionExercise, E.FunctionExercise, E.ValueExercise, E.SignExercise, E.ChoiceExercise} <= kinds
    assert example.q1.name == "q1"


def test_check_reads_the_declared_variable_from_the_callers_globals(capsys):
    ns = {"q": example.q5}
    exec("ok = q.check()", ns)  # like a notebook cell: the answer is a global of the caller
    assert not ns["ok"] and "define `online_rft_differs_in`" in capsys.readouterr().out
    exec("online_rft_differs_in = 'Data source'\nok = q.check()", ns)
    assert ns["ok"] and ns["ok"] == True  # noqa: E712 - a Verdict compares equal to the bool it stands for


def test_check_reads_the_callers_locals_too():
    online_rft_differs_in = "coefficient"  # noqa: F841 - read by check() through the frame
    assert not example.q5.check()
    assert "eq 10 and eq 11" in example.q5.last_message


def test_check_without_variable_needs_an_argument():
    q = E.ValueExercise(1.0, wrong=[2.0])
    with pytest.raises(ValueError, match="declares no variable"):
        q.check()


def test_placeholders_are_not_attempted():
    for answer in (None, ...):
        assert not example.q4.check(answer) and example.q4.last_status == E.NOT_ATTEMPTED


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
    assert not q.check(lambda adv, mask: adv * mask) and "carries a gradient" in q.last_message

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
    monkeypatch.setattr(display, "in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    example.q2.hint(2)
    example.q2.solution()
    example.q2.check(example.q2.solution_value)
    texts = [s.data for s in shown]
    assert "**Hint 2/2**" in texts[0]
    assert "def my_group_relative(" in texts[1] and "```python" in texts[1]
    assert "Correct" in texts[2] and "color:" in texts[2]


# (module, exercise, wrong answer, what the message must say): each mistake rejected for its own reason
PINNED = [
    ("nb00_paradigm", "q3", "_no_detach", "gradient reaches `coef`"),
    ("nb00_paradigm", "q3", "_token_mean", "gradient with respect to `logp`"),  # per token, not per sequence
    ("nb00_paradigm", "q3", "_no_minus", "expected 0.75"),  # wrong sign
    ("nb00_paradigm", "q3", "_batch_sum", "expected 0.75"),  # sum instead of mean
    ("nb01_sft", "q2", "_detached", "gradient with respect to `logp` is 0"),
    ("nb01_sft", "q2", "_token_mean", "gradient with respect to `logp`"),
    ("nb01_sft", "q2", "_batch_sum", "expected -2"),
    ("nb01_sft", "q2", "_negated", "expected -2"),
    ("nb02_rft", "q2", "_negative_on_wrong", "expected 0"),
    ("nb02_rft", "q2", "_last_token_only", "expected 1"),
    ("nb03_online_rft", "q2", "_detached", "gradient with respect to `logp` is 0"),
    ("nb03_online_rft", "q2", "_batch_sum", "expected -0.75"),
    ("nb04_dpo", "q2", "_not_detached", "still carries a gradient"),
    ("nb04_dpo", "q2", "_printed", "expected"),  # the leading beta missing
    ("nb04_dpo", "q2", "_per_token", "expected"),  # eq 14's per-token argument
    ("nb04_dpo", "q2", "_summed", "expected"),  # sums instead of means
    ("nb04_dpo", "q2", "_same_sign", "expected"),  # wrong sign on the rejected response
    ("example", "q2", "_population_std", "expected"),
    # exposed by varied inputs (tests/test_varied_inputs.py): a hard-coded constant, a forgotten factor,
    # the padded width for L, an unmasked sum
    ("example", "q2", "_eps_ignored", "expected"),
    ("nb04_dpo", "q2", "_unmasked", "expected"),
    ("nb05_ppo", "q5", "_eps_hard_coded", "expected"),
    ("nb05_ppo", "q5", "_no_mask", "expected 0"),
    ("nb06_grpo", "q2", "_beta_hard_coded", "expected"),
    ("nb08_effective_rl", "q2", "_eps_ignored", "expected"),
    ("nb10_beyond_grpo", "q1", "_dr_padded_width", "expected"),
    ("nb10_beyond_grpo", "q2", "_cispo_eps_hard_coded", "expected"),
    ("nb11_preference", "q2", "_simpo_unmasked", "expected"),
    ("nb11_preference", "q3", "_kto_no_lam_u", "expected"),
    ("nb11_preference", "q3", "_kto_unmasked", "expected"),
    # notebook 12: an all-zero GRPO group (beta = 0), a surrogate without coef.detach(), right padding after
    # the end-of-turn token, and the chat rollout's mask and pi_ref of its own exercises
    ("nb12_real_model", "q1", "_micro_live_rows", "coefficient is 0"),
    ("nb12_real_model", "q1", "_micro_no_detach", "a gradient reaches `coef`"),
    ("nb12_real_model", "q3", "_logp_to_row_end", "expected -0"),
    ("nb12_real_model", "q4", "_mask_to_row_end", "expected 0"),
    ("nb12_real_model", "q4", "_mask_without_end", "expected 1"),
    ("nb12_real_model", "q5", "_ref_adapter_on", "expected"),
    ("nb12_real_model", "q5", "_ref_no_attention_mask", "expected"),
]


@pytest.mark.parametrize("module,name,wrong,says", PINNED, ids=[f"{m}.{n}.{w}" for m, n, w, _ in PINNED])
def test_pinned_wrong_answers(module, name, wrong, says):
    mod = importlib.import_module(f"unified_rl.course.ex.{module}")
    q, fn = getattr(mod, name), getattr(mod, wrong)
    assert fn in q.wrong, f"{module}.{name} no longer lists {wrong} among its wrong answers"
    assert not q.check(fn) and q.last_status == E.WRONG and says in q.last_message, q.last_message


def test_the_derivative_shortcut_no_longer_answers_notebook_03s_expectation():
    """dp/dtheta equals the expectation only for the sampler rho = p: the checker sees the difference."""
    from unified_rl.course.ex import nb03_online_rft as nb03
    shortcut = sympy.diff(nb03._p, nb03.theta)
    assert any(sympy.simplify(w - shortcut) == 0 for w in nb03.q1.wrong)
    assert not nb03.q1.check(shortcut) and nb03.q1.last_status == E.WRONG
    assert sympy.simplify(nb03.q1.solution_value.subs(nb03.rho, nb03._p) - shortcut) == 0  # online: rho = p


def test_undetached_coefficient_is_rejected_by_its_gradient_too():
    """With the result's own requires_grad check off, the surrogate's gradient still tells a leak apart."""
    from unified_rl.course.ex import nb04_dpo
    q = E.FunctionExercise(coefficients.dpo, dict(nb04_dpo.q2.cases), solution_value=nb04_dpo._dpo_solution,
                           detached=False, grad=("logp_chosen", "logp_rejected"), loss=nb04_dpo.q2.loss)
    assert q.check(nb04_dpo._dpo_solution)
    assert not q.check(nb04_dpo._not_detached) and "gradient with respect to `logp_chosen`" in q.last_message


def test_verdict_shows_nothing_as_a_cells_value():
    from IPython.core.interactiveshell import InteractiveShell
    verdict = example.q5.check("data source")
    assert isinstance(verdict, E.Verdict) and verdict and verdict == True  # noqa: E712
    data, _ = InteractiveShell.instance().display_formatter.format(verdict)
    assert data == {}  # no "True" echoed under the verdict
    wrong = example.q5.check("reward")
    assert not wrong and wrong == False and wrong.status == E.WRONG  # noqa: E712


def test_numpy_and_tensor_answers(capsys):
    q = E.ValueExercise(0.5, atol=1e-6, wrong=[0.4, 0.6])
    assert q.check(np.float64(0.5)) and q.check(np.array([0.5])) and q.check(torch.tensor([[0.5]]))
    assert not q.check(np.array([0.5, 0.5])) and "shape (2,)" in q.last_message
    assert not q.check(torch.ones(3)) and "shape (3,)" in q.last_message
    assert not q.check(True) and "expected a number" in q.last_message
    assert example.q3.check(np.int64(-1)) and example.q3.check(torch.tensor(-2.0))
    assert not example.q3.check(np.array([-1, -1])) and "answer 1, -1 or 0" in example.q3.last_message
    assert not example.q5.check(np.array(["data source", "reward"])) and example.q5.last_crash is None
    assert not example.q1.check(np.array([1.0, 2.0])) and "one sympy expression" in example.q1.last_message
    assert example.q2.last_crash is None


def test_huge_expressions_never_hang():
    from unified_rl.course.symbolic import compare_expressions

    x = sympy.Symbol("x")
    t = time.time()
    assert not example.q1.check(x ** (10 ** 8)) and "not equal" in example.q1.last_message  # no overflow
    assert time.time() - t < 2
    want = sympy.sympify(example.q1.solution_value)
    for slow in (sympy.exp(sympy.exp(sympy.exp(50 * x))),  # a point takes forever to evaluate
                 sympy.Add(*[sympy.Function("f")(x) ** k * sympy.sin(x) ** k / (1 + x) ** k  # no point evaluates:
                             for k in range(1, 60)])):  # only algebra could decide
        t = time.time()
        msg = compare_expressions(slow, want, time_limit_s=0.5)
        assert time.time() - t < 3 and msg and "could not be compared within 0.5 s" in msg


def test_solutions_can_be_turned_off(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UNIFIED_RL_SOLUTIONS", raising=False)
    example.q2.solution()
    assert "def my_group_relative(" in capsys.readouterr().out  # on by default (instructors, the source course)
    (tmp_path / display.STUDENT_FLAG).write_text("student copy\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # the flag of a folder above counts too
    example.q2.solution()
    out = capsys.readouterr().out
    assert "turned off" in out and "group_relative" not in out
    monkeypatch.setenv("UNIFIED_RL_SOLUTIONS", "1")  # an instructor turns them back on
    example.q2.solution()
    assert "def my_group_relative(" in capsys.readouterr().out
    monkeypatch.setenv("UNIFIED_RL_SOLUTIONS", "0")
    monkeypatch.chdir(tmp_path.parent)
    assert not display.solutions_shown()


def test_hints_keep_code_and_stars_in_markdown(monkeypatch):
    shown = []
    monkeypatch.setattr(display, "in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    q = E.ValueExercise(1.0, hint=["GC = beta * sigma(x) and *not* 2 * x; see <eos> and `a * b_c`"], wrong=[2, 3])
    q.hint()
    text = shown[-1].data
    assert r"beta \* sigma(x)" in text and r"\*not\* 2 \* x" in text and "&lt;eos&gt;" in text
    assert "`a * b_c`" in text  # code spans untouched
    q.check(2.0)
    assert "<code>" not in shown[-1].data and "Incorrect" in shown[-1].data


# --- an answer given the learner's model (or list) must leave it as it found it

def test_q5_rejects_the_right_numbers_from_a_damaged_model_and_only_the_guard_catches_them():
    """Each of q5's damaging answers returns pi_ref's log-probs exactly (with the checker's reading of the model
    afterwards switched off, every one is Correct: the plant) and leaves the learner's model changed: adapters
    unloaded, zeroed, left off, frozen, cast to float32, moved to another device, silenced by a hook. The
    checker rejects each and says what changed; the solution passes and leaves the model as it was."""
    from unified_rl.course import gradcheck
    from unified_rl.course.ex import nb12_real_model as ex
    q = ex.q5
    says = ["are gone", "changed value", "requires_grad went from True to False", "requires_grad went from True to False",
            "moved from torch.float64, cpu to torch.float32, cpu", "moved from torch.float64, cpu to torch.float64, meta",
            "no longer computes what it did"]
    assert len(ex._ref_damaging) == len(says)
    for answer, why in zip(ex._ref_damaging, says):
        assert not q.check(answer) and "changed the model `model`" in q.last_message and why in q.last_message, \
            (answer.__doc__, q.last_message)
    unguarded = gradcheck.FunctionExercise._unharmed
    try:
        gradcheck.FunctionExercise._unharmed = lambda self, *a: None
        assert all(q.check(answer) for answer in ex._ref_damaging)
    finally:
        gradcheck.FunctionExercise._unharmed = unguarded
    inputs = ex._lora_llama(torch.Generator().manual_seed(0))
    before = ex._policy_logp(**inputs)
    q.solution_value(**inputs)
    assert torch.equal(ex._policy_logp(**inputs), before) and gradcheck._model_damage(gradcheck._model_state(
        inputs["model"]), inputs["model"]) is None


def test_a_switched_off_adapter_is_named_even_where_requires_grad_is_untouched():
    from unified_rl.course import gradcheck
    from unified_rl.course.ex import nb12_real_model as ex
    model = ex._lora_llama(torch.Generator().manual_seed(1))["model"]
    state = gradcheck._model_state(model)
    for m in model.modules():
        if hasattr(m, "_disable_adapters"):
            m._disable_adapters = True
    assert "switched off" in gradcheck._model_damage(state, model)


def test_a_list_changed_in_place_is_seen():
    """nb07's Q3 is given the learner's list of answers: overwriting it with 0/1 marks gives the right number,
    and the checker, which now hands the answer a copy and compares, rejects it."""
    from unified_rl.course.ex import nb07_pass_maj as ex
    assert ex._marks_in_place(["3", None, "5"], "3") == ex._maj_at_1_reference(["3", None, "5"], "3")
    assert not ex.q3.check(ex._marks_in_place) and "modifies its input `answers` in place" in ex.q3.last_message
    assert ex.q3.cases  # the fixed cases' lists are the checker's own: still as written after the check
    assert list(ex.q3.cases.values())[0]["answers"] == ["3", "5", "5"]
