"""The sympy derivations on the parts' pages (Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax, MaxRL, DRO, every
aggregation, every KL term) against the coefficients the trainer runs (`methods.gc_of`: each method's row of parts),
and wrong hand forms or claims that must fail."""
import dataclasses

import numpy as np
import pytest
import sympy as sp
import torch

from unified_rl import advantages as A, parts
from unified_rl.derivations import check, derive
from unified_rl.derivations.core import EPS_HIGH, EPS_LOW, L, _asym_clipped
from unified_rl.methods import gc_of
from unified_rl.parts import kl_terms

rng = np.random.default_rng(0)
MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)  # lengths 2 and 3 (n = 2)
ON = MASK.bool()


def t(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def ragged(scale=1.0, shift=0.0):
    """(2, 3) values on the mask, 0 off it, and their flat list in token order."""
    x = torch.zeros(2, 3, dtype=torch.float64)
    x[ON] = t(shift + scale * rng.normal(size=5))
    return x, x[ON].numpy()


def test_dr_grpo_matches_coefficients():
    d = derive("dr_grpo", 2)
    (logp, lf), (old, of), (ref, rf) = ragged(), ragged(), ragged()
    r, beta, L_ = np.array([1.0, 0.0]), 0.05, 6.0
    gc = d.evaluate(rewards=r, logp=lf, logp_old=of, logp_ref=rf, beta=beta, max_len=L_)
    kw = dict(logp_ref=ref, scores=t(r), group_size=2, beta=beta, settings={"max_len": L_})
    want = gc_of("dr-grpo", logp, MASK, logp_old=old, clip_eps=1e6, **kw)
    np.testing.assert_allclose(gc, want[ON].numpy(), rtol=1e-12)
    printed = d.evaluate("printed", rewards=r, logp=lf, logp_old=of, logp_ref=rf, beta=beta, max_len=L_)
    np.testing.assert_allclose(printed, gc_of("dr-grpo", logp, MASK, **kw)[ON].numpy(), rtol=1e-12)


CLIPPED = {"dapo": {"clip_eps_high": 0.28, "aggregation": "group-token-mean"},
           "gspo": {"gspo_clip_eps": 0.2, "gspo_clip_eps_high": 0.28},
           "cispo": {"cispo_clip_eps": 0.2, "cispo_clip_eps_high": 0.28, "aggregation": "group-token-mean"},
           "luspo": {"gspo_clip_eps": 0.2, "gspo_clip_eps_high": 0.28}}


@pytest.mark.parametrize("method", list(CLIPPED))
def test_clipped_family_matches_coefficients_in_every_region(method):
    d = derive(method, 1)  # responses of 1 and 2 tokens
    m = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    on = m.bool()
    old = torch.zeros(2, 2, dtype=torch.float64)
    old[on] = t(rng.normal(size=3))
    r = t([1.0, 0.0])
    adv = A.group_relative(r, 2).numpy()
    # rows: A > 0 above 1 + 0.28 / between 1.2 and 1.28 / inside; A < 0 below 0.8 / inside / mixed
    ratios = np.array([[1.6, 0.5, 0.9], [1.25, 0.7, 0.75], [1.0, 1.1, 0.6]])
    logp = old.clone().unsqueeze(0).repeat(3, 1, 1)  # (3, 2, 2)
    logp[:, on] += t(np.log(ratios))
    gc = np.stack([d.evaluate(adv=adv, logp=lp[on].numpy(), logp_old=old[on].numpy(), clip_eps=0.2,
                              clip_eps_high=0.28) for lp in logp])
    want = np.stack([gc_of(method, lp, m, logp_old=old, scores=r, group_size=2, clip_eps=0.2,
                           settings=CLIPPED[method])[on].numpy() for lp in logp])
    np.testing.assert_allclose(gc, want, rtol=1e-9, atol=1e-12)
    assert (want == 0).any() == (method != "cispo")  # the clip binds somewhere, except in CISPO


def maxrl_derivation():
    """MaxRL's derivation, its eps named as the setting it is (maxrl_eps) where the page leaves it out of `symbols`."""
    d = derive("maxrl", 2)
    (eps,) = [s for s in d.objective.free_symbols if s.name == "epsilon"]
    return dataclasses.replace(d, symbols={**d.symbols, "maxrl_eps": eps})


def test_every_symbol_of_a_derivation_can_be_given_a_value():
    """evaluate() fills only the symbols listed in `symbols`: any other free symbol of the GC leaves it unusable."""
    from unified_rl.derivations import NAMES
    unnamed = {}
    for name in ("dr_grpo", "dapo", "gspo", "luspo", "cispo", "rloo", "remax", "reinforce_pp", "maxrl", "dro"):
        d = derive(name, 1)
        listed = {x for v in d.symbols.values() for x in (v if isinstance(v, tuple) else (v,))}
        free = {x for g in d.gc for x in sp.sympify(g).free_symbols} - listed
        if free:
            unnamed[name] = sorted(map(str, free))
    assert "maxrl" in NAMES and not unnamed, unnamed


def test_rloo_remax_reinforce_pp_maxrl_and_dro_match_coefficients():
    d = derive("rloo", 2)  # three responses of 2, 2 and 3 tokens
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    r = np.array([1.0, 0.0, 0.5])
    z = torch.zeros(3, 3, dtype=torch.float64)
    np.testing.assert_allclose(d.evaluate(rewards=r, logp=np.zeros(7)),
                               gc_of("rloo", z, m, scores=t(r), group_size=3)[m.bool()].numpy(), rtol=1e-12)
    d = maxrl_derivation()  # (2, 3, 2) tokens, one group of three
    m2 = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
    r2 = np.array([1.0, 0.0, 0.25])  # mean != std: MaxRL's denominator differs from GRPO's
    np.testing.assert_allclose(d.evaluate(rewards=r2, logp=np.zeros(7), maxrl_eps=1e-6),
                               gc_of("maxrl", z, m2, scores=t(r2), group_size=3)[m2.bool()].numpy(), rtol=1e-12)
    d = derive("remax", 2)
    np.testing.assert_allclose(d.evaluate(rewards=[1.0, 0.0], logp=np.zeros(4)),
                               gc_of("remax", torch.zeros(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float64),
                                     scores=t([1.0, 0.0]), group_size=2).flatten().numpy(), rtol=1e-12)
    d = derive("reinforce_pp", 3)
    logp, old, ref = (rng.normal(size=3) for _ in range(3))
    raw = 1.0 - 0.1 * np.cumsum((old - ref)[::-1])[::-1]  # R - beta sum_{t' >= t} k1
    mu, sigma = raw.mean(), raw.std(ddof=1) + 1e-6
    gc = d.evaluate(rewards=1.0, logp=logp, logp_old=old, logp_ref=ref, beta=0.1, mu=mu, sigma=sigma)
    one = torch.ones(1, 3, dtype=torch.float64)
    want = gc_of("reinforce++", t([logp]), one, logp_old=t([old]), logp_ref=t([ref]), scores=t([1.0]), beta=0.1,
                 clip_eps=1e6)
    np.testing.assert_allclose(gc, want.flatten().numpy(), rtol=1e-9)
    d = derive("dro", 3)  # one response: A - beta log rho per token, A given (`gae` reads Step.adv)
    want = gc_of(parts.compose("gae", "dro", dro_beta=0.3), t([logp]), one, logp_old=t([old]), adv=1.7 * one)
    np.testing.assert_allclose(d.evaluate(adv=1.7, logp=logp, logp_old=old, dro_beta=0.3), want.flatten().numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("aggregation", list(parts.AGGREGATIONS))
def test_every_aggregation_matches_its_row_factor(aggregation):
    """Per-token terms A_i ell_{i,t}: REINFORCE on a given per-token advantage (`gae` reads Step.adv) under each
    aggregation, the two rows one group."""
    d = derive(f"aggregation_{aggregation.replace('-', '_')}", 2)
    adv = np.array([0.7, -1.3])
    gc = d.evaluate(logp=np.zeros(5), adv=adv, **({"max_len": 4.0} if "max_len" in d.symbols else {}))
    m = parts.compose("gae", "reinforce", aggregation=aggregation, max_len=4.0)
    want = gc_of(m, torch.zeros(2, 3, dtype=torch.float64), MASK, adv=t(adv)[:, None] * MASK, group_size=2)
    np.testing.assert_allclose(gc, want[ON].numpy(), rtol=1e-12)


def kl_method(use):
    """A composition whose coefficient is the KL term alone: GRPO's A-hat is 0 on one response of its own group."""
    if use == "k1_reward":
        return parts.compose("reinforce_plus_plus", "reinforce", kl="k1", kl_in="reward", reinforce_baseline="none")
    name = use.split("_")[0]
    return parts.compose("grpo", "vanilla", kl=name,
                         **({"use_bias_correction_kl": use == "k3_ratio_loss"} if name == "k3" else {}))


@pytest.mark.parametrize("use", list(kl_terms.KL_TARGETS) + ["grpo_sequence_kl_ratio"])
def test_kl_terms_match_coefficients(use):
    d = derive(use if use.startswith("grpo") else f"kl_{use}", 3)
    logp, ref, old = (rng.normal(size=3) for _ in range(3))
    v = dict(logp=logp, logp_ref=ref, beta=0.3) | ({"logp_old": old} if "logp_old" in d.symbols else {})
    m = torch.ones(1, 3, dtype=torch.float64)
    tensors = dict(logp_ref=t([ref]), logp_old=t([old]), scores=t([0.0]), beta=0.3)
    if use == "grpo_sequence_kl_ratio":
        method = parts.compose("grpo", "vanilla", kl="k3", use_bias_correction_kl=True,
                               importance_sampling_level="sequence")
        want = gc_of(method, t([logp]), m, **tensors)
    else:
        want = gc_of(kl_method(use), t([logp]), m, **tensors)
    got = d.evaluate(**v)
    if use == "k1_reward":  # REINFORCE++ normalises its returns over the batch's tokens (reward 0 here)
        got = (got - got.mean()) / (got.std(ddof=1) + 1e-6)
    np.testing.assert_allclose(got, want.flatten().numpy(), rtol=1e-9 if use == "k1_reward" else 1e-12)


def test_wrong_forms_fail():
    """Each derivation can fail: a symmetric clip, per-token ratios for GSPO, a CISPO that zeroes tokens,
    RLOO without k/(k-1), Dr. GRPO with 1/|o|, the wrong aggregation factor."""
    dapo = derive("dapo", 1)
    gspo = derive("gspo", 1)
    ratio = [sp.exp(x - y) for x, y in zip(gspo.symbols["logp"], gspo.symbols["logp_old"])]
    a1, a2 = gspo.symbols["adv"]
    rloo, dr = derive("rloo", 1), derive("dr_grpo", 1)
    wrong = [(dapo, tuple(h.subs(EPS_HIGH, EPS_LOW) for h in dapo.hand)),
             (gspo, tuple(_asym_clipped(r, a) for r, a in zip(ratio, (a1, a2, a2)))),
             (derive("cispo", 1), dapo.hand),
             (rloo, tuple(h * sp.Rational(2, 3) for h in rloo.hand)),
             (dr, tuple(h * L_ for h, L_ in zip(dr.hand, (1, L / 2, L / 2)))),
             (derive("aggregation_token_mean", 1), derive("aggregation_seq_mean_token_mean", 1).hand),
             (derive("aggregation_seq_mean_token_sum_norm", 1), derive("aggregation_token_sum", 1).hand)]
    for d, hand in wrong:
        with pytest.raises(AssertionError, match="differs from the hand form"):
            check(dataclasses.replace(d, hand=hand))


@pytest.mark.slow
@pytest.mark.parametrize("use, target", [("k3_loss", "reverse"), ("k2_loss", "forward"), ("k1_loss", "reverse"),
                                         ("k3_ratio_loss", "forward"), ("k1_reward", "zero")])
def test_a_wrong_kl_claim_fails(use, target):
    with pytest.raises(AssertionError, match="claim fails"):
        check(kl_terms.derive_kl(1, use, target))
