"""The 2026 field's loss-side parts against their peers' own code or formulas, each with a slip that fails.

TRL 1.16's own code checks the sampler corrections and the entropy bonus (tests/test_field_2026_trl.py). verl,
prime-rl, SkyRL, ROLL and NeMo-RL are not installed: each REFERENCE below is written from
the peer's file at the named commit (not imported, not copied), a plain loss over the log-probs differentiated by
autograd, on a ragged float64 batch on-policy and off-policy (pi_theta moved from pi_old), with a sampler that is
not the learner in both. The package's side is the coefficient of the composition of parts through eq 5's
surrogate. Tolerance 1e-10 of the largest gradient entry (float64 round-off is ~1e-15); each planted slip moves the
gradient far above it (asserted > 1e-3).

Commits read: verl-project/verl 1dda039b9c6311889a9c9a26040677e1254814f9 (verl/trainer/ppo/core_algos.py:
compute_policy_loss_dppo_tv, compute_policy_loss_dppo_kl, agg_loss); PrimeIntellect-ai/prime-rl
559b44772e471d1538537b8805cc77f3824a5e64 (src/prime_rl/trainer/rl/loss.py default_loss_fn); NovaSky-AI/SkyRL
a9564572eb8e91076be43c1bd5e4615e3de17265 (skyrl/backends/skyrl_train/utils/ppo_utils.py ppo_policy_loss,
apply_loss_reduction_to_advantages_minibatch, dppo_policy_loss); alibaba/ROLL 8eb27cc2dc34c4d1310b169d9b86d339004d811a
(roll/pipeline/agentic/agentic_actor_pg_worker.py _compute_topr_loss, _compute_kimi15_loss; roll/utils/functionals.py
reward_norm); NVIDIA-NeMo/RL 7ea279abfbeb698b092856d0dab61e7cf39bc909 (nemo_rl/algorithms/loss/loss_functions.py
ClippedPGLossFn: truncated importance sampling tis / icepop / seq-mask-tis, positive_example_nll_weight).
"""

import dataclasses

import pytest
import torch

from unified_rl.paradigm import Step, TensorBatch, surrogate_loss
from unified_rl.parts import ADVANTAGES, AGGREGATIONS, KL_TERMS, MASKS, POLICY_TERMS, TERMS, compose
from unified_rl.presets import get_preset

G, GROUPS, T = 4, 3, 7
EXACT, SLIP = 1e-10, 1e-3
LENGTHS = [2, 7, 1, 5, 4, 7, 3, 6, 7, 2, 5, 4]
REWARDS = [1., 0.5, 0., 1., 0., 1., 0.5, 1., 0., 0., 0., 0.]  # rows with r > 0 and A < 0; a group all equal


@dataclasses.dataclass
class SampledBatch(TensorBatch):
    logp: torch.Tensor = None  # the sampler's log-probs (what a Rollout records)


def batch(off_policy, seed=0):
    """A ragged float64 batch: pi_theta, pi_old (moved from it off-policy) and a sampler that is neither."""
    g = torch.Generator().manual_seed(seed)
    mask = (torch.arange(T)[None] < torch.tensor(LENGTHS)[:, None]).double()
    noise = lambda s: s * torch.randn(len(LENGTHS), T, generator=g, dtype=torch.float64)  # noqa: E731
    p = 0.02 + 0.96 * torch.rand(len(LENGTHS), T, generator=g, dtype=torch.float64)  # probabilities of the tokens
    logp = torch.log(p)
    cap = torch.log(torch.tensor(0.99, dtype=torch.float64))
    old = (logp + noise(0.3)).clamp(max=cap) if off_policy else logp.clone()
    sampler = (old + noise(0.25)).clamp(max=cap)
    return dict(mask=mask, logp=logp, old=old, sampler=sampler, r=torch.tensor(REWARDS, dtype=torch.float64))


def grpo_adv(b, eps=1e-6):
    """verl's compute_grpo_outcome_advantage (and the grpo part's): (r - mean) / (sample std + eps), per token."""
    r = b["r"].view(-1, G)
    a = (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + eps)
    return a.reshape(-1, 1) * b["mask"]


def ours(b, lp, method, clip_eps=0.2):
    """eq 5's surrogate under the composition's coefficient (a J whose gradient is the method's)."""
    cfg = dataclasses.replace(get_preset("cpu").rl, clip_eps=clip_eps)
    step = Step(SampledBatch(b["mask"], G, None, None, b["sampler"]), b["r"], lp, b["old"], None, None, cfg,
                method.hparams)
    return -surrogate_loss(lp, method.coefficient(step), b["mask"])


def grads(b, reference, method, clip_eps=0.2):
    lp_r, lp_o = b["logp"].clone().requires_grad_(), b["logp"].clone().requires_grad_()
    (g_ref,) = torch.autograd.grad(-reference(b, lp_r), lp_r)  # the peers minimise a loss: J = -loss
    (g_ours,) = torch.autograd.grad(ours(b, lp_o, method, clip_eps), lp_o)
    return g_ours, g_ref


def rel(a, b):
    assert b.abs().max() > 1e-6
    return ((a - b).abs().max() / b.abs().max()).item()


# ---------------------------------------------------------------- the references, written from each peer's file

def agg(loss, mask, mode):
    """verl's agg_loss at 1dda039b for one process (dp_size 1): token-mean, token-sum."""
    return {"token-mean": lambda: (loss * mask).sum() / mask.sum(), "token-sum": lambda: (loss * mask).sum()}[mode]()


def verl_dppo(kind, low, high, cap, mode):
    """compute_policy_loss_dppo_tv / _kl: -A sg(min(r, C)) log pi on the tokens DPPO's mask keeps."""
    def loss(b, lp):
        adv = grpo_adv(b)
        ratio = torch.exp(torch.clamp(lp - b["old"], -20.0, 20.0))
        trunc = torch.clamp(ratio, max=cap).detach()
        prob, old_prob = torch.exp(lp), torch.exp(b["old"])
        if kind == "tv":
            ok_pos, ok_neg = (prob - old_prob) <= high, (prob - old_prob) >= -low
        else:
            bkl = old_prob * (b["old"] - lp) + (1 - old_prob) * torch.log((1.0 - old_prob + 1e-8) / (1.0 - prob + 1e-8))
            ok_pos, ok_neg = (bkl <= high) | (prob <= old_prob), (bkl <= low) | (prob >= old_prob)
        valid = torch.where(adv > 0, ok_pos, ok_neg).detach().float()
        return agg(-adv * trunc * lp * valid, b["mask"], mode)
    return loss


def prime_rl(low, high, kl_tau, adv_tau=1.0):
    """default_loss_fn, its inference log-probs as pi_old: summed over every sample, over the rl token count."""
    def loss(b, lp):
        adv, mask = grpo_adv(b), b["mask"].bool()
        log_r = lp - b["old"]
        diff = torch.exp(lp) - torch.exp(b["old"])
        masked = torch.where(adv > 0, diff > high, diff < -low)
        keep = mask & ~masked
        per_token = -(keep * adv_tau * adv * torch.exp(log_r)) + kl_tau * (mask * log_r ** 2)
        return per_token.sum() / mask.sum()
    return loss


def skyrl_prompt_mean(eps=0.2):
    """ppo_policy_loss summed (reduce_loss) with advantages rescaled by 1 / (prompts x the prompt's tokens)."""
    def loss(b, lp):
        adv, mask = grpo_adv(b), b["mask"]
        tokens = mask.view(-1, G * T).sum(-1).clamp(min=1).repeat_interleave(G)[:, None]
        adv = adv / (GROUPS * tokens)
        ratio = torch.exp(lp - b["old"])
        return (-torch.min(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv) * mask).sum()
    return loss


def roll_agg(loss, mask):
    """ROLL's agg_loss, seq-mean-token-mean, one process: each row's token mean, then the mean over rows."""
    return ((loss * mask).sum(-1) / mask.sum(-1)).mean()


def roll_topr(w_pos, w_neg):
    """_compute_topr_loss: -A log pi on rows with score > 0, -sg(clamp(r, 0, 1)) A log pi on the others."""
    def loss(b, lp):
        adv = grpo_adv(b)
        pos = (b["r"] > 0).float()[:, None].expand_as(lp)
        clipped = torch.clamp(torch.exp(lp - b["old"]), min=0.0, max=1.0).detach()
        return roll_agg(w_pos * (-adv * lp * pos) + w_neg * (-clipped * adv * lp * (1 - pos)), b["mask"])
    return loss


def roll_kimi15(tau):
    """_compute_kimi15_loss: -A log pi + tau/2 (log pi - log pi_old)^2 per token."""
    def loss(b, lp):
        return roll_agg(-grpo_adv(b) * lp + tau * 0.5 * (lp - b["old"]) ** 2, b["mask"])
    return loss


def kimi_paper(tau):
    """Kimi k1.5 eq 3 (arXiv 2501.12599), the response's log-prob and log-ratio summed, mean over responses."""
    def loss(b, lp):
        adv = grpo_adv(b)[:, 0]
        seq = (lp * b["mask"]).sum(-1)
        log_r = ((lp - b["old"]) * b["mask"]).sum(-1)
        return -(adv * seq - tau / 2 * log_r ** 2).mean()
    return loss


def roll_reward_norm(mean_type, std_type):
    """reward_norm (ROLL's eps 1e-6, torch.std) into REINFORCE, seq-mean-token-mean."""
    def loss(b, lp):
        r = b["r"]
        g = r.reshape(-1, G)
        mean = {"batch": r.mean(), "group": g.mean(-1, keepdim=True), None: 0.0}[mean_type]
        std = {"batch": r.std(), "group": torch.std(g, dim=-1, keepdim=True)}.get(std_type)
        base = g if mean_type == "group" else r
        a = (base - mean) / (std + 1e-6) if std_type is not None else base - mean
        a = a.reshape(-1)
        return roll_agg(-a[:, None] * lp, b["mask"])
    return loss


def nemo(kind=None, low=None, high=None, nll=0.0, token_level=True, eps=0.2):
    """ClippedPGLossFn: the PPO clip loss, times the actor IS weights exp(prev - generation) truncated by `kind`
    (tis / icepop / seq-mask-tis; use_importance_sampling_correction, none without a kind), plus
    positive_example_nll_weight times the NLL of the rows with reward > 0 over their own tokens."""
    def loss(b, lp):
        adv, mask = grpo_adv(b), b["mask"]
        ratio = torch.exp(lp - b["old"])
        clip_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - eps, 1 + eps))
        w = torch.exp(b["old"] - b["sampler"]) if kind else torch.ones_like(lp)
        if kind == "tis":
            w = torch.clamp(w, min=0.0 if low is None else low, max=high)
        elif kind == "icepop":
            w = torch.where((w >= low) & (w <= high), w, torch.zeros_like(w))
        elif kind == "seq-mask-tis":
            geo = torch.exp(((b["old"] - b["sampler"]) * mask).sum(-1) / mask.sum(-1))
            w = w * ((geo >= low) & (geo <= high)).float()[:, None]
        per = w * clip_loss
        actor = (per * mask).sum() / mask.sum() if token_level else ((per * mask).sum(-1) / mask.sum(-1)).mean()
        correct = mask * (b["r"] > 0).float()[:, None]
        return actor + nll * (-lp * correct).sum() / correct.sum()
    return loss


# ---------------------------------------------------------------- the cases: (parts, reference, slips)

def kl_or_term(name):
    """compose's argument for a KL term (kl=) or a term beside the policy term (terms=), by its registry."""
    return {} if name is None else {"kl": name} if name in KL_TERMS else {"terms": (name,)}


def comp(advantage, policy, kl=None, aggregation="seq-mean-token-mean", masks=(), **settings):
    return lambda: compose(advantage, policy, aggregation=aggregation, masks=masks, name="case", **kl_or_term(kl),
                           **settings)


CASES = {
    "verl-dppo-tv-token-mean": (comp("grpo", "dppo_tv", aggregation="token-mean", dppo_tv_delta_low=0.1,
                                     dppo_tv_delta_high=0.12, dppo_tv_ratio_cap=1.3),
                                verl_dppo("tv", 0.1, 0.12, 1.3, "token-mean")),
    "verl-dppo-tv-token-sum": (comp("grpo", "dppo_tv", aggregation="token-sum", dppo_tv_delta_low=0.1,
                                    dppo_tv_delta_high=0.1, dppo_tv_ratio_cap=None),
                               verl_dppo("tv", 0.1, 0.1, 10000.0, "token-sum")),
    "verl-dppo-kl": (comp("grpo", "dppo_kl", aggregation="token-mean", dppo_kl_delta_low=0.02, dppo_kl_delta_high=0.03,
                          dppo_kl_ratio_cap=1.3), verl_dppo("kl", 0.02, 0.03, 1.3, "token-mean")),
    "prime-rl-default": (comp("grpo", "dppo_tv", kl="log_ratio_sq", aggregation="token-mean", dppo_tv_delta_low=0.1,
                              dppo_tv_delta_high=0.1, log_ratio_sq_tau=0.05), prime_rl(0.1, 0.1, 0.05)),
    "skyrl-prompt-mean": (comp("grpo", "vanilla", aggregation="prompt_mean"), skyrl_prompt_mean()),
    "roll-topr": (comp("grpo", "topr", topr_positive_weight=0.7, topr_negative_weight=1.3), roll_topr(0.7, 1.3)),
    "roll-kimi15": (comp("grpo", "kimi15", kimi15_tau=0.4), roll_kimi15(0.4)),
    "kimi15-paper": (comp("grpo", "kimi15", aggregation="seq-mean-token-sum", kimi15_tau=0.4, kimi15_level="sequence"),
                     kimi_paper(0.4)),
    "roll-lite-ppo": (comp("lite_ppo", "reinforce"), roll_reward_norm("group", "batch")),
    "roll-batch-mean-batch-std": (comp("reward_norm", "reinforce", norm_mean_type="batch", norm_std_type="batch"),
                                  roll_reward_norm("batch", "batch")),
    "roll-group-mean-group-std": (comp("reward_norm", "reinforce", norm_mean_type="group", norm_std_type="group"),
                                  roll_reward_norm("group", "group")),
    "roll-group-mean-no-std": (comp("reward_norm", "reinforce", norm_mean_type="group", norm_std_type="none"),
                               roll_reward_norm("group", None)),
    "roll-batch-mean-no-std": (comp("reward_norm", "reinforce", norm_mean_type="batch", norm_std_type="none"),
                               roll_reward_norm("batch", None)),
    "nemo-tis": (comp("grpo", "vanilla", aggregation="token-mean", masks=("tis",), sampler_correction_cap=1.2,
                      sampler_correction_floor=None), nemo("tis", None, 1.2)),
    "nemo-tis-floor": (comp("grpo", "vanilla", aggregation="token-mean", masks=("tis",), sampler_correction_cap=1.2,
                            sampler_correction_floor=0.9), nemo("tis", 0.9, 1.2)),
    "nemo-icepop": (comp("grpo", "vanilla", aggregation="token-mean", masks=("tis", "mis"), sampler_correction_cap=None,
                         sampler_mask_low=0.85, sampler_mask_high=1.2), nemo("icepop", 0.85, 1.2)),
    "nemo-seq-mask-tis": (comp("grpo", "vanilla", aggregation="token-mean", masks=("tis", "mis"),
                               sampler_correction_cap=None, sampler_mask_level="geometric", sampler_mask_low=0.9,
                               sampler_mask_high=1.1), nemo("seq-mask-tis", 0.9, 1.1)),
    "nemo-vapo-nll": (comp("grpo", "vanilla", kl="positive_nll", aggregation="token-mean",
                           positive_example_nll_weight=0.3), nemo(nll=0.3)),
    "nemo-vapo-nll-sequence-level": (comp("grpo", "vanilla", kl="positive_nll", positive_example_nll_weight=0.3),
                                     nemo(nll=0.3, token_level=False)),
}


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_part_equals_its_peers_formula(case, off_policy):
    make, reference = CASES[case]
    g_ours, g_ref = grads(batch(off_policy), reference, make())
    assert rel(g_ours, g_ref) < EXACT, case


def test_the_batch_sits_on_both_sides_of_every_bound():
    """Off-policy: DPPO's masks drop some tokens and keep others, its cap binds on some; the sampler's ratio crosses
    TIS's cap and floor, IcePop's band and the geometric band; TOPR's taper binds on some negative tokens only."""
    b = batch(True)
    on = b["mask"].bool()
    diff = (torch.exp(b["logp"]) - torch.exp(b["old"]))[on]
    r = torch.exp(b["logp"] - b["old"])[on]
    rho_s = torch.exp(b["old"] - b["sampler"])[on]
    geo = torch.exp(((b["old"] - b["sampler"]) * b["mask"]).sum(-1) / b["mask"].sum(-1))
    both = lambda x: bool(x.any()) and not bool(x.all())  # noqa: E731
    assert both(diff > 0.12) and both(diff < -0.1) and both(r > 1.3) and both(r > 1.0)
    assert both(rho_s > 1.2) and both(rho_s < 0.9) and both(rho_s < 0.85) and both((geo >= 0.9) & (geo <= 1.1))
    q, p = torch.exp(b["old"])[on], torch.exp(b["logp"])[on]
    bkl = q * (torch.log(q) - torch.log(p)) + (1 - q) * torch.log((1 - q) / (1 - p))
    assert both(bkl > 0.03) and both(bkl > 0.02)


# ---------------------------------------------------------------- planted slips: each fails its peer's check

def _rho_s(v):
    return torch.exp(v.logp_old - v.sampler_logp)


ORIGINAL = {name: POLICY_TERMS[name].gc for name in ("dppo_tv", "topr")}  # the parts' own, before a plant


SLIPS = {  # name: (case, registry, part, planted gc (of the part's own arguments))
    "TIS's ratio the wrong way round (pi_sampler / pi_old)":
        ("nemo-tis", MASKS, "tis", lambda v, adv: (1 / _rho_s(v)).clamp(max=1.2).expand_as(v.mask)),
    "TIS's cap on rho A instead of on rho":
        ("nemo-tis", MASKS, "tis", lambda v, adv: torch.where(adv != 0, (_rho_s(v) * adv).clamp(max=1.2)
                                                              / adv.where(adv != 0, torch.ones_like(adv)), _rho_s(v))),
    "seq-mask-tis's band on the response's product, not its geometric mean":
        ("nemo-seq-mask-tis", MASKS, "mis", lambda v, adv: (
            lambda s: ((s >= 0.9) & (s <= 1.1)).to(v.mask.dtype).expand_as(v.mask))(
            torch.exp(((v.logp_old - v.sampler_logp) * v.mask).sum(-1, keepdim=True)))),
    "DPPO's weight min(r, C) not detached":
        ("verl-dppo-tv-token-mean", POLICY_TERMS, "dppo_tv", lambda v, adv, keep: (
            ORIGINAL["dppo_tv"](v, adv, keep) * (1 + v.logp * (v.ratio() < 1.3)))),
    "DPPO-TV's region read on the ratio (PPO's clip) instead of p - q":
        ("verl-dppo-tv-token-mean", POLICY_TERMS, "dppo_tv", lambda v, adv, keep: (
            v.ratio().clamp(max=1.3) * torch.where(adv > 0, v.ratio() - 1 <= 0.12, v.ratio() - 1 >= -0.1) * adv
            * keep)),
    "DPPO-KL's binary KL without its 1 - q outcome":
        ("verl-dppo-kl", POLICY_TERMS, "dppo_kl", lambda v, adv, keep: (
            lambda p, q: v.ratio().clamp(max=1.3) * adv * keep * torch.where(
                adv > 0, (q * (torch.log(q) - torch.log(p)) <= 0.03) | (p <= q),
                (q * (torch.log(q) - torch.log(p)) <= 0.02) | (p >= q)))(torch.exp(v.logp), torch.exp(v.logp_old))),
    "Kimi K2.5's square without its 2":
        ("prime-rl-default", TERMS, "log_ratio_sq", lambda v: -0.05 * v.log_ratio()),
    "TOPR split by the advantage's sign, not the reward":
        ("roll-topr", POLICY_TERMS, "topr", lambda v, adv, keep: torch.where(
            adv > 0, 0.7 * adv, 1.3 * v.ratio().clamp(0, 1) * adv) * keep),
    "TOPR's taper not detached":
        ("roll-topr", POLICY_TERMS, "topr", lambda v, adv, keep: ORIGINAL["topr"](v, adv, keep)
         + 1.3 * (v.scores <= 0)[:, None] * v.ratio() * (v.ratio() < 1) * adv * v.logp * keep),
    "Kimi k1.5's response square over the mean log-ratio, not the sum":
        ("kimi15-paper", POLICY_TERMS, "kimi15", lambda v, adv, keep: (
            adv - 0.4 * v.seq_mean(v.log_ratio())) * keep),
    "ROLL's std taken as the population std":
        ("roll-lite-ppo", ADVANTAGES, "reward_norm", lambda v: (lambda r: (
            (r.view(-1, G) - r.view(-1, G).mean(-1, keepdim=True)) / (r.std(unbiased=False) + 1e-6)).reshape(-1, 1)
            * v.full)(v.scores.double())),
    "token-sum's row factor |o_i| (seq-mean-token-sum's) instead of B |o_i|":
        ("verl-dppo-tv-token-sum", AGGREGATIONS, "token-sum", lambda v: v.mask.sum(-1, keepdim=True)),
    "prompt_mean as the batch's token mean":
        ("skyrl-prompt-mean", AGGREGATIONS, "group-token-mean", lambda v: v.mask.shape[0] * v.mask.sum(-1, keepdim=True)
         / v.mask.sum()),
    "the positive NLL over every token, not the positive rows'":
        ("nemo-vapo-nll", TERMS, "positive_nll", lambda v: 0.3 * (v.scores > 0)[:, None].to(v.mask.dtype)
         * v.mask),
}


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("slip", list(SLIPS))
def test_a_planted_slip_fails_the_peer(slip, off_policy, monkeypatch):
    case, registry, name, planted = SLIPS[slip]
    if any(w in slip for w in ("not detached", "ratio (PPO", "taper", "1 - q", "square")):
        if not off_policy:
            pytest.skip("on-policy r = 1: the slip has nothing to act on")
    make, reference = CASES[case]
    method = make()
    monkeypatch.setitem(registry, name, dataclasses.replace(registry[name], gc=planted))
    g_ours, g_ref = grads(batch(off_policy), reference, method)
    assert rel(g_ours, g_ref) > SLIP, slip



# ---------------------------------------------------------------- the oracle with a sampler that is not pi_old

ORACLE = [  # compositions whose parts read the sampler's ratio (tests/test_parts.py's batches have pi_sampler = pi_old)
    ("grpo", "vanilla", None, "seq-mean-token-mean", ("tis",), dict(sampler_correction_level="sequence",
                                                                    sampler_correction_cap=1.5,
                                                                    sampler_correction_floor=0.7)),
    ("grpo", "dppo_tv", None, "token-mean", ("tis", "mis"), dict(sampler_correction_cap=None, sampler_mask_level="geometric",
                                                                 sampler_mask_low=0.9, sampler_mask_high=1.1)),
    ("rloo", "cispo", None, "token-sum", ("mis",), dict(sampler_mask_level="sequence", sampler_mask_low=0.5,
                                                        sampler_mask_high=2.0)),
    ("grpo", "topr", "entropy_bonus", "group-token-mean", ("tis",), dict(entropy_coef=0.2)),
    ("reward_norm", "kimi15", "positive_nll", "token-mean", ("mis", "tis"), dict(kimi15_level="sequence",
                                                                                 sampler_mask_low=0.8)),
    ("lite_ppo", "dppo_kl", "log_ratio_sq", "seq-mean-token-sum", ("tis",), dict(log_ratio_sq_tau=0.1)),
]


def oracle_error(parts_, off_policy):
    advantage, policy, kl, aggregation, masks, settings = parts_
    method = compose(advantage, policy, aggregation=aggregation, masks=masks, name="oracle", **kl_or_term(kl), **settings)
    b = batch(off_policy)
    lp = b["logp"].clone().requires_grad_()
    cfg = get_preset("cpu").rl
    step = Step(SampledBatch(b["mask"], G, None, None, b["sampler"]), b["r"], lp, b["old"], None, None, cfg,
                method.hparams)
    (g_obj,) = torch.autograd.grad(method.objective(step), lp)
    (g_gc,) = torch.autograd.grad(-surrogate_loss(lp, method.coefficient(step), b["mask"]), lp)
    return rel(g_gc, g_obj)


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("parts_", ORACLE, ids=[" x ".join(filter(None, p[:3])) + f" {p[4]}" for p in ORACLE])
def test_objective_and_coefficient_agree_with_a_sampler_that_is_not_the_learner(parts_, off_policy):
    assert oracle_error(parts_, off_policy) < EXACT


def test_the_oracle_sees_the_sampler_ratio(monkeypatch):
    """An objective that reads rho_s the wrong way round fails the oracle, on- and off-policy."""
    objective = MASKS["tis"].objective
    monkeypatch.setitem(MASKS, "tis", dataclasses.replace(MASKS["tis"], objective=lambda v, adv: objective(
        dataclasses.replace(v, logp_old=v.sampler_logp, sampler_logp=v.logp_old), adv)))
    assert min(oracle_error(ORACLE[0], off) for off in (False, True)) > SLIP


# ---------------------------------------------------------------- two ranks: the batch's statistics are every rank's

RANKED = [("reward_norm", "vanilla", "positive_nll", "token-sum", ("tis",), dict(norm_mean_type="batch")),
          ("grpo", "dppo_tv", "entropy_bonus", "token-mean", ("mis",), dict(sampler_mask_level="geometric"))]


def ranked_coefficients(parts_, local_normalisers=False):
    """(the coefficient of one process, the two simulated ranks' coefficients side by side), off-policy."""
    from unified_rl import distributed
    advantage, policy, kl, aggregation, masks, settings = parts_
    method = compose(advantage, policy, aggregation=aggregation, masks=masks, name="ranked", **kl_or_term(kl), **settings)
    b, cfg = batch(True), get_preset("cpu").rl

    def coefficient(rows, across):
        cut = {k: v[rows] for k, v in b.items()}
        step = Step(SampledBatch(cut["mask"], G, None, None, cut["sampler"]), cut["r"], cut["logp"], cut["old"], None,
                    None, cfg, method.hparams, across=across)
        return method.coefficient(step)
    half = len(LENGTHS) // 2 // G * G  # whole groups on each rank
    shares = [slice(0, half), slice(half, None)]
    ranks = distributed.simulate(lambda: coefficient(shares[distributed.current().rank], distributed.across()),
                                 local_normalisers=local_normalisers)
    return coefficient(slice(None), None), torch.cat(ranks)


@pytest.mark.parametrize("parts_", RANKED, ids=[p[0] + " x " + p[2] for p in RANKED])
def test_two_ranks_give_one_process_coefficient(parts_):
    one, ranks = ranked_coefficients(parts_)
    assert rel(ranks, one) < EXACT
    one, local = ranked_coefficients(parts_, local_normalisers=True)  # each rank's own batch statistics
    assert rel(local, one) > SLIP
