"""What the advantage pages share: the rewards as one number per response, the KL in the reward summed in."""

import torch

from ... import _checks


def scores(v, name="rewards"):
    """(B,) the rewards, minus beta times each response's summed KL where the KL sits in the reward (verl sums
    token_level_rewards into the score of an outcome estimator)."""
    if v.scores is None:
        raise ValueError(f"this advantage needs {name} (the reward's scores)")
    r = _checks.per_sequence(v.scores, name, v.full.shape[0])
    if v.kl_reward is not None:
        r = r.double() - v.cfg.beta * (v.kl_reward * v.full).double().sum(-1)
    return r


def written_scores(v):
    """(B,) float64 rewards less beta times each response's summed KL where the KL sits in the reward: the
    objective's side, written apart from `scores`."""
    r = torch.as_tensor(v.scores).double()
    return r if v.kl_reward is None else r - v.cfg.beta * (v.kl_reward * v.full).double().sum(-1)


def on_tokens(a, v):
    """(B,) per-response advantages on every response token, in the mask's dtype, detached. -> (B, T)"""
    if a.shape[0] != v.full.shape[0]:
        raise ValueError(f"rewards has {a.shape[0]} entries but mask has {v.full.shape[0]} rows")
    return (a.to(v.full.dtype)[:, None] * v.full).detach()


def groups(r, v):
    """(n_groups, G) float64 view of (B,) rewards (the objective's side writes its advantage from these)."""
    return torch.as_tensor(r).double().view(_checks.groups(v.full.shape[0], v.group_size), v.group_size)
