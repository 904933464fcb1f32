"""The course's central check, on a real model: for each method, the parameter gradient of its own
objective (eq 6-19) equals the parameter gradient of the eq-5 surrogate with its GC (eq 7-21).

Two independent computations: `objectives` never mentions a coefficient, `coefficients` never an
objective. Both run through the same transformer in float64 on a batch sampled from it, so any
difference above round-off means a wrong coefficient. Used by the tests and shown in every notebook.
"""

import copy

import torch

from . import coefficients as C, objectives as O
from .advantages import gae
from .paradigm import surrogate_loss
from .rewards import rule_reward
from .sampling import sample, token_logp


def _grad(model, loss):
    model.zero_grad(set_to_none=True)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def _pieces(batch, logp_ref, seed):
    """Rewards, advantages and an off-policy logp_old for the batch, drawn reproducibly."""
    g = torch.Generator().manual_seed(seed)
    m = batch.mask.double()
    rewards = rule_reward(batch.problems, batch.texts).double()
    if rewards.min() == rewards.max():  # keep the check informative: not every group all-equal
        rewards = torch.randint(0, 2, rewards.shape, generator=g).double()
    values = torch.randn(m.shape, generator=g, dtype=torch.float64)
    last = m.cumsum(-1).argmax(-1)
    token_rewards = torch.zeros_like(m)
    token_rewards[torch.arange(len(m)), last] = rewards
    adv, _ = gae(token_rewards, values * m, m, 1.0, 0.95)
    jitter = 0.3 * torch.randn(m.shape, generator=g, dtype=torch.float64)
    return m, rewards, adv, jitter


def _cases(m, rewards, adv, jitter, logp_ref, G, beta=0.04, clip_eps=0.2):
    """method -> (objective(logp), coefficient(logp)): the two sides of the check."""
    B = len(m) // 2
    def dpo_J(lp):
        return O.dpo(lp[:B], logp_ref[:B], m[:B], lp[B:2 * B], logp_ref[B:2 * B], m[B:2 * B], 0.5)
    def dpo_C(lp):
        cc, cr = C.dpo(lp[:B], logp_ref[:B], m[:B], lp[B:2 * B], logp_ref[B:2 * B], m[B:2 * B], 0.5)
        return torch.cat([2 * cc, 2 * cr])  # the surrogate averages 2B rows, eq 12 B pairs
    return {
        "sft": (lambda lp: O.sft(lp, m), lambda lp: C.sft(m)),
        "rft": (lambda lp: O.rft(lp, rewards, m), lambda lp: C.rft(rewards, m)),
        "online-rft": (lambda lp: O.online_rft(lp, rewards, m), lambda lp: C.online_rft(rewards, m)),
        "dpo": (dpo_J, dpo_C),
        "ppo": (lambda lp: O.ppo(lp, lp.detach(), adv, m, clip_eps), lambda lp: C.ppo(adv, m)),
        "ppo-clipped": (lambda lp: O.ppo(lp, lp.detach() + jitter, adv, m, clip_eps),
                        lambda lp: C.ppo(adv, m, logp=lp, logp_old=lp.detach() + jitter, clip_eps=clip_eps)),
        "grpo": (lambda lp: O.grpo(lp, lp.detach(), logp_ref, rewards, G, m, beta, clip_eps),
                 lambda lp: C.grpo(rewards, G, lp, logp_ref, m, beta)),
        "grpo-clipped": (lambda lp: O.grpo(lp, lp.detach() + jitter, logp_ref, rewards, G, m, beta, clip_eps),
                         lambda lp: C.grpo(rewards, G, lp, logp_ref, m, beta, logp_old=lp.detach() + jitter,
                                           clip_eps=clip_eps)),
    }


METHODS = ("sft", "rft", "online-rft", "dpo", "ppo", "ppo-clipped", "grpo", "grpo-clipped")


def model_oracle(policy, tokenizer, problems, methods=METHODS, group_size=4, seed=0):
    """{method: max |grad_theta J - grad_theta surrogate|} on a batch sampled from `policy` (float64)."""
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {METHODS}")
    torch.manual_seed(seed)
    model = copy.deepcopy(policy).double().cpu()
    ref = copy.deepcopy(model).requires_grad_(False)
    with torch.no_grad():  # perturb the reference so the KL terms are not trivially zero
        for p in ref.parameters():
            p.add_(0.01 * torch.randn_like(p))
    batch = sample(model, tokenizer, problems[:4], group_size=group_size)
    logp_ref = token_logp(ref, batch.input_ids, batch.attention_mask).detach()
    m, rewards, adv, jitter = _pieces(batch, logp_ref, seed)
    logp_ref = logp_ref * m
    out = {}
    for name, (J, coef) in _cases(m, rewards, adv, jitter, logp_ref, group_size).items():
        if name not in methods:
            continue
        g_obj = _grad(model, -J(token_logp(model, batch.input_ids, batch.attention_mask) * m))
        lp = token_logp(model, batch.input_ids, batch.attention_mask) * m
        g_gc = _grad(model, surrogate_loss(lp, coef(lp), m))
        out[name] = (g_obj - g_gc).abs().max().item()
    return out
