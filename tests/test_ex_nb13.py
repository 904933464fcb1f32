"""Notebook 13's checkers against the wrong answers a learner writes: a teacher reward without stop-gradient, the
sampler ratio the wrong way round, the truncation on the advantage instead of the weight, a missing beta, a
hard-coded constant. Each is rejected for its own reason (the message says which), gradients are compared (a
leak with the right values fails, even with the checker's own detach test switched off), the references are the
package's parts, and the notebook's own answers pass. The planted checkers at the end draw a parameter at one
value: then the hard-coded answer passes, so the real checkers' rejection is their varied inputs' doing.
"""

import json
from pathlib import Path

import pytest
import torch

from unified_rl.course import exercises as E
from unified_rl.course.ex import nb13_teachers as ex
from unified_rl.parts.advantages.teacher import opd
from unified_rl.parts.policy_terms.gkd import gkd

NOTEBOOK = Path(__file__).resolve().parents[1] / "course" / "13_teachers_and_stale_samples.ipynb"

NAMED = [  # the brief's slips, each with the words its rejection must carry
    ("q1", "_opd_no_stop_gradient", "still carries a gradient"),  # a teacher reward without stop-gradient
    ("q2", "_tis_no_stop_gradient", "still carries a gradient"),
    ("q2", "_tis_reversed", "expected"),  # pi_sampler / pi_old
    ("q2", "_tis_on_advantage", "expected"),  # min(A, C) rho
    ("q2", "_tis_on_product", "expected"),  # min(rho A, C)
    ("q2", "_tis_cap_hard_coded", "expected"),  # C = 2 whatever cap is
    ("q2", "_tis_policy_ratio", "expected"),  # pi_theta / pi_sampler
    ("q3", "_gkd_no_lead", "expected"),  # the factor (1 - beta) missing
    ("q3", "_gkd_beta_half", "expected"),  # beta = 0.5 hard-coded
    ("q3", "_gkd_mixture_swapped", "expected"),
    ("q3", "_gkd_not_detached", "still carries a gradient"),
]


@pytest.mark.parametrize("name,wrong,says", NAMED, ids=[f"{q}.{w}" for q, w, _ in NAMED])
def test_each_named_slip_is_rejected_for_its_reason(name, wrong, says):
    q, fn = getattr(ex, name), getattr(ex, wrong)
    assert fn in q.wrong
    assert not q.check(fn) and q.last_status == E.WRONG and says in q.last_message, q.last_message


@pytest.mark.parametrize("name", ["q1", "q2", "q3"])
def test_the_coefficients_are_checked_by_their_gradient(name):
    q = getattr(ex, name)
    assert q.checks_gradient and q.grad == ("logp",)
    assert not q.check(E.leaky(q.solution_value, q.grad)) and "gradient" in q.last_message, q.last_message


@pytest.mark.parametrize("name,wrong", [("q1", "_opd_no_stop_gradient"), ("q2", "_tis_no_stop_gradient"),
                                        ("q3", "_gkd_not_detached")])
def test_a_reward_left_in_the_graph_fails_on_its_gradient_alone(name, wrong):
    """With the result's own requires_grad test off, eq 5's surrogate still tells the undetached answer apart."""
    q = getattr(ex, name)
    bare = E.FunctionExercise(q.reference, dict(q.cases), random_inputs=q.random_inputs, detached=False,
                              grad=q.grad, loss=q.loss, solution_value=q.solution_value, wrong=q.wrong)
    assert bare.check(q.solution_value)
    assert not bare.check(getattr(ex, wrong))
    assert "gradient" in bare.last_message and "`logp`" in bare.last_message, bare.last_message


def test_the_references_are_the_packages_parts():
    assert ex.q1.reference is opd
    g = torch.Generator().manual_seed(3)
    kw = ex._opd_tis_inputs(g)
    rho = torch.exp(kw["logp_old"] - kw["sampler_logp"])
    want = opd(kw["teacher_logp"], kw["logp"], kw["mask"]) * rho.clamp(max=kw["cap"])  # the tis weight on OPD's A
    assert torch.allclose(ex._opd_tis_reference(**kw), want, atol=1e-6)
    for where, kw in ex.q2.inputs():  # every random input the checker runs reaches past the cap and below 1
        if not where.startswith("random"):
            continue
        rho = torch.exp(kw["logp_old"] - kw["sampler_logp"])[kw["mask"].bool()]
        assert (rho > kw["cap"]).any() and (rho < 1).any(), where
    kw = ex._gkd_inputs(g)
    one = torch.ones_like(kw["logp"])
    assert torch.equal(ex._gkd_reference(**kw), gkd(one, kw["logp"], kw["teacher_logp"], kw["mask"], kw["beta"]))
    assert ex.q4.solution_value == pytest.approx(1.6, abs=1e-6)  # min(3, 2) * 0.8, by the composition


def _answers():
    """The notebook's own answer cells, run: {variable: value}."""
    ns = {"torch": torch, "q5": ex.q5}
    for cell in json.loads(NOTEBOOK.read_text())["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), ns)
    return ns


def test_the_notebooks_own_answers_pass():
    ns = _answers()
    for q in (ex.q1, ex.q2, ex.q3, ex.q4, ex.q5):
        assert q.check(ns[q.var]), (q.var, q.last_message)


def test_a_checker_with_one_cap_or_one_beta_would_accept_the_hard_coded_answer():
    """The plant: the same checkers with cap fixed at 2 (beta at 0.5) in every input pass the hard-coded answers."""
    fixed_cap = lambda g: {**ex._opd_tis_inputs(g), "cap": 2.0}  # noqa: E731
    q2 = E.FunctionExercise(ex._opd_tis_reference, random_inputs=fixed_cap, detached=True,
                            solution_value=ex._opd_tis_solution, wrong=ex.q2.wrong)
    assert q2.check(ex._tis_cap_hard_coded) and not ex.q2.check(ex._tis_cap_hard_coded)
    fixed_beta = lambda g: {**ex._gkd_inputs(g), "beta": 0.5}  # noqa: E731
    q3 = E.FunctionExercise(ex._gkd_reference, random_inputs=fixed_beta, detached=True,
                            solution_value=ex._gkd_solution, wrong=ex.q3.wrong)
    assert q3.check(ex._gkd_beta_half) and not ex.q3.check(ex._gkd_beta_half)
