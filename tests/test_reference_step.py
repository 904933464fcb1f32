"""One whole update of every method against a plain reference written from the papers.

The reference below shares nothing with the package's wiring, advantages, data sources,
coefficients, objectives or KL code: it computes log-probs from `model(...).logits` with a
log-softmax, GAE with a Python loop, group normalisation by hand, DPO's sigmoid by hand, and
differentiates each paper's loss with autograd. The package's side is its real training loop
(`train` -> `loop.fit`) on one fixed batch drawn once from the method's own data source; the
gradient the loop computes, read just before it is clipped, must equal the reference's, per
parameter tensor, in float64. For every method the first update (on-policy, pi_old = pi_theta) and
the second update on the same batch (epochs 2: pi_old != pi_theta) are compared; for PPO also the
critic's gradient and its regression targets. The negative controls at the end plant wiring bugs
into the package (swapped Step fields, gamma and lambda swapped in GAE, a critic target without V,
a KL reward of the wrong sign) and check that the comparison then fails far above round-off.
"""

import contextlib
import copy
import dataclasses
import math
import sys
from itertools import combinations
from types import SimpleNamespace

import pytest
import torch

from unified_rl import wiring
from unified_rl.data import PreferencePairs
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS, ROWS
from unified_rl.parts import KL_TERMS
from unified_rl.rewards import process_rewards
from unified_rl.sampling import rollout_from_texts
from unified_rl.trainer import train
from _reference_peers import PEER_OVERRIDES, PEER_REFERENCE, PEER_SCORES, clipped, normalised

TOL = 1e-10  # relative to the largest gradient entry: float64 round-off is ~1e-15
GAMMA, LAM, BETA, LR = 0.9, 0.7, 0.1, 3e-3  # gamma != 1, lam != 0.95 and gamma != lam: a swap shows


# ---------------------------------------------------------------- the reference, from the papers

def logp_of(model, batch):
    """(B, T) log pi(token t+1 | tokens <= t) from the logits, 0 off the response."""
    ids, att = batch.input_ids, batch.attention_mask
    pos = (att.long().cumsum(-1) - 1).clamp(min=0)  # positions skip the left padding
    logits = model(input_ids=ids, attention_mask=att, position_ids=pos).logits[:, :-1]  # (B, T, V)
    logp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return logp * batch.mask


def seq_mean(x, m):
    return (x * m).sum(-1) / m.sum(-1)  # (B,) 1/|o| sum_t


def sigmoid(z):
    return 1 / (1 + torch.exp(-z))


def log_sigmoid(z):
    return -torch.log(1 + torch.exp(-z))


def k3(lp, ref):
    x = ref - lp  # log pi_ref / pi
    return torch.exp(x) - x - 1


def group_hat(r, G):
    """GRPO's outcome advantage: the rewards normalised within each group of G rows."""
    out = []
    for g in range(len(r) // G):
        out += normalised(r[g * G:(g + 1) * G].tolist())
    return torch.tensor(out, dtype=torch.float64)


def group_centred(r, G):
    return torch.tensor([v - sum(r[g * G:(g + 1) * G].tolist()) / G
                         for g in range(len(r) // G) for v in r[g * G:(g + 1) * G].tolist()], dtype=torch.float64)


def gae(rewards, values, m, gamma, lam):
    """Schulman et al. 2015: delta_t = r_t + gamma V_{t+1} - V_t, A_t = delta_t + gamma lam A_{t+1}."""
    adv = torch.zeros_like(rewards)
    for i in range(m.shape[0]):
        next_v, next_a = 0.0, 0.0  # V = 0 after the last response token
        for t in reversed([t for t in range(m.shape[1]) if m[i, t] > 0]):
            delta = rewards[i, t].item() + gamma * next_v - values[i, t].item()
            next_a = delta + gamma * lam * next_a
            adv[i, t] = next_a
            next_v = values[i, t].item()
    return adv


def per_token(x, m):
    return x[:, None] * m


def ref_sft(c):  # DeepSeekMath eq 6
    return -seq_mean(c.lp, c.m).mean()


def ref_rft(c):  # eq 8 / eq 11: only the correct samples, the batch mean over all of them
    return -(c.r * seq_mean(c.lp, c.m)).mean()


def halves(x):
    n = len(x) // 2
    return x[:n], x[n:]


def ref_dpo(c):  # eq 12: log sigmoid(beta x+ - beta x-), x the length-normalised log-ratio
    if (c.hp.dpo_loss, c.hp.dpo_norm) not in (("sigmoid", "mean"), ("sigmoid_norm", "mean"), ("sigmoid_norm", "sum")):
        return ref_dpo_loss(c)  # TRL's other loss types (below)
    x = seq_mean(c.lp - c.ref, c.m)
    xc, xr = halves(x)
    b = c.cfg.dpo_beta
    return -log_sigmoid(b * xc - b * xr).mean()


def ref_ipo(c):  # IPO eq 17 on the same length-normalised margin
    xc, xr = halves(seq_mean(c.lp - c.ref, c.m))
    return ((xc - xr - 1 / (2 * c.hp.ipo_tau)) ** 2).mean()


def ref_simpo(c):  # SimPO eq 6: no reference, mean log-prob, target margin gamma
    lc, lr = halves(seq_mean(c.lp, c.m))
    b, g = c.hp.simpo_beta, c.hp.simpo_gamma
    return -log_sigmoid(b * lc - b * lr - g).mean()


def ref_kto(c):  # KTO 4.1: B labelled rows, then B mismatched rows that only give z0
    ratio = (c.lp - c.ref) * c.m
    x, x_kl = halves(ratio.sum(-1) if c.hp.kto_norm == "sum" else seq_mean(c.lp - c.ref, c.m))
    z0 = torch.clamp(x_kl.detach().mean(), min=0.0)
    if c.hp.kto_loss == "apo_zero_unpaired":  # APO-zero, unpaired: no reference point
        z0 = 0.0
    desirable = halves(c.r)[0] > 0.5
    hp = c.hp
    v = torch.where(desirable, hp.kto_lam_d * sigmoid(hp.kto_beta * (x - z0)),
                    hp.kto_lam_u * sigmoid(hp.kto_beta * (z0 - x)))
    return -v.mean()


def ref_orpo(c):  # ORPO eq 6-7: SFT on the chosen answer + lambda * odds-ratio loss
    lc, lr = halves(seq_mean(c.lp, c.m))
    log_odds = lambda l: l - torch.log(1 - torch.exp(l))
    return (-lc - c.hp.orpo_lambda * log_sigmoid(log_odds(lc) - log_odds(lr))).mean()


def ref_ppo(c):
    """Eq 2's per-token reward r_t = R [t last] - beta log(pi_old / pi_ref), GAE, eq 3's clip; the critic's MSE."""
    m = c.m
    rewards = -c.cfg.beta * (c.old - c.ref) * m
    for i in range(len(m)):
        last = max(t for t in range(m.shape[1]) if m[i, t] > 0)
        rewards[i, last] += c.r[i]
    adv = gae(rewards, c.v_old * m, m, c.cfg.gamma, c.cfg.lam)
    ratio = torch.exp(c.lp - c.old)
    policy = -seq_mean(clipped(ratio, adv, c.cfg.clip_eps, c.cfg.clip_eps), m).mean()
    targets = (adv + c.v_old) * m  # the returns
    critic = 0.5 * (((c.v - targets) ** 2) * m).sum() / m.sum()
    return policy, critic, targets


def grpo_with(c, adv):  # eq 19 with eq 3's clip and the k3 penalty
    ratio = torch.exp(c.lp - c.old)
    eps = c.cfg.clip_eps
    return -seq_mean(clipped(ratio, adv, eps, eps) - c.cfg.beta * k3(c.lp, c.ref), c.m).mean()


def ref_grpo(c):
    return grpo_with(c, per_token(group_hat(c.r, c.G), c.m))


def ref_grpo_process(c):  # §4.1.3: step rewards normalised over the group, summed from t on
    step_r, step_m = process_rewards(c.tok, c.batch)  # the reward: an input, like the scores
    B, T = c.m.shape
    norm = torch.zeros(B, T, dtype=torch.float64)
    for g in range(B // c.G):
        where = [(i, t) for i in range(g * c.G, (g + 1) * c.G) for t in range(T) if step_m[i, t] > 0]
        for (i, t), v in zip(where, normalised([step_r[i, t].item() for i, t in where])):
            norm[i, t] = v
    adv = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        for t in range(T):
            adv[i, t] = norm[i, t:].sum()
    return grpo_with(c, adv * c.m)


def ref_dr_grpo(c):  # Figure 1: no std, a token sum over a constant L
    adv = per_token(group_centred(c.r, c.G), c.m)
    ratio = torch.exp(c.lp - c.old)
    eps = c.cfg.clip_eps
    terms = (clipped(ratio, adv, eps, eps) - c.cfg.beta * k3(c.lp, c.ref)) * c.m
    return -terms.sum() / (len(c.m) * c.hp.max_len)


def group_token_mean(terms, m, G):
    """Mean over groups of sum_{i in g} sum_t f / sum_{i in g} |o_i|."""
    n = len(m) // G
    return sum((terms[g * G:(g + 1) * G] * m[g * G:(g + 1) * G]).sum() / m[g * G:(g + 1) * G].sum()
               for g in range(n)) / n


def ref_dapo(c):  # §3: clip-higher, token-mean, no KL
    adv = per_token(group_hat(c.r, c.G), c.m)
    ratio = torch.exp(c.lp - c.old)
    return -group_token_mean(clipped(ratio, adv, c.cfg.clip_eps, c.hp.clip_eps_high), c.m, c.G)


def ref_gspo(c):  # one ratio per sequence, (pi / pi_old)^(1/|o|), clipped at the sequence level
    s = torch.exp(seq_mean(c.lp - c.old, c.m))
    return -clipped(s, group_hat(c.r, c.G), c.hp.gspo_clip_eps, c.hp.gspo_clip_eps_high).mean()


def ref_cispo(c):  # §3.1: a stop-gradient weight min(r, 1 + eps_high) on every token
    weight = torch.clamp(torch.exp(c.lp - c.old), max=1 + c.hp.cispo_clip_eps_high).detach()
    adv = per_token(group_hat(c.r, c.G), c.m)
    return -group_token_mean(weight * adv * c.lp, c.m, c.G)


def ref_rloo(c):  # leave-one-out baseline, the token sum log pi(o|q), PPO's clip when reused
    G, r = c.G, c.r.tolist()
    base = [(sum(r[i // G * G:(i // G + 1) * G]) - r[i]) / (G - 1) for i in range(len(r))]
    adv = per_token(torch.tensor([a - b for a, b in zip(r, base)], dtype=torch.float64), c.m)
    ratio = torch.exp(c.lp - c.old)
    return -(clipped(ratio, adv, c.cfg.clip_eps, c.cfg.clip_eps) * c.m).sum() / len(c.m)


def ref_reinforce_pp(c):  # returns with the k1 KL in them, normalised over every token of the batch
    G, m = c.G, c.m
    r = group_centred(c.r, G) if G > 1 else c.r
    kl = (c.old - c.ref) * m  # log pi_sampler / pi_ref
    B, T = m.shape
    ret = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        for t in range(T):
            if m[i, t] > 0:
                ret[i, t] = r[i] - c.cfg.beta * kl[i, t:].sum()
    on = [(i, t) for i in range(B) for t in range(T) if m[i, t] > 0]
    for (i, t), v in zip(on, normalised([ret[i, t].item() for i, t in on])):
        ret[i, t] = v
    ratio = torch.exp(c.lp - c.old)
    return -seq_mean(clipped(ratio, ret, c.cfg.clip_eps, c.cfg.clip_eps), m).mean()


def ref_remax(c):  # rows (sampled, greedy): REINFORCE on the sampled row, the greedy reward as baseline
    adv = per_token(c.r[0::2] - c.r[1::2], c.m[0::2])
    ratio = torch.exp(c.lp[0::2] - c.old[0::2])
    eps = c.cfg.clip_eps
    return -(clipped(ratio, adv, eps, eps) * c.m[0::2]).sum() / len(adv)


def ref_maxrl(c):  # MaxRL (arXiv 2602.02710): (r - p) / p, p the group's success rate; PPO's clip per response
    G, r = c.G, c.r.tolist()
    adv = []
    for g in range(len(r) // G):
        group = r[g * G:(g + 1) * G]
        p = sum(group) / G
        adv += [0.0 if max(group) == min(group) else (v - p) / (p + 1e-6) for v in group]
    ratio = torch.exp(c.lp - c.old)
    eps = c.cfg.clip_eps
    return -seq_mean(clipped(ratio, per_token(torch.tensor(adv, dtype=torch.float64), c.m), eps, eps), c.m).mean()


# ---- TRL 1.16's DPO loss types, each from its paper's loss (arXiv numbers in
# parts/pair_losses/), on summed (the papers') or per-token mean (eq 12's) log-ratios

def ref_dpo_loss(c):
    hp, b = c.hp, c.cfg.dpo_beta
    mean = hp.dpo_norm == "mean"

    def score(x):  # (B,) per response
        return seq_mean(x, c.m) if mean else (x * c.m).sum(-1)
    sc, sr = halves(score(c.lp - c.ref))
    u, eps, e = b * (sc - sr), hp.dpo_label_smoothing, math.e
    kind = hp.dpo_loss
    if kind == "sft":
        mc = halves(c.m)[0]
        lc = halves(c.lp)[0]
        return -(lc * mc).sum() / mc.sum() if not mean else -seq_mean(lc, mc).mean()
    if kind == "aot":  # sort the policy's and the reference's margins apart, pair them by rank
        pc, pr = halves(score(c.lp))
        rc, rr = halves(score(c.ref))
        d = torch.sort(pc - pr).values - torch.sort(rc - rr).values
        return (-(1 - eps) * log_sigmoid(b * d) - eps * log_sigmoid(-b * d)).mean()
    if kind == "aot_unpaired":
        d = torch.sort(sc).values - torch.sort(sr).values
        return (-(1 - eps) * log_sigmoid(b * d) - eps * log_sigmoid(-b * d)).mean()
    per_pair = {
        "sigmoid": lambda: -log_sigmoid(u),
        "hinge": lambda: torch.clamp(1 - u, min=0),
        "ipo": lambda: (sc - sr - 1 / (2 * b)) ** 2,
        "exo_pair": lambda: sigmoid(u) * (log_sigmoid(u) - math.log(1 - eps))
                            + sigmoid(-u) * (log_sigmoid(-u) - math.log(eps)),
        "nca_pair": lambda: -log_sigmoid(b * sc) - log_sigmoid(-b * sc) / 2 - log_sigmoid(-b * sr) / 2,
        "robust": lambda: (-(1 - eps) * log_sigmoid(u) + eps * log_sigmoid(-u)) / (1 - 2 * eps),
        "bco_pair": lambda: -log_sigmoid(b * sc) - log_sigmoid(-b * sr),
        "sppo_hard": lambda: (sc - 0.5 / b) ** 2 + (sr + 0.5 / b) ** 2,
        "apo_zero": lambda: 1 - sigmoid(b * sc) + sigmoid(b * sr),
        "apo_down": lambda: sigmoid(b * sc) + 1 - sigmoid(u),
        "discopop": lambda: -log_sigmoid(u) * (1 - sigmoid(u / hp.dpo_discopop_tau))
                            + e ** (-u) * sigmoid(u / hp.dpo_discopop_tau),
    }
    return per_pair[kind]().mean()


REFERENCE = {"sft": ref_sft, "rft": ref_rft, "online-rft": ref_rft, "dpo": ref_dpo, "ppo": ref_ppo,
             "grpo": ref_grpo, "grpo-process": ref_grpo_process, "ipo": ref_ipo, "simpo": ref_simpo,
             "kto": ref_kto, "orpo": ref_orpo, "dr-grpo": ref_dr_grpo, "dapo": ref_dapo, "gspo": ref_gspo,
             "cispo": ref_cispo, "rloo": ref_rloo, "reinforce++": ref_reinforce_pp, "remax": ref_remax,
             "maxrl": ref_maxrl}
# -- the methods TRL and verl ship, referenced in tests/_reference_peers.py
REFERENCE.update(PEER_REFERENCE)


# ---------------------------------------------------------------- one batch, one update of the package

class FixedSource:
    """A data source that hands the loop one given batch."""

    def __init__(self, batch):
        self.batch = batch

    def next_batch(self):
        return self.batch

    def get_state(self):
        return {}

    def set_state(self, state):
        pass


def lab_of(seed=0):
    """The tiny preset's GPT-2 in float64, moved from its near-uniform start; pi_ref moved again."""
    torch.manual_seed(seed)
    lab = make_lab("tiny", seed=seed)
    policy = lab.policy.double()
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    ref = copy.deepcopy(policy).eval().requires_grad_(False)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return dataclasses.replace(lab, policy=policy, ref=ref)


def scores_for(B, G, name, gen):
    """Fixed rewards with both values in every group (an untrained model answers nothing right)."""
    r = torch.randint(0, 2, (B,), generator=gen).double()
    r[0::G], r[1::G] = 1.0, 0.0
    if name == "dapo":  # its overlong shaping gives fractional rewards
        r[2::G] -= 0.5
    if name in PEER_SCORES:  # GDPO's reward columns
        return PEER_SCORES[name](r, gen)
    return r


def batch_for(name, lab, gen):
    """The batch, drawn once from the method's own data source (pairs from coin-flip labels)."""
    m = METHODS[name]
    if name == "grpo-process":  # process rewards need steps that are partly right: given texts
        probs = lab.rl_problems[:2]
        sols = [p.solution for p in probs]
        texts = [sols[0], sols[0][:-2] + "9", "1+1=3;" + sols[0], sols[0][:3],
                 sols[1], "9" + sols[1][1:], sols[1], sols[1][:4] + "0"]
        batch = rollout_from_texts(lab.tokenizer, probs, texts, group_size=4)
    else:
        if m.data_source is PreferencePairs:
            coin = lambda r: torch.randint(0, 2, (len(r),), generator=gen).float()
            source = PreferencePairs(lab, coin)
        else:
            source = m.data_source(lab)
        torch.manual_seed(1)
        batch = source.next_batch()
    with torch.no_grad():  # the sampler's own log-probs, recomputed in float64
        sampler_logp = logp_of(lab.policy, dataclasses.replace(batch, mask=batch.mask.double()))
    return dataclasses.replace(batch, mask=batch.mask.double(), logp=sampler_logp)


def overrides_for(name):
    if METHODS[name].section == "sft":
        return {"lr": LR}
    # GSPO's 3e-4 clips every sequence of the second update (each moved 3-40 %): a range that binds on some
    own = {"gspo": {"gspo_clip_eps": 0.1, "gspo_clip_eps_high": 0.15}, **PEER_OVERRIDES}
    return {"lr": LR, "epochs": 2, "gamma": GAMMA, "lam": LAM, "beta": BETA, **own.get(name, {})}


def patch_everywhere(mp, name, new):
    """Replace `name` in wiring and in every module of the package that imported it."""
    old = getattr(wiring, name)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("unified_rl") and getattr(mod, name, None) is old:
            mp.setattr(mod, name, new)


@dataclasses.dataclass
class Update:
    policy: dict  # the parameters the gradient was taken at
    grad: dict  # the policy's gradient, before clipping
    critic: dict = None
    critic_grad: dict = None
    targets: torch.Tensor = None


def package_updates(name, lab, batch, scores, monkeypatch, critic_seed=3, overrides=None):
    """Run the package's own loop for one step on `batch`; the state and gradient of each update.

    overrides: the run's settings (default: overrides_for(name))."""
    m = METHODS[name]
    critics, updates = [], []

    def critic_factory(lab_):
        critic = m.extra_loss(lab_)
        g = torch.Generator().manual_seed(critic_seed)
        with torch.no_grad():  # a critic with a zero head predicts V = 0: give it values
            for p in critic.model.head.parameters():
                p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        loss = critic.loss
        critic.loss = lambda step: (updates[-1].__setattr__("targets", step.targets.detach().clone()),
                                    loss(step))[1]
        critics.append(critic)
        return critic

    clip = torch.nn.utils.clip_grad_norm_

    def spy(parameters, max_norm, *args, **kwargs):
        u = updates[-1]
        u.grad = {k: p.grad.detach().clone() for k, p in lab.policy.named_parameters()}
        if critics:
            u.critic_grad = {k: p.grad.detach().clone() for k, p in critics[0].model.named_parameters()}
        return clip(parameters, max_norm, *args, **kwargs)

    def snapshot():
        updates.append(Update({k: v.detach().clone() for k, v in lab.policy.state_dict().items()}, None))
        if critics:
            updates[-1].critic = {k: v.detach().clone() for k, v in critics[0].model.state_dict().items()}

    logp = wiring.policy_logp

    def logp_spy(model, b, *args, **kwargs):  # the loop computes the update's log-probs: the parameters
        if model is lab.policy:                 # it is taken at
            snapshot()
        return logp(model, b, *args, **kwargs)

    method = dataclasses.replace(m, data_source=lambda lab_: FixedSource(batch),
                                 reward=(lambda r: scores) if m.reward is not None else None,
                                 extra_loss=critic_factory if m.extra_loss else None)
    with monkeypatch.context() as mp:
        mp.setattr(torch.nn.utils, "clip_grad_norm_", spy)
        patch_everywhere(mp, "policy_logp", logp_spy)
        train(method, lab=lab, steps=1, progress=False, eval_every=0,
              **(overrides_for(name) if overrides is None else overrides))
    return updates, (critics[0] if critics else None)


def reference_update(name, lab, batch, scores, updates, critic, k, settings=None):
    """The reference's gradient of update k (0: on-policy, 1: the batch reused); settings: extra overrides."""
    m = METHODS[name]
    preset, hp = wiring.configure(m, lab.preset, {**overrides_for(name), **(settings or {})})
    model = copy.deepcopy(lab.policy)
    model.load_state_dict(updates[k].policy)
    first = copy.deepcopy(lab.policy)
    first.load_state_dict(updates[0].policy)
    with torch.no_grad():
        old = logp_of(first, batch)
        ref = logp_of(lab.ref, batch) if m.uses_ref else None
    c = SimpleNamespace(lp=logp_of(model, batch), old=old, ref=ref, m=batch.mask, r=scores, cfg=preset.rl,
                        hp=hp, G=batch.group_size, batch=batch, tok=lab.tokenizer)
    out = {}
    if critic is not None:
        value_model = copy.deepcopy(critic.model)
        with torch.no_grad():
            value_model.load_state_dict(updates[0].critic)
            c.v_old = value_model(batch.input_ids, batch.attention_mask)[:, :-1]
        value_model.load_state_dict(updates[k].critic)
        c.v = value_model(batch.input_ids, batch.attention_mask)[:, :-1]
        loss, critic_loss, out["targets"] = REFERENCE[name](c)
        names, params = zip(*value_model.named_parameters())
        out["critic_grad"] = dict(zip(names, torch.autograd.grad(critic_loss, params, allow_unused=True)))
    else:
        loss = REFERENCE[name](c)
    names, params = zip(*model.named_parameters())
    out["grad"] = dict(zip(names, torch.autograd.grad(loss, params, allow_unused=True)))
    return out


def rel_diff(got, want):
    """max |got - want| over every tensor, relative to the largest |want| entry."""
    scale = max(w.abs().max().item() for w in want.values() if w is not None)
    assert scale > 0
    assert set(got) == set(want)
    d = max((g - (w if w is not None else torch.zeros_like(g))).abs().max().item() for g, w in
            ((got[k], want[k]) for k in want))
    return d / scale


def compare(name, monkeypatch, seed=0, settings=None):
    """{what: relative difference} of the package's updates against the reference (settings: the
    method's options, e.g. {"dpo_loss": "hinge"}, on top of overrides_for(name))."""
    gen = torch.Generator().manual_seed(seed)
    lab = lab_of(seed)
    batch = batch_for(name, lab, gen)
    scores = scores_for(len(batch), batch.group_size, name, gen)
    updates, critic = package_updates(name, lab, batch, scores, monkeypatch,
                                      overrides={**overrides_for(name), **(settings or {})})
    out = {}
    for k, u in enumerate(updates):
        want = reference_update(name, lab, batch, scores, updates, critic, k, settings)
        out[f"grad{k}"] = rel_diff(u.grad, want["grad"])
        if critic is not None:
            out[f"critic_grad{k}"] = rel_diff(u.critic_grad, want["critic_grad"])
            t = want["targets"]
            out[f"targets{k}"] = (u.targets - t).abs().max().item() / t.abs().max().item()
    return out, len(updates)


# ---------------------------------------------------------------- the tests

def test_every_registered_method_has_a_reference():
    assert set(REFERENCE) == set(METHODS), "a method without a reference step: add one to REFERENCE"


@pytest.mark.parametrize("name", list(METHODS))
def test_one_update_equals_the_reference(name, monkeypatch):
    assert name in REFERENCE, f"{name} has no reference step"
    diffs, n = compare(name, monkeypatch)
    assert n == (1 if METHODS[name].section == "sft" else 2)  # on-policy, then the batch reused
    assert max(diffs.values()) < TOL, diffs


def test_the_reused_update_is_off_policy(monkeypatch):
    """The second update's pi_old differs from pi_theta: the clip binds on some tokens."""
    lab = lab_of()
    gen = torch.Generator().manual_seed(0)
    batch = batch_for("grpo", lab, gen)
    updates, _ = package_updates("grpo", lab, batch, scores_for(len(batch), batch.group_size, "grpo", gen),
                                 monkeypatch)
    models = []
    for u in updates:
        model = copy.deepcopy(lab.policy)
        model.load_state_dict(u.policy)
        with torch.no_grad():
            models.append(logp_of(model, batch))
    ratio = torch.exp(models[1] - models[0])[batch.mask > 0]
    assert ((ratio - 1).abs() > 0.2).any() and ((ratio - 1).abs() < 0.2).any()


# ---------------------------------------------------------------- negative controls

def swapping(a, b):
    """wiring.step_of with Step fields a and b exchanged, as a slip where the Step is built would."""
    step_of = wiring.step_of

    def swapped(*args, **kwargs):
        step = step_of(*args, **kwargs)
        va, vb = getattr(step, a), getattr(step, b)
        return dataclasses.replace(step, **{a: vb, b: va})
    return swapped


PER_TOKEN = ("logp", "logp_old", "logp_ref", "adv", "targets")
# a method whose gradient reads both fields (targets: PPO's critic; logp_old: only off-policy)
SWAP_METHOD = {("logp", "logp_old"): "grpo", ("logp", "logp_ref"): "grpo", ("logp_old", "logp_ref"): "grpo"}


def caught(name, monkeypatch):
    """The largest relative difference with the bug in place; inf if the package crashes on it."""
    try:
        diffs, _ = compare(name, monkeypatch)
    except (TypeError, ValueError, AttributeError, RuntimeError, IndexError):
        return float("inf")
    return max(diffs.values())


@pytest.mark.parametrize("pair", list(combinations(PER_TOKEN, 2)) + [("scores", "adv"), ("scores", "logp_ref")],
                         ids="-".join)
def test_a_swap_of_two_step_fields_is_caught(pair, monkeypatch):
    name = SWAP_METHOD.get(pair, "ppo" if "scores" not in pair else "grpo-process")
    if pair == ("scores", "logp_ref"):
        name = "dpo"
    with monkeypatch.context() as mp:
        patch_everywhere(mp, "step_of", swapping(*pair))
        d = caught(name, mp)
    assert d > 1e-6, (pair, name, d)


def test_logp_old_swapped_with_logp_ref_is_caught_for_every_method_that_reads_them(monkeypatch):
    """The bug the coefficient oracle misses: it reads the same wrong Step as the objective."""
    names = [n for n, m in METHODS.items() if m.uses_ref and n not in ("rft", "online-rft", "sft")]
    with monkeypatch.context() as mp:
        patch_everywhere(mp, "step_of", swapping("logp_old", "logp_ref"))
        diffs = {n: caught(n, mp) for n in names}
    assert min(diffs.values()) > 1e-6, diffs


@contextlib.contextmanager
def planted(registry, name, **fields):
    """Part `name` of a parts registry with some fields replaced (a planted bug), restored on exit."""
    real = registry[name]
    dict.__setitem__(registry, name, dataclasses.replace(real, **fields))
    try:
        yield
    finally:
        dict.__setitem__(registry, name, real)


def test_gamma_and_lambda_swapped_in_gae_is_caught(monkeypatch):
    """The slip planted where PPO's advantage computes GAE (methods/hooks.py's gae_hook)."""
    from unified_rl.methods import hooks
    fn = METHODS["ppo"].advantage
    assert fn.__module__ == hooks.__name__ and "gae" in fn.__code__.co_names, \
        "PPO's advantage no longer calls advantages.gae in methods/hooks.py: update the control"
    gae_ = hooks.advantages.gae
    with monkeypatch.context() as mp:
        mp.setattr(hooks.advantages, "gae", lambda r, v, m, gamma, lam: gae_(r, v, m, lam, gamma))
        d = caught("ppo", mp)
    assert d > 1e-6, d


def test_a_critic_target_without_v_is_caught(monkeypatch):
    critic = METHODS["ppo"].extra_loss
    with monkeypatch.context() as mp:
        mp.setattr(critic, "targets", lambda self, lab, batch, scores, logp_ref, adv: adv * batch.mask)
        d = caught("ppo", mp)
    assert d > 1e-6, d


@pytest.mark.parametrize("name", ["ppo", "reinforce++"])
def test_a_kl_reward_of_the_wrong_sign_is_caught(name, monkeypatch):
    """k1's reward planted with its sign flipped on its page (parts/kl_terms.py): PPO's GAE hook reads it when
    its Method is built (rebuilt here from its row), REINFORCE++'s composition at every step."""
    (row,) = [r for r in ROWS if r.name == name]
    assert (row.kl, row.kl_in) == ("k1", "reward"), f"{name}'s KL is no longer k1 in the reward: update the control"
    k1 = KL_TERMS["k1"]
    flipped = {**k1.extra, "reward": lambda v: -k1.extra["reward"](v)}
    with monkeypatch.context() as mp, planted(KL_TERMS, "k1", extra=flipped):
        mp.setitem(METHODS, name, row.method())
        d = caught(name, mp)
    assert d > 1e-6, d


def test_a_pi_old_refreshed_at_every_update_is_caught(monkeypatch):
    """pi_old must be the policy at the batch's first update, not the one of the current update."""
    step_of = wiring.step_of
    with monkeypatch.context() as mp:
        patch_everywhere(mp, "step_of", lambda prep, logp, logp_old, cfg, hp=None:
                         step_of(prep, logp, logp.detach(), cfg, hp))
        d = caught("grpo", mp)
    assert d > 1e-6, d


# ---- every option of DPO (TRL's loss types, summed or mean log-ratios) and of
# KTO, one update each against the reference above; and a slip between the two conventions is caught

def _preference_options():
    from unified_rl.coefficients.dpo_losses import LOSS_TYPES, NORMS
    dpo = [{"dpo_loss": t, "dpo_norm": n, "dpo_label_smoothing": 0.1} for t in LOSS_TYPES for n in NORMS
           if (t, n) not in (("sigmoid", "mean"), ("sigmoid_norm", "sum"))]  # the default is tested above
    kto = [{"kto_loss": t, "kto_norm": n} for t in ("kto", "apo_zero_unpaired") for n in ("mean", "sum")
           if (t, n) != ("kto", "mean")]
    return dpo + kto


@pytest.mark.parametrize("settings", _preference_options(), ids=lambda s: "-".join(str(v) for v in s.values()))
def test_every_preference_option_equals_the_reference(settings, monkeypatch):
    name = "dpo" if "dpo_loss" in settings else "kto"
    diffs, n = compare(name, monkeypatch, settings=settings)
    assert n == 2 and max(diffs.values()) < TOL, diffs


def test_a_coefficient_on_the_other_norm_is_caught(monkeypatch):
    """The negative control: DPO's hinge and KTO computed on mean log-ratios when the run asks for sums (the scores'
    coefficient side reads the mean norm; their objective side is left as it is)."""
    import dataclasses as dc

    from unified_rl.parts import PAIR_SCORES
    settings = {"dpo": {"dpo_loss": "hinge", "dpo_norm": "sum"}, "kto": {"kto_norm": "sum"}}
    real = PAIR_SCORES["log_ratio"]
    with monkeypatch.context() as mp:
        mp.setitem(PAIR_SCORES, "log_ratio", dc.replace(real, gc=lambda v: real.gc(dc.replace(v, norm="mean"))))
        d = {n: max(compare(n, mp, settings=s)[0].values()) for n, s in settings.items()}
    assert min(d.values()) > 1e-6, d