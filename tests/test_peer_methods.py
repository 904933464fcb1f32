"""The methods and GRPO options TRL and verl ship, each against an independent computation.

- the oracle: autograd of each composition's objective (each part's objective term, written from its paper)
  equals the gradient of eq 5's surrogate with its coefficient (each part's tensor function), on ragged random
  float64 batches, on- and off-policy, over every combination of GRPO's options and every aggregation;
- GRPO's options at their defaults are eq 19-21 as printed (objectives.paper.grpo);
- the advantages against their definitions, written out here;
- the derivations against the parts' coefficients, and wrong hand forms that must fail;
- what the sampler records (budget, ended, entropy) against a recomputation, and the overlong penalty that
  reads it (a batch from two budgets: each row against its own);
- the mapping to TRL's config and back.
Each comparison has a negative control.
"""

import dataclasses
import doctest
import itertools
import math
import sys

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings, strategies as st

from unified_rl import advantages as A, objectives as O, paradigm as P, peers
from unified_rl.derivations import check, derive
from unified_rl.derivations.core import EPS_HIGH, EPS_LOW
from unified_rl.methods import METHODS, POLICY_GRADIENT, gc_of
from unified_rl.parts import AGGREGATIONS, KL_TERMS, POLICY_TERMS, REGISTRIES, View, compose
from unified_rl.presets import get_preset
from unified_rl.rewards import OverlongReward, overlong_penalty
from unified_rl.rewards import policy_gradient as RP
from unified_rl.sampling import cat_rollouts, sample, token_logp
from unified_rl.trainer import make_lab

TOL = 1e-10
NEW = ("sapo", "vespo", "luspo", "gmpo", "clip-cov", "kl-cov", "gpg", "opo", "grpo-passk", "gdpo")
LEVELS = ("token", "sequence")


def make(seed, G=4, n_groups=3, T=7, spread=0.4):
    g = torch.Generator().manual_seed(seed)
    B = G * n_groups
    mask = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        s = int(torch.randint(0, T, (1,), generator=g))
        mask[i, s:s + int(torch.randint(1, T - s + 1, (1,), generator=g))] = 1
    lp = (-3 * torch.rand(B, T, generator=g, dtype=torch.float64)).requires_grad_()
    old = lp.detach() + spread * torch.randn(B, T, generator=g, dtype=torch.float64)
    ref = -3 * torch.rand(B, T, generator=g, dtype=torch.float64)
    r = torch.randint(0, 2, (B,), generator=g).double() if seed % 2 else torch.randn(B, generator=g, dtype=torch.float64)
    entropy = torch.rand(B, T, generator=g, dtype=torch.float64) * mask
    truncated = torch.rand(B, generator=g) < 0.25
    return dict(mask=mask, lp=lp, old=old, ref=ref, r=r, entropy=entropy, truncated=truncated, G=G, g=g)


def diff(J, coef, d):
    (gJ,) = torch.autograd.grad(J, d["lp"])
    (gS,) = torch.autograd.grad(-P.surrogate_loss(d["lp"], coef, d["mask"]), d["lp"])
    return (gJ - gS).abs().max().item()


def step(d, m, old=None, beta=0.04, hp=None, scores=None, **kw):
    cfg = dataclasses.replace(get_preset("cpu").rl, beta=beta, clip_eps=0.2)
    return P.step_from_tensors(d["lp"], d["mask"], cfg, logp_ref=d["ref"], logp_old=old,
                               scores=d["r"] if scores is None else scores, group_size=d["G"],
                               hp=m.hparams if hp is None else hp, **kw)


def oracle_diff(m, d, old=None, hp=None, scale=1.0, **kw):
    """max |grad J - grad surrogate| of Method m's objective and (scale times) its coefficient on batch d."""
    s = step(d, m, old, hp=hp, **kw)
    return diff(m.objective(s), scale * m.coefficient(s), d)


OPTIONS = st.fixed_dictionaries({
    "scale_rewards": st.sampled_from(A.SCALES), "importance_sampling_level": st.sampled_from(LEVELS),
    "aggregation": st.sampled_from(sorted(AGGREGATIONS)), "use_bias_correction_kl": st.booleans(),
    "delta": st.sampled_from([None, 1.1, 1.4]), "clip_eps_high": st.sampled_from([None, 0.28]),
    "mask_truncated_completions": st.booleans(), "top_entropy_quantile": st.sampled_from([1.0, 0.43, 0.2]),
    "off_policy_mask_threshold": st.sampled_from([None, 0.0, 0.05]), "adv_eps": st.sampled_from([1e-6, 1e-4])})


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 10 ** 6), OPTIONS, st.booleans(), st.floats(0.0, 0.2))
def test_grpo_options_oracle(seed, opts, off_policy, beta):
    d = make(seed)
    m = METHODS["grpo"]
    hp = dataclasses.replace(m.hparams, max_len=5.0, **opts)
    s = step(d, m, d["old"] if off_policy else None, beta, hp, truncated=d["truncated"], entropy=d["entropy"])
    assert diff(m.objective(s), m.coefficient(s), d) < TOL


def test_grpo_at_its_defaults_is_eq_19_as_printed():
    """The grpo row with every option at its default: eq 19-21 written out (objectives.paper), on and off policy."""
    for seed in range(5):
        d = make(seed)
        for old in (None, d["old"]):
            J = O.grpo(d["lp"], d["lp"].detach() if old is None else old, d["ref"], d["r"], d["G"], d["mask"],
                       0.04, 0.2)
            assert diff(J, METHODS["grpo"].coefficient(step(d, METHODS["grpo"], old)), d) < TOL
    d = make(0)  # the negative control: one option away from the default changes it
    hp = dataclasses.replace(METHODS["grpo"].hparams, delta=1.05)
    J = O.grpo(d["lp"], d["old"], d["ref"], d["r"], d["G"], d["mask"], 0.04, 0.2)
    assert diff(J, METHODS["grpo"].coefficient(step(d, METHODS["grpo"], d["old"], hp=hp)), d) > 1e-6


def peer_compositions(agg):
    """The ratio shapes and baselines TRL and verl ship, each composed with aggregation `agg` (L = 4)."""
    kw = dict(aggregation=agg, max_len=4.0)
    return {
        "sapo": compose("grpo", "sapo", sapo_tau_pos=0.7, sapo_tau_neg=1.6, **kw),
        "vespo": compose("grpo", "vespo", vespo_k_pos=2.5, vespo_lambda_pos=1.5, vespo_k_neg=3.5,
                         vespo_lambda_neg=2.5, **kw),
        "gmpo": compose("grpo", "geo_mean", gmpo_clip_eps=0.1, gmpo_clip_eps_high=0.15, **kw),
        "clip_cov": compose("grpo", "clip_cov", clip_cov_ratio=0.3, clip_cov_lb=-0.5, clip_cov_ub=0.5, **kw),
        "kl_cov": compose("grpo", "kl_cov", kl_cov_ratio=0.2, kl_cov_coef=0.7, **kw),
        "gpg": compose("gpg", "reinforce", gpg_count="nonzero-reward", **kw),
        "opo": compose("opo", "vanilla", **kw),
        "dro": compose("grpo", "dro", dro_beta=0.3, **kw),
    }


@pytest.mark.parametrize("agg", sorted(AGGREGATIONS))
def test_ratio_shape_and_baseline_oracles(agg):
    for seed, off_policy in itertools.product(range(6), (False, True)):
        d = make(seed)
        for name, m in peer_compositions(agg).items():
            assert oracle_diff(m, d, d["old"] if off_policy else None) < TOL, (name, seed, off_policy)


def test_a_wrong_coefficient_fails_each_oracle():
    """Negative controls: each coefficient scaled by 1.01, or with its clip or gate changed, fails its oracle."""
    d = make(3)
    parts = peer_compositions("token-mean")
    for name, m in parts.items():
        assert oracle_diff(m, d, d["old"], scale=1.01) > 1e-6, name
    gmpo, sapo = parts["gmpo"], parts["sapo"]
    swapped = dataclasses.replace(gmpo.hparams, gmpo_clip_eps=0.15, gmpo_clip_eps_high=0.1)  # clip sides swapped
    s = step(d, gmpo, d["old"])
    assert diff(gmpo.objective(s), gmpo.coefficient(step(d, gmpo, d["old"], hp=swapped)), d) > 1e-6
    swapped = dataclasses.replace(sapo.hparams, sapo_tau_pos=1.6, sapo_tau_neg=0.7)  # temperatures swapped
    s = step(d, sapo, d["old"])
    assert diff(sapo.objective(s), sapo.coefficient(step(d, sapo, d["old"], hp=swapped)), d) > 1e-6


def two_columns(d):
    return torch.stack([d["r"], -torch.rand(len(d["r"]), generator=d["g"], dtype=torch.float64)], -1)


def test_every_new_method_through_its_step_matches_its_objective():
    for name in NEW + ("grpo", "cispo", "reinforce++", "dro"):
        m = METHODS[name]
        for off_policy in (False, True):
            d = make(5)
            scores = two_columns(d) if name == "gdpo" else None
            assert oracle_diff(m, d, d["old"] if off_policy else None, scores=scores, truncated=d["truncated"],
                               entropy=d["entropy"]) < TOL, name


def test_every_new_method_gives_zero_where_a_group_carries_no_signal():
    d = make(2)
    for name in NEW + ("grpo", "cispo", "dro"):
        m = METHODS[name]
        flat = torch.zeros(len(d["r"]), 2 if name == "gdpo" else 1, dtype=torch.float64).squeeze(-1)
        s = P.step_from_tensors(d["lp"], d["mask"], get_preset("cpu").rl, logp_ref=d["lp"].detach(), scores=flat,
                                group_size=d["G"], hp=m.hparams)
        coef = m.coefficient(s)
        assert torch.isfinite(coef).all() and (coef == 0).all(), name


def test_the_part_pages_and_peers_doctests():
    pages = {sys.modules[p.gc.__module__] for r in REGISTRIES.values() for p in r.values()}
    for mod in sorted(pages | {A, peers, RP}, key=lambda m: m.__name__):
        assert doctest.testmod(mod).failed == 0, mod.__name__
    assert len(pages) >= 10  # every page of the parts, not a few modules


def test_bad_options_are_named():
    d = make(1)
    hp = METHODS["grpo"].hparams
    for kw, match in ((dict(scale_rewards="std"), "scale_rewards"), (dict(importance_sampling_level="word"),
                                                                      "importance_sampling_level"),
                      (dict(aggregation="sum"), "aggregation"), (dict(aggregation="batch-token-mean"), "token-mean")):
        with pytest.raises(ValueError, match=match):
            dataclasses.replace(hp, **kw)
    args = (d["lp"], d["mask"])
    tensors = dict(logp_ref=d["ref"], scores=d["r"], group_size=d["G"], beta=0.04)
    for kw, extra, match in ((dict(top_entropy_quantile=0.5), {}, "entropy"),
                             (dict(top_entropy_quantile=1.5), dict(entropy=d["entropy"]), "top_entropy_quantile"),
                             (dict(mask_truncated_completions=True), dict(truncated=torch.zeros(3, dtype=torch.bool)),
                              "truncated"), (dict(delta=float("nan")), dict(logp_old=d["old"]), "delta"),
                             (dict(mask_truncated_completions=True), {}, "rows it cut")):
        with pytest.raises(ValueError, match=match):
            gc_of("grpo", *args, settings=kw, **{**tensors, **extra})
    with pytest.raises(ValueError, match="logp_ref"):
        gc_of("grpo", *args, **{**tensors, "logp_ref": None})
    with pytest.raises(ValueError, match="temperatures"):
        gc_of("sapo", *args, settings=dict(sapo_tau_pos=0.0), scores=d["r"], group_size=d["G"])


# ---------------------------------------------------------------- the advantages, from their definitions

def test_advantages_against_their_definitions():
    r = torch.tensor([1., 0., 0., 0., 1., 1., 1., 1., 0., 1., 1., 0.], dtype=torch.float64)
    groups = r.view(-1, 4)
    centred = (groups - groups.mean(-1, keepdim=True)).flatten()
    assert torch.allclose(A.scaled(r, 4, "none"), centred)
    assert torch.allclose(A.scaled(r, 4, "batch", 0.0), centred / r.std())
    assert torch.allclose(A.scaled(r, 4, "group"), A.group_relative(r, 4))
    # GPG: B over the samples that count; the middle group (all 1) counts none of its four
    assert torch.allclose(A.gpg(r, 4), 12 / 8 * centred)
    assert torch.allclose(A.gpg(r, 4, "nonzero-reward"), 12 / 7 * centred)
    n = torch.tensor([3., 1., 2., 2., 1., 1., 1., 1., 4., 1., 1., 2.])
    b = [(n[k:k + 4] * r[k:k + 4]).sum() / n[k:k + 4].sum() for k in (0, 4, 8)]
    want = torch.cat([r[k:k + 4] - b[j] for j, k in enumerate((0, 4, 8))])
    assert torch.allclose(A.length_weighted(r, n, 4), want)
    passk = A.best_of_group(torch.tensor([0., 1., 0., 0., 1., 1., 0., 0.]), 4, std=False)
    assert passk.tolist() == [0., 1., 0., 0., 0., 0., 0., 0.]  # a tie at the top gives nothing
    two = torch.stack([r, torch.linspace(-1, 1, 12, dtype=torch.float64)], -1)
    scaled = two.clone()
    scaled[:4, 1] *= 10.0  # one reward's spread in one group: GDPO's advantage does not see it, the sum's does
    assert torch.allclose(A.decoupled(two, 4, 0.0), A.decoupled(scaled, 4, 0.0))  # eps 0: scale-free
    assert not torch.allclose(A.group_relative(two.sum(-1), 4), A.group_relative(scaled.sum(-1), 4))
    with pytest.raises(ValueError, match="count"):
        A.gpg(r, 4, "all")
    with pytest.raises(ValueError, match="lengths"):
        A.length_weighted(r, n[:3], 4)


# ---------------------------------------------------------------- derivations against the coefficients

def one_response(lp, old, ref=None, **settings_):
    """A View of one response (the given token log-probs) under a grpo composition's settings."""
    t = lambda x: torch.tensor(np.asarray([x]), dtype=torch.float64)  # noqa: E731
    m = compose("grpo", "vanilla", "k3", **settings_)
    cfg = dataclasses.replace(get_preset("cpu").rl, beta=0.3)
    s = P.step_from_tensors(t(lp), torch.ones(1, len(lp), dtype=torch.float64), cfg, logp_old=t(old),
                            logp_ref=None if ref is None else t(ref), scores=torch.zeros(1), hp=m.hparams)
    return View.of(s, m.hparams)


def policy_gc(name, v, adv, **settings_):
    hp = compose("grpo", name, **settings_).hparams
    return POLICY_TERMS[name].gc(dataclasses.replace(v, hp=hp), torch.full_like(v.mask, adv), v.mask)


def test_the_new_derivations_match_the_part_coefficients():
    rng = np.random.default_rng(0)
    lp, old = rng.normal(size=2), rng.normal(size=2) * 0.3
    v = one_response(lp, old)
    gc = derive("sapo", 2).evaluate(adv=0.8, logp=lp, logp_old=old, tau=1.3)
    np.testing.assert_allclose(gc, policy_gc("sapo", v, 0.8, sapo_tau_pos=1.3, sapo_tau_neg=1.3).flatten(), rtol=1e-12)
    gc = derive("vespo", 2).evaluate(adv=-0.5, logp=lp, logp_old=old, k=3.0, **{"lambda": 2.0})
    want = policy_gc("vespo", v, -0.5, vespo_k_pos=9.0, vespo_lambda_pos=9.0, vespo_k_neg=3.0, vespo_lambda_neg=2.0)
    np.testing.assert_allclose(gc, want.flatten(), rtol=1e-12)
    m = torch.tensor([[1., 0.], [1., 1.]], dtype=torch.float64)  # OPO: responses of 1 and 2 tokens
    want = gc_of("opo", torch.zeros(2, 2, dtype=torch.float64), m, scores=torch.tensor([1., 0.], dtype=torch.float64),
                 group_size=2)
    np.testing.assert_allclose(derive("opo", 1).evaluate(rewards=[1.0, 0.0], logp=np.zeros(3)), want[m.bool()],
                               rtol=1e-12)
    lp, old, ref = (rng.normal(size=3) for _ in range(3))
    gc = derive("grpo_sequence_kl_ratio", 3).evaluate(logp=lp, logp_old=old, logp_ref=ref, beta=0.3)
    v = one_response(lp, old, ref, use_bias_correction_kl=True, importance_sampling_level="sequence")
    np.testing.assert_allclose(gc, KL_TERMS["k3"].gc(v).flatten(), rtol=1e-12)
    v = one_response(lp, old, ref, use_bias_correction_kl=True)  # the control: the token ratio is another GC
    assert not np.allclose(gc, KL_TERMS["k3"].gc(v).flatten(), rtol=1e-6)


def test_wrong_derivations_fail():
    """A two-sided clip without its delta stop, GMPO's GC without its clip, SAPO without the gate's slope."""
    two = derive("grpo_two_sided", 1)
    l, lo = two.symbols["logp"], two.symbols["logp_old"]
    a = two.symbols["adv"]
    r = sp.exp(l[0] - lo[0])
    plain = sp.Piecewise((0, ((a > 0) & (r > 1 + EPS_HIGH)) | ((a < 0) & (r < 1 - EPS_LOW))), (r * a, True))
    sapo = derive("sapo", 1)
    gmpo = derive("gmpo", 1)
    for d, hand in ((two, (plain,)), (sapo, (sapo.symbols["adv"] * sp.exp(sapo.symbols["logp"][0]),)),
                    (gmpo, (gmpo.symbols["adv"],))):
        with pytest.raises(AssertionError, match="differs from the hand form"):
            check(dataclasses.replace(d, hand=hand))


# ---------------------------------------------------------------- what the sampler records

@pytest.fixture(scope="module")
def lab():
    return make_lab("tiny", seed=0)


def test_the_sampler_records_budget_end_and_entropy(lab):
    torch.manual_seed(0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:6], group_size=2, max_new_tokens=9)
    assert batch.budget.tolist() == [9] * 12
    eos = lab.tokenizer.eos_token_id
    last = batch.input_ids.gather(1, (batch.prompt_len + batch.response_lengths - 1)[:, None]).squeeze(1)
    assert batch.ended.tolist() == (last == eos).tolist() and batch.truncated.any() and batch.ended.any()
    with torch.no_grad():  # the entropy recomputed from a full forward of the policy
        logits = lab.policy(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    logp = logits.float().log_softmax(-1)
    H = -(logp.exp() * logp).sum(-1) * batch.mask
    assert torch.allclose(batch.entropy, H, atol=1e-5) and (batch.entropy[batch.mask > 0] > 0).all()
    assert torch.allclose(token_logp(lab.policy, batch.input_ids, batch.attention_mask) * batch.mask, batch.logp,
                          atol=1e-5)
    part = batch.select([2, 3], group_size=2)
    assert part.ended.tolist() == batch.ended[2:4].tolist() and torch.equal(part.entropy, batch.entropy[2:4])


def test_the_overlong_penalty_reads_each_rows_budget(lab):
    """A batch gathered from two draws with different budgets: each row is penalised against its own."""
    torch.manual_seed(1)
    a = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=2, max_new_tokens=8)
    b = sample(lab.policy, lab.tokenizer, lab.rl_problems[4:8], group_size=2, max_new_tokens=14)
    both = cat_rollouts([a, b], pad_token_id=lab.tokenizer.pad_token_id)
    reward = OverlongReward()
    lengths = both.mask.sum(-1)
    want = torch.cat([overlong_penalty(lengths[:8], 8, 4), overlong_penalty(lengths[8:], 14, 4)])
    assert torch.allclose(reward(both) - reward.base(both), want.to(reward(both)))
    assert reward.budget(both) == 14
    recomputed = overlong_penalty(lengths, reward.budget(both), 4)  # the slip: one budget for every row
    assert not torch.allclose(recomputed, want)
    given = both.select(list(range(len(both))), group_size=2)
    given = dataclasses.replace(given, budget=None)
    with pytest.raises(ValueError, match="budget"):
        reward(given)


# ---------------------------------------------------------------- the maps

def test_to_trl_and_from_trl_agree():
    for name, over in (("grpo", {}), ("grpo", {"aggregation": "token-mean", "delta": 1.5, "adv_eps": 1e-4}),
                       ("grpo", {"aggregation": "group-token-mean"}),
                       ("grpo", {"scale_rewards": "none", "aggregation": "constant", "max_len": 64.0}),
                       ("grpo", {"importance_sampling_level": "sequence", "aggregation": "seq-mean-token-sum"}),
                       ("luspo", {}), ("cispo", {"aggregation": "token-mean"}), ("sapo", {}), ("vespo", {})):
        out = peers.to_trl(name, **over)
        back, settings_ = peers.from_trl(**{k: v for k, v in out.config.items() if k in peers.TRL_DEFAULTS})
        hp = dataclasses.replace(METHODS[name].hparams, **{k: v for k, v in over.items()
                                                           if hasattr(METHODS[name].hparams, k)})
        assert back == name, (name, over, back)
        for k, v in settings_.items():
            if hasattr(hp, k) and k != "adv_eps" and (k != "max_len" or hp.aggregation == "seq-mean-token-sum-norm"):
                assert getattr(hp, k) == v or (k == "clip_eps_high" and getattr(hp, k) is None), (name, k)
        assert any("1e-4" in x for x in out.differences) == (over.get("adv_eps", 1e-6) != 1e-4)
    with pytest.raises(ValueError, match="no GRPOConfig"):
        peers.to_trl("ppo")
    with pytest.raises(ValueError, match="no TRL loss_type"):
        peers.to_trl("grpo", aggregation="token-sum")
    with pytest.raises(ValueError, match="requires importance_sampling_level"):
        peers.to_trl("grpo", aggregation="seq-mean-token-sum")


def test_every_policy_gradient_method_is_listed_by_the_cli(capsys):
    from unified_rl.cli import main
    main(["methods"])
    out = capsys.readouterr().out
    assert all(m.name in out for m in POLICY_GRADIENT) and all(n in METHODS for n in NEW)
    assert math.isfinite(len(out))
