"""Edge cases and bad input of the core: no NaN, and a clear ValueError naming the problem."""

import math

import pytest
import torch

from unified_rl import advantages as A, coefficients as C, kl, objectives as O, paradigm as P
from unified_rl.methods import gc_of


def test_equal_rewards_give_zero_advantage_not_nan():
    adv = A.group_relative(torch.tensor([1.0, 1.0, 0.0, 0.0, 0.5, 0.5]), group_size=2)
    assert torch.equal(adv, torch.zeros(6))
    assert torch.equal(A.group_relative(torch.tensor([1.0, 0.0]), group_size=1), torch.zeros(2))
    assert torch.equal(A.group_relative(torch.ones(4), 4, eps=0.0), torch.zeros(4))


def test_group_relative_matches_torch_std():
    r = torch.tensor([0.0, 1.0, 1.0, 3.0, 2.0, 2.0, 2.0, 7.0])
    g = r.view(2, 4)
    expected = ((g - g.mean(1, keepdim=True)) / (g.std(1, keepdim=True) + 1e-6)).view(-1)
    assert torch.allclose(A.group_relative(r, 4), expected)


def test_process_advantage_sums_later_steps():
    # one group of 2; steps end at tokens 1 and 3 of row 0 and token 2 of row 1
    sm = torch.tensor([[0, 1, 0, 1], [0, 0, 1, 0]], dtype=torch.float64)
    sr = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 0]], dtype=torch.float64)
    adv = A.group_relative_process(sr, sm, 2)
    r = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    n = (r - r.mean()) / (r.std() + 1e-6)  # normalised over the group's three steps
    assert torch.allclose(adv[0], torch.stack([n[0] + n[1], n[0] + n[1], n[1], n[1]]))
    assert torch.allclose(adv[1], torch.stack([n[2], n[2], n[2], torch.tensor(0.0, dtype=torch.float64)]))


def test_gae_by_hand():
    r = torch.tensor([[0.0, 0.0, 1.0, 0.0]])
    v = torch.tensor([[0.5, 0.2, 0.4, 9.0]])
    m = torch.tensor([[1.0, 1.0, 1.0, 0.0]])  # last position is padding: its value is ignored
    gamma, lam = 0.9, 0.8
    d2 = 1.0 - 0.4
    d1 = 0.0 + gamma * 0.4 - 0.2
    d0 = 0.0 + gamma * 0.2 - 0.5
    a2, a1 = d2, d1 + gamma * lam * d2
    a0 = d0 + gamma * lam * a1
    adv, ret = A.gae(r, v, m, gamma, lam)
    assert torch.allclose(adv, torch.tensor([[a0, a1, a2, 0.0]]))
    assert torch.allclose(ret, torch.tensor([[a0 + 0.5, a1 + 0.2, a2 + 0.4, 0.0]]))


def test_gae_lambda_one_is_discounted_return_minus_value():
    r, v, m = torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[0.3, 0.1, 0.7]]), torch.ones(1, 3)
    adv, ret = A.gae(r, v, m, gamma=0.5, lam=1.0)
    assert torch.allclose(ret, torch.tensor([[1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3.0]]))


def test_dpo_huge_log_ratios_stay_finite():
    m = torch.ones(2, 3)
    big = torch.full((2, 3), 1e4)
    cc, cr = C.dpo(big, -big, m, -big, big, m, beta=1.0)
    assert torch.isfinite(cc).all() and torch.isfinite(cr).all()
    J = O.dpo(-big, big, m, big, -big, m, beta=1.0)
    assert math.isfinite(J.item()) and J.item() < -1e3


def test_k3_is_nonnegative_and_exact():
    logp, logp_ref = torch.randn(5, 7), torch.randn(5, 7)
    x = logp_ref - logp
    assert torch.allclose(kl.k3(logp, logp_ref), x.exp() - x - 1, atol=1e-6)
    assert (kl.k3(logp, logp_ref) >= 0).all()
    assert torch.allclose(kl.k1(logp, logp_ref), -x) and torch.allclose(kl.k2(logp, logp_ref), x**2 / 2)


def test_kl_estimators_agree_in_expectation():
    """E_pi[k1] = E_pi[k3] = KL(pi || pi_ref) for a categorical pi; checked against the exact KL."""
    g = torch.Generator().manual_seed(0)
    p, q = torch.softmax(torch.randn(6, generator=g), 0), torch.softmax(torch.randn(6, generator=g), 0)
    exact = (p * (p / q).log()).sum()
    s = torch.multinomial(p, 200_000, replacement=True, generator=g)
    logp, logp_ref = p.log()[s], q.log()[s]
    assert abs(kl.k1(logp, logp_ref).mean() - exact) < 0.01
    assert abs(kl.k3(logp, logp_ref).mean() - exact) < 0.01


@pytest.mark.parametrize("call, words", [
    (lambda: P.surrogate_loss(torch.zeros(2, 3), torch.zeros(2, 4), torch.ones(2, 3)), "shape"),
    (lambda: C.sft(torch.tensor([[1.0, 1.0], [0.0, 0.0]])), "no tokens"),
    (lambda: C.rft(torch.tensor([1.0]), torch.ones(2, 2)), "correct"),
    (lambda: C.rft(torch.tensor([0.5, 1.0]), torch.ones(2, 2)), "0 and 1"),
    (lambda: A.group_relative(torch.ones(5), 2), "whole number of groups"),
    (lambda: C.grpo(torch.ones(6), 4, torch.zeros(6, 2), torch.zeros(6, 2), torch.ones(6, 2), 0.1), "groups"),
    (lambda: C.ppo(torch.tensor([[float("nan"), 1.0]]), torch.ones(1, 2)), "non-finite"),
    (lambda: P.surrogate_loss(torch.tensor([[float("inf")]]), torch.ones(1, 1), torch.ones(1, 1)), "non-finite"),
    (lambda: C.dpo(torch.zeros(2, 2), torch.zeros(2, 2), torch.ones(2, 2),
                   torch.zeros(3, 2), torch.zeros(3, 2), torch.ones(3, 2), 0.1), "pairs"),
    (lambda: C.dpo(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2),
                   torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), float("nan")), "beta"),
    (lambda: C.ppo(torch.zeros(1, 2), torch.ones(1, 2), logp=torch.zeros(1, 2)), "together"),
    (lambda: A.gae(torch.zeros(1, 2), torch.zeros(1, 3), torch.ones(1, 2), 1.0, 1.0), "shape"),
    (lambda: kl.k3(torch.zeros(2), torch.zeros(3)), "shape"),
    (lambda: O.sft(torch.zeros(2, 2), torch.zeros(2, 2)), "no tokens"),
    (lambda: A.group_relative(torch.ones(4), 0), "group_size"),
])
def test_bad_input_is_a_clear_value_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def _gc(name, B=2, T=2, mask=None, **tensors):
    """A registered method's coefficient on bare tensors (METHODS: the parts the trainer runs)."""
    return gc_of(name, torch.zeros(B, T), torch.ones(B, T) if mask is None else mask, **tensors)


_REF = {"logp_ref": torch.zeros(2, 2)}


@pytest.mark.parametrize("call, words", [
    (lambda: _gc("sft", mask=torch.tensor([[1.0, 1.0], [0.0, 0.0]])), "response 1 has no tokens"),
    (lambda: _gc("rft", scores=torch.tensor([1.0])), "correct must have shape"),
    (lambda: _gc("rft", scores=torch.tensor([0.5, 1.0])), "0 and 1"),
    (lambda: _gc("online-rft", scores=torch.tensor([True, False])), "correct is boolean"),
    (lambda: _gc("grpo", 6, scores=torch.ones(6), group_size=4, logp_ref=torch.zeros(6, 2)), "groups of 4"),
    (lambda: _gc("grpo", scores=torch.ones(2), group_size=0, **_REF), "group_size must be a positive int"),
    (lambda: _gc("grpo", scores=torch.tensor([True, False]), group_size=2, **_REF), "rewards is boolean"),
    (lambda: _gc("grpo", scores=torch.ones(2), group_size=2), "needs logp_ref"),
    (lambda: _gc("grpo", group_size=2, **_REF), "needs rewards"),
    (lambda: _gc("grpo", scores=torch.ones(2), group_size=2, logp_ref=torch.zeros(2, 3)), "logp_ref has shape"),
    (lambda: _gc("grpo", scores=torch.ones(2), group_size=2, beta=float("nan"), **_REF), "beta must be finite"),
    (lambda: _gc("ppo", adv=torch.tensor([[float("nan"), 1.0]] * 2), **_REF), "adv contains non-finite"),
    (lambda: _gc("ppo", **_REF), "the Step has no adv"),
    (lambda: _gc("dpo", 3, logp_ref=torch.zeros(3, 2)), "DPO needs pairs"),
])
def test_bad_input_through_the_registry_names_the_problem(call, words):
    """The cases above, through METHODS (each method's row of parts): the same problem named in one ValueError."""
    with pytest.raises(ValueError, match=words):
        call()


def test_coefficients_are_detached_and_zero_off_mask():
    m = torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    logp = torch.randn(2, 3, requires_grad=True)
    grad = lambda x: torch.tensor(x, requires_grad=True)  # noqa: E731 - every input may carry a graph
    for coef in (C.sft(m.requires_grad_()), C.rft(grad([1.0, 1.0]), m), C.ppo(torch.randn(2, 3, requires_grad=True), m),
                 C.grpo(grad([1.0, 0.0]), 2, logp, torch.randn(2, 3, requires_grad=True), m, 0.1),
                 *C.dpo(logp, torch.randn(2, 3), m, logp, torch.randn(2, 3), m, 0.1)):
        assert not coef.requires_grad
        assert (coef[m == 0] == 0).all()


def test_process_advantage_is_zero_off_the_response_mask():
    sm = torch.tensor([[0, 0, 1, 0, 1], [0, 0, 0, 1, 0]], dtype=torch.float64)
    sr = torch.tensor([[0, 0, 1, 0, 1], [0, 0, 0, 0, 0]], dtype=torch.float64)
    m = torch.tensor([[0, 1, 1, 1, 1], [0, 0, 1, 1, 0]], dtype=torch.float64)
    adv = A.group_relative_process(sr, sm, 2, mask=m)
    assert (adv[m == 0] == 0).all() and (adv[m == 1] != 0).any()
    assert torch.equal(adv, A.group_relative_process(sr, sm, 2) * m)


def test_equal_rewards_give_exactly_zero_in_float32():
    """A float32 mean of eight 0.7s is not 0.7: equality is decided exactly, not by the mean."""
    for value in (0.7, 0.1, 1e-30, -3.3):
        r = torch.full((8,), value, dtype=torch.float32)
        assert torch.equal(A.group_relative(r, 8), torch.zeros(8))
    assert torch.equal(A.group_relative(torch.tensor([0.7] * 4 + [0.3, 0.7, 0.7, 0.7]), 4)[:4], torch.zeros(4))


@pytest.mark.parametrize("scale, dtype", [(1e20, torch.float32), (1e-20, torch.float32),
                                           (1e200, torch.float64), (1e-200, torch.float64)])
def test_group_relative_is_scale_free(scale, dtype):
    """(r - mean) / std does not depend on the scale of r: +-1e20 must not overflow or round to 0."""
    r = torch.tensor([1.0, -1.0, 0.5, 2.0], dtype=torch.float64)
    want = A.group_relative(r, 4, eps=0.0)
    got = A.group_relative((r * scale).to(dtype), 4, eps=0.0)
    assert got.dtype == dtype and torch.isfinite(got).all()
    assert torch.allclose(got.double(), want, rtol=1e-5)
    assert torch.allclose(A.group_relative(torch.tensor([1e20, -1e20]), 2), torch.tensor([0.5, -0.5]) * 2 ** 0.5)


def test_process_normaliser_is_exact_and_scale_free():
    sm = torch.tensor([[0, 1, 0, 1], [0, 0, 1, 0]], dtype=torch.float32)
    same = A.group_relative_process(0.7 * sm, sm, 2)  # every step reward 0.7: no signal
    assert torch.equal(same, torch.zeros(2, 4))
    sr = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 0]], dtype=torch.float64)
    small = A.group_relative_process(sr, sm.double(), 2, eps=0.0)
    huge = A.group_relative_process(sr * 1e20, sm.double(), 2, eps=0.0)
    assert torch.allclose(small, huge, rtol=1e-9) and small.abs().max() > 0.5


@pytest.mark.parametrize("call, words", [
    (lambda: A.group_relative(torch.tensor([True, False]), 2), "rewards is boolean"),
    (lambda: A.group_relative([True, False, True, True], 2), "rewards is boolean"),
    (lambda: A.group_relative_process(torch.ones(2, 2, dtype=torch.bool), torch.ones(2, 2), 2), "step_rewards is boolean"),
    (lambda: A.gae(torch.zeros(1, 2, dtype=torch.bool), torch.zeros(1, 2), torch.ones(1, 2), 1.0, 1.0), "rewards is boolean"),
    (lambda: C.rft(torch.tensor([True, False]), torch.ones(2, 2)), "correct is boolean"),
    (lambda: O.rft(torch.zeros(2, 2), torch.tensor([True, False]), torch.ones(2, 2)), "correct is boolean"),
    (lambda: A.gae(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), 1.5, 0.9), r"gamma must be in \[0.0, 1.0\]"),
    (lambda: A.gae(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), -0.1, 0.9), "gamma"),
    (lambda: A.gae(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), 0.9, 1.01), r"lam must be in \[0.0, 1.0\]"),
    (lambda: A.gae(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), 0.9, True), "lam must be a number"),
])
def test_bool_rewards_and_bad_discounts_are_rejected(call, words):
    with pytest.raises(ValueError, match=words):
        call()
