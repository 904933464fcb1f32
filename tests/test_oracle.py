"""Oracle tests (micrograd style): autograd of each method's own objective J equals the gradient of
the eq-5 surrogate with that method's coefficient GC, on ragged random float64 batches and on a
small transformer's parameters. Two independent computations; a wrong GC fails them."""

import torch
from hypothesis import given, settings, strategies as st

from unified_rl import coefficients as C, objectives as O, paradigm as P
from unified_rl.advantages import gae, group_relative_process

TOL = 1e-10


def ragged_mask(g, B, T):
    """(B, T) mask with a prompt block and a response of random length >= 1 in each row."""
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        start = int(torch.randint(0, T, (1,), generator=g))
        length = int(torch.randint(1, T - start + 1, (1,), generator=g))
        mask[i, start:start + length] = 1
    return mask


def batch(seed, B, T, spread=1.0):
    g = torch.Generator().manual_seed(seed)
    mask = ragged_mask(g, B, T)
    rnd = lambda: -spread * torch.rand(B, T, generator=g, dtype=torch.float64) * 3  # log-probs <= 0
    logp = rnd().requires_grad_()
    return g, mask, logp, rnd


def surrogate_grad(logp, coef, mask):
    (g,) = torch.autograd.grad(-P.surrogate_loss(logp, coef, mask), logp)
    return g


def objective_grad(J, logp):
    (g,) = torch.autograd.grad(J, logp)
    return g


CASES = st.tuples(st.integers(0, 10**6), st.integers(1, 4), st.integers(1, 9))


@settings(max_examples=40, deadline=None)
@given(CASES)
def test_sft(case):
    seed, B, T = case
    _, mask, logp, _ = batch(seed, B, T)
    assert (objective_grad(O.sft(logp, mask), logp) - surrogate_grad(logp, C.sft(mask), mask)).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES)
def test_rft_and_online_rft(case):
    seed, B, T = case
    g, mask, logp, _ = batch(seed, B, T)
    correct = torch.randint(0, 2, (B,), generator=g).double()
    for J, coef in ((O.rft, C.rft), (O.online_rft, C.online_rft)):
        diff = objective_grad(J(logp, correct, mask), logp) - surrogate_grad(logp, coef(correct, mask), mask)
        assert diff.abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.01, 5.0))
def test_dpo(case, beta):
    seed, B, T = case
    g, mc, lc, rnd = batch(seed, B, T)
    mr = ragged_mask(g, B, T)
    lr = rnd().requires_grad_()
    rc, rr = rnd(), rnd()
    J = O.dpo(lc, rc, mc, lr, rr, mr, beta)
    gc, gr = torch.autograd.grad(J, (lc, lr))
    cc, cr = C.dpo(lc, rc, mc, lr, rr, mr, beta)
    loss = P.surrogate_loss(lc, cc, mc) + P.surrogate_loss(lr, cr, mr)
    sc, sr = torch.autograd.grad(-loss, (lc, lr))
    assert (gc - sc).abs().max() <= TOL and (gr - sr).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.5, 1.0), st.floats(0.8, 1.0))
def test_ppo_on_policy_with_gae(case, gamma, lam):
    seed, B, T = case
    g, mask, logp, rnd = batch(seed, B, T)
    rewards, values = torch.randn(B, T, generator=g, dtype=torch.float64), torch.randn(B, T, generator=g, dtype=torch.float64)
    adv, _ = gae(rewards * mask, values, mask, gamma, lam)
    J = O.ppo(logp, logp.detach(), adv, mask, clip_eps=0.2)  # pi_old = pi_theta: eq 16-18
    assert (objective_grad(J, logp) - surrogate_grad(logp, C.ppo(adv, mask), mask)).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.05, 0.4))
def test_ppo_clipped_off_policy(case, clip_eps):
    seed, B, T = case
    g, mask, logp, _ = batch(seed, B, T)
    logp_old = logp.detach() + 0.5 * torch.randn(B, T, generator=g, dtype=torch.float64)  # many ratios outside the clip
    adv = torch.randn(B, T, generator=g, dtype=torch.float64)
    J = O.ppo(logp, logp_old, adv, mask, clip_eps)
    coef = C.ppo(adv, mask, logp=logp, logp_old=logp_old, clip_eps=clip_eps)
    assert (objective_grad(J, logp) - surrogate_grad(logp, coef, mask)).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.integers(1, 4), st.floats(0.0, 0.5))
def test_grpo_outcome(case, n_groups, beta):
    seed, G, T = case
    B = G * n_groups
    g, mask, logp, rnd = batch(seed, B, T)
    logp_ref = rnd()
    rewards = torch.randint(0, 2, (B,), generator=g).double()
    J = O.grpo(logp, logp.detach(), logp_ref, rewards, G, mask, beta, clip_eps=0.2)
    coef = C.grpo(rewards, G, logp, logp_ref, mask, beta)
    assert (objective_grad(J, logp) - surrogate_grad(logp, coef, mask)).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.0, 0.5), st.floats(0.05, 0.4))
def test_grpo_clipped_off_policy(case, beta, clip_eps):
    seed, G, T = case
    B = 2 * G
    g, mask, logp, rnd = batch(seed, B, T)
    logp_ref, logp_old = rnd(), logp.detach() + 0.5 * torch.randn(B, T, generator=g, dtype=torch.float64)
    rewards = torch.rand(B, generator=g, dtype=torch.float64)
    J = O.grpo(logp, logp_old, logp_ref, rewards, G, mask, beta, clip_eps)
    coef = C.grpo(rewards, G, logp, logp_ref, mask, beta, logp_old=logp_old, clip_eps=clip_eps)
    assert (objective_grad(J, logp) - surrogate_grad(logp, coef, mask)).abs().max() <= TOL


@settings(max_examples=30, deadline=None)
@given(CASES, st.floats(0.0, 0.5))
def test_grpo_process_supervision(case, beta):
    seed, G, T = case
    B = 2 * G
    g, mask, logp, rnd = batch(seed, B, T)
    step_mask = mask * (torch.rand(B, T, generator=g, dtype=torch.float64) < 0.5)
    last = mask.cumsum(-1).argmax(-1)  # each response's last token ends a step
    step_mask[torch.arange(B), last] = 1
    adv = group_relative_process(torch.randint(0, 2, (B, T), generator=g).double() * step_mask, step_mask, G)
    logp_ref = rnd()
    J = O.grpo(logp, logp.detach(), logp_ref, None, G, mask, beta, 0.2, adv=adv)
    coef = C.grpo(None, G, logp, logp_ref, mask, beta, adv=adv)
    assert (objective_grad(J, logp) - surrogate_grad(logp, coef, mask)).abs().max() <= TOL


def test_a_wrong_coefficient_is_caught(f64):
    """The oracle can fail: eq 14 as printed (no beta) does not match autograd of eq 12."""
    _, mc, lc, rnd = batch(1, 3, 6)
    mr = mc.clone()
    lr = rnd().requires_grad_()
    rc, rr = rnd(), rnd()
    beta = 0.5
    gc, _ = torch.autograd.grad(O.dpo(lc, rc, mc, lr, rr, mr, beta), (lc, lr))
    cc, _ = C.dpo(lc, rc, mc, lr, rr, mr, beta)
    printed = cc / beta  # sigma(...) without the leading beta
    assert (gc - surrogate_grad(lc, printed, mc)).abs().max() > 1e-3
    assert (gc - surrogate_grad(lc, cc, mc)).abs().max() <= TOL
