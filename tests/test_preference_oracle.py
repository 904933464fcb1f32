"""The preference family (IPO, SimPO, KTO, ORPO): autograd of each paper's objective equals the
gradient of the eq-5 surrogate with its GC, on ragged float64 batches and on a transformer's
parameters; sympy's derived GC equals the hand form, the package's function and autograd; and the
facts the course states about each GC hold."""

import dataclasses
import doctest
import functools

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings, strategies as st
from transformers import GPT2Config, GPT2LMHeadModel

from unified_rl import coefficients as C, objectives as O, paradigm as P
from unified_rl.coefficients import preference as CP
from unified_rl.derivations import check, derive

TOL = 1e-10
CASES = st.tuples(st.integers(0, 10**6), st.integers(1, 4), st.integers(1, 9))


def ragged_mask(g, B, T):
    """(B, T) mask with a prompt block and a response of random length >= 1 in each row."""
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        start = int(torch.randint(0, T, (1,), generator=g))
        mask[i, start:start + int(torch.randint(1, T - start + 1, (1,), generator=g))] = 1
    return mask


def logps(g, B, T, grad=False):
    x = -3 * torch.rand(B, T, generator=g, dtype=torch.float64) - 1e-3  # log-probs < 0
    return x.requires_grad_(grad)


def pair(seed, B, T):
    g = torch.Generator().manual_seed(seed)
    mc, mr = ragged_mask(g, B, T), ragged_mask(g, B, T)
    return g, mc, mr, logps(g, B, T, True), logps(g, B, T), logps(g, B, T, True), logps(g, B, T)


def pair_grads(J, coef, lc, mc, lr, mr):
    """(autograd of J, gradient of the two-term surrogate) w.r.t. the chosen and rejected log-probs."""
    gj = torch.cat([g.flatten() for g in torch.autograd.grad(J, (lc, lr))])
    cc, cr = coef
    loss = P.surrogate_loss(lc, cc, mc) + P.surrogate_loss(lr, cr, mr)
    gs = torch.cat([g.flatten() for g in torch.autograd.grad(-loss, (lc, lr))])
    return gj, gs


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.05, 5.0))
def test_ipo(case, tau):
    _, mc, mr, lc, rc, lr, rr = pair(*case)
    gj, gs = pair_grads(O.ipo(lc, rc, mc, lr, rr, mr, tau), C.ipo(lc, rc, mc, lr, rr, mr, tau), lc, mc, lr, mr)
    assert (gj - gs).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.01, 10.0), st.floats(-2.0, 3.0))
def test_simpo(case, beta, gamma):
    _, mc, mr, lc, _, lr, _ = pair(*case)
    gj, gs = pair_grads(O.simpo(lc, mc, lr, mr, beta, gamma), C.simpo(lc, mc, lr, mr, beta, gamma), lc, mc, lr, mr)
    assert (gj - gs).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.0, 3.0))
def test_orpo(case, lam):
    _, mc, mr, lc, _, lr, _ = pair(*case)
    gj, gs = pair_grads(O.orpo(lc, mc, lr, mr, lam), C.orpo(lc, mc, lr, mr, lam), lc, mc, lr, mr)
    assert (gj - gs).abs().max() <= TOL


@settings(max_examples=40, deadline=None)
@given(CASES, st.floats(0.01, 5.0), st.floats(0.0, 1.0), st.floats(0.1, 3.0), st.floats(0.1, 3.0))
def test_kto(case, beta, z0, lam_d, lam_u):
    seed, B, T = case
    g = torch.Generator().manual_seed(seed)
    mask, logp, logp_ref = ragged_mask(g, B, T), logps(g, B, T, True), logps(g, B, T)
    desirable = torch.randint(0, 2, (B,), generator=g).double()
    J = O.kto(logp, logp_ref, mask, desirable, z0, beta, lam_d, lam_u)
    (gj,) = torch.autograd.grad(J, logp)
    coef = C.kto(logp, logp_ref, mask, desirable, z0, beta, lam_d, lam_u)
    (gs,) = torch.autograd.grad(-P.surrogate_loss(logp, coef, mask), logp)
    assert (gj - gs).abs().max() <= TOL


def test_a_wrong_coefficient_is_caught():
    """The oracle can fail: IPO's c without the factor 2 on the margin, SimPO's without beta."""
    _, mc, mr, lc, rc, lr, rr = pair(3, 3, 6)
    cc, cr = C.ipo(lc, rc, mc, lr, rr, mr, 0.5)
    margin = (1 / 0.5 - cc.amax(-1)) / 2  # recover the margin from c = 1/tau - 2 margin
    half = ((1 / 0.5 - margin)[:, None] * mc, -(1 / 0.5 - margin)[:, None] * mr)
    gj, gs = pair_grads(O.ipo(lc, rc, mc, lr, rr, mr, 0.5), half, lc, mc, lr, mr)
    assert (gj - gs).abs().max() > 1e-3
    cc, cr = C.simpo(lc, mc, lr, mr, 2.0, 0.5)
    gj, gs = pair_grads(O.simpo(lc, mc, lr, mr, 2.0, 0.5), (cc / 2.0, cr / 2.0), lc, mc, lr, mr)
    assert (gj - gs).abs().max() > 1e-3


# --- the facts the course states about each GC --------------------------------------------------

def margins_gc(fn, margins, **kw):
    """c on the chosen token of one-token pairs whose margin x+ - x- is each of `margins`."""
    m = torch.as_tensor(margins, dtype=torch.float64)[:, None]  # (N, 1)
    z, ones = torch.zeros_like(m), torch.ones_like(m)
    return fn(m, z, ones, z, z, ones, **kw)[0][:, 0]


def test_ipo_is_linear_and_reverses_past_its_target_where_dpo_fades():
    tau = 0.5  # target margin 1/(2 tau) = 1
    margins = torch.tensor([-4.0, 0.0, 1.0, 2.0, 8.0])
    c = margins_gc(C.ipo, margins, tau=tau)
    torch.testing.assert_close(c, 1 / tau - 2 * margins.double())  # linear in the margin
    assert c[2] == 0 and c[3] < 0 and c[4] < c[3]  # zero on target, reversed and growing past it
    d = margins_gc(C.dpo, margins, beta=0.5)
    assert (d > 0).all() and d[4] < 0.05 * d[0]  # DPO never reverses, and fades


def test_simpo_needs_no_reference_and_is_constant_per_response():
    _, mc, mr, lc, _, lr, _ = pair(7, 4, 8)
    cc, cr = C.simpo(lc, mc, lr, mr, beta=2.0, gamma=1.0)
    for c, m in ((cc, mc), (cr, mr)):
        on = c[m.bool()].reshape(-1)
        per_row = [c[i][m[i].bool()] for i in range(len(m))]
        assert all((r == r[0]).all() for r in per_row) and (c[~m.bool()] == 0).all() and on.numel()
    assert (cc.amax(-1) > 0).all() and (cr.amin(-1) < 0).all()


def test_kto_fades_on_both_sides_of_z0():
    x = torch.tensor([[-30.0], [-1.0], [0.0], [1.0], [30.0]], dtype=torch.float64)
    ones = torch.ones_like(x)
    c = C.kto(x, 0 * x, ones, torch.ones(5, dtype=torch.float64), 0.0, beta=0.5)[:, 0]
    assert c.argmax() == 2 and c[0] < 1e-5 and c[4] < 1e-5  # largest at x = z0, ~0 far on either side
    u = C.kto(x, 0 * x, ones, torch.zeros(5, dtype=torch.float64), 0.0, beta=0.5)[:, 0]
    torch.testing.assert_close(u, -c)  # lam_u = lam_d = 1: the mirror image


def test_kto_reference_point_is_a_clamped_detached_mean():
    logp = torch.tensor([[-1.0, -1.0], [-1.5, 0.0]], dtype=torch.float64, requires_grad=True)
    ref = torch.full((2, 2), -2.0, dtype=torch.float64)
    z0 = CP.kto_reference_point(logp, ref, torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=torch.float64))
    assert z0.item() == pytest.approx((1.0 + 0.5) / 2) and not z0.requires_grad  # x = 1 and 0.5
    assert CP.kto_reference_point(ref - 1, ref, torch.ones(2, 2)).item() == 0.0  # clamped at 0


def test_orpo_is_sft_plus_the_odds_ratio_term():
    _, mc, mr, lc, _, lr, _ = pair(5, 3, 6)
    cc0, cr0 = C.orpo(lc, mc, lr, mr, lam=0.0)
    torch.testing.assert_close(cc0, C.sft(mc))  # lambda = 0: SFT's GC on the chosen response
    assert (cr0 == 0).all()
    cc, cr = C.orpo(lc, mc, lr, mr, lam=0.5)
    assert ((cc - C.sft(mc))[mc.bool()] > 0).all() and (cr[mr.bool()] < 0).all()


def test_orpo_stays_finite_when_a_chosen_response_has_probability_one():
    m = torch.ones(1, 3, dtype=torch.float64)
    lr = torch.full((1, 3), -0.5, dtype=torch.float64)
    cc, cr = C.orpo(torch.zeros(1, 3, dtype=torch.float64), m, lr, m, lam=0.2)
    odds_r = np.exp(-0.5) / (1 - np.exp(-0.5))
    assert cc[0, 0].item() == pytest.approx(1 + 0.2 * odds_r) and (cr == 0).all()  # the limit P+ -> 1
    with pytest.raises(ValueError, match="rejected response has probability 1"):
        C.orpo(lr, m, torch.zeros(1, 3), m, lam=0.2)


@pytest.mark.parametrize("call, match", [
    (lambda: C.ipo(*[torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(2, 3)] * 2, tau=0.0), "tau must be > 0"),
    (lambda: C.ipo(torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(2, 3), torch.zeros(1, 3),
                   torch.zeros(1, 3), torch.ones(1, 3), tau=1.0), "pairs are needed"),
    (lambda: C.simpo(torch.zeros(1, 2), torch.ones(1, 2), torch.zeros(1, 2), torch.ones(1, 2),
                     beta=float("nan"), gamma=0.0), "beta must be finite"),
    (lambda: C.kto(torch.zeros(2, 1), torch.zeros(2, 1), torch.ones(2, 1), torch.tensor([1., 2.]), 0.0, 0.1),
     "desirable must contain only 0 and 1"),
    (lambda: C.kto(torch.zeros(2, 1), torch.zeros(2, 1), torch.ones(2, 1), torch.tensor([1., 0.]),
                   float("inf"), 0.1), "z0 must be finite"),
    (lambda: C.orpo(torch.ones(1, 2), torch.ones(1, 2), -torch.ones(1, 2), torch.ones(1, 2), 0.1),
     "positive mean log-prob"),
    (lambda: O.orpo(torch.zeros(1, 2), torch.ones(1, 2), -torch.ones(1, 2), torch.ones(1, 2), 0.1), "P\\(y\\|x\\) < 1"),
    (lambda: O.kto(torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1), 0.0, 0.1), "has no tokens"),
])
def test_bad_input_is_a_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_worked_examples_in_the_docstrings():
    assert doctest.testmod(CP).failed == 0


# --- sympy ------------------------------------------------------------------------------------

# (each family's derivation is proved by tests/test_derivations.py, which checks every REGISTRY entry)


def row(x):
    return torch.tensor(np.asarray(x, dtype=np.float64).reshape(1, -1))


@pytest.mark.parametrize("method", ["ipo", "simpo", "orpo"])
def test_pair_derivations_match_coefficients_and_autograd(method):
    n, rng = 3, np.random.default_rng(1)
    d = derive(method, n)
    v = {k: -rng.uniform(0.05, 2.0, size=n) for k in d.symbols if k.startswith("logp")}
    hyper = {"ipo": {"tau": 0.3}, "simpo": {"beta": 2.0, "gamma": 0.7}, "orpo": {"lam": 0.4}}[method]
    gc = d.evaluate(**v, **hyper)
    ones = torch.ones(1, n, dtype=torch.float64)
    t = {k: row(x).requires_grad_(k in ("logp_chosen", "logp_rejected")) for k, x in v.items()}
    args = [t["logp_chosen"], t.get("logp_ref_chosen"), ones, t["logp_rejected"], t.get("logp_ref_rejected"), ones]
    if method != "ipo":  # no reference model
        args = [a for a in args if a is not None]
    cc, cr = getattr(C, method)(*args, **hyper)
    np.testing.assert_allclose(gc, torch.cat([cc, cr], 1).numpy().ravel(), rtol=1e-10)
    J = getattr(O, method)(*args, **hyper)
    autograd = n * torch.cat(torch.autograd.grad(J, (t["logp_chosen"], t["logp_rejected"])), 1)
    np.testing.assert_allclose(gc, autograd.numpy().ravel(), rtol=1e-10)


def test_kto_derivation_matches_coefficients_and_autograd():
    n, rng = 3, np.random.default_rng(2)
    d = derive("kto", n)
    logp, logp_ref = rng.normal(size=(2, n)), rng.normal(size=(2, n))
    hyper = dict(z0=0.3, beta=0.8, lam_d=1.3, lam_u=0.9)
    gc = d.evaluate(logp=logp, logp_ref=logp_ref, **hyper)
    ones, desirable = torch.ones(2, n, dtype=torch.float64), torch.tensor([1.0, 0.0], dtype=torch.float64)
    lp = torch.tensor(logp).requires_grad_()
    coef = C.kto(lp, torch.tensor(logp_ref), ones, desirable, **hyper)
    np.testing.assert_allclose(gc, coef.numpy().ravel(), rtol=1e-10)
    (g,) = torch.autograd.grad(O.kto(lp, torch.tensor(logp_ref), ones, desirable, **hyper), lp)
    np.testing.assert_allclose(gc, 2 * n * g.numpy().ravel(), rtol=1e-10)


WRONG_FORMS = ("ipo without the 2", "simpo without beta", "kto sigmoid, not its slope", "orpo without the sft term")


@functools.lru_cache(maxsize=None)
def wrong_forms():
    """Hand forms a reader might write, each wrong somewhere (derived by the first test that asks, not
    while pytest collects this file)."""
    ipo, simpo, kto, orpo = (derive(m, 2) for m in ("ipo", "simpo", "kto", "orpo"))
    tau = ipo.symbols["tau"]
    return [("ipo without the 2", ipo, tuple(h.subs(1 / tau, 1 / (2 * tau)) for h in ipo.hand)),
            ("simpo without beta", simpo, tuple(h / simpo.symbols["beta"] for h in simpo.hand)),
            ("kto sigmoid, not its slope", kto, tuple(h * 4 for h in kto.hand)),
            ("orpo without the sft term", orpo, tuple(h - 1 if i < 2 else h for i, h in enumerate(orpo.hand)))]


def test_the_wrong_forms_are_the_ones_named():
    assert tuple(name for name, _, _ in wrong_forms()) == WRONG_FORMS


@pytest.mark.parametrize("name", WRONG_FORMS)
def test_a_wrong_hand_form_fails_the_check(name):
    _, d, wrong = next(form for form in wrong_forms() if form[0] == name)
    with pytest.raises(AssertionError, match="differs from the hand form"):
        check(dataclasses.replace(d, hand=wrong))


def test_latex_shows_the_printed_orpo_gradient():
    assert r"\text{printed}" in derive("orpo", 1).latex() and r"\text{printed}" not in derive("ipo", 1).latex()
    assert r"2\,|o_i|" in derive("kto", 1).latex()


# --- on a transformer's parameters ---------------------------------------------------------------

B, L, V = 4, 10, 17


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(cfg).double()


def token_logp(model, ids):
    logits = model(ids).logits[:, :-1]  # (B, T, V)
    return torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)  # (B, T)


def rows(seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, V, (B, L), generator=g)
    mask = torch.zeros(B, L - 1, dtype=torch.float64)
    for i in range(B):
        mask[i, 3:3 + int(torch.randint(1, L - 3, (1,), generator=g))] = 1
    return ids, mask


def param_grad(model, loss):
    model.zero_grad()
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


@pytest.mark.parametrize("method", ["ipo", "simpo", "orpo"])
def test_pairs_on_a_transformer(model, method):
    (ids_c, mc), (ids_r, mr) = rows(4), rows(5)
    ref_c, ref_r = -torch.rand(B, L - 1, dtype=torch.float64), -torch.rand(B, L - 1, dtype=torch.float64)
    hyper = {"ipo": {"tau": 0.5}, "simpo": {"beta": 2.0, "gamma": 0.5}, "orpo": {"lam": 0.3}}[method]

    def args(lc, lr):
        return (lc, ref_c, mc, lr, ref_r, mr) if method == "ipo" else (lc, mc, lr, mr)

    g_obj = param_grad(model, -getattr(O, method)(*args(token_logp(model, ids_c), token_logp(model, ids_r)), **hyper))
    lc, lr = token_logp(model, ids_c), token_logp(model, ids_r)
    cc, cr = getattr(C, method)(*args(lc, lr), **hyper)
    g_gc = param_grad(model, P.surrogate_loss(lc, cc, mc) + P.surrogate_loss(lr, cr, mr))
    assert (g_obj - g_gc).abs().max() < 1e-10 and g_obj.abs().max() > 1e-6


def test_kto_on_a_transformer(model):
    ids, mask = rows(6)
    ref = -torch.rand(B, L - 1, dtype=torch.float64)
    desirable = torch.tensor([1.0, 0.0, 0.0, 1.0], dtype=torch.float64)
    hyper = dict(z0=0.2, beta=0.5, lam_d=1.2, lam_u=1.0)
    g_obj = param_grad(model, -O.kto(token_logp(model, ids), ref, mask, desirable, **hyper))
    lp = token_logp(model, ids)
    g_gc = param_grad(model, P.surrogate_loss(lp, C.kto(lp, ref, mask, desirable, **hyper), mask))
    assert (g_obj - g_gc).abs().max() < 1e-10 and g_obj.abs().max() > 1e-6


def test_symbols_of_the_derivations_are_the_coefficient_arguments():
    import inspect
    for method in ("ipo", "simpo", "kto", "orpo"):
        params = set(inspect.signature(getattr(C, method)).parameters)
        assert set(derive(method, 1).symbols) <= params, method
    assert isinstance(derive("ipo", 1).symbols["tau"], sp.Symbol)
