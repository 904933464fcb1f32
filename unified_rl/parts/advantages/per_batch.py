"""Advantages computed once per batch, before its updates, from more than the Step holds.

| name    | A_t                                                                  | needs          | source |
|---------|----------------------------------------------------------------------|----------------|--------|
| gae     | sum_l (gamma lam)^l delta_{t+l}, delta_t = r_t + gamma V_{t+1} - V_t | a value model  | GAE, arXiv 1506.02438; DeepSeekMath eq 18 |
| process | the group-normalised rewards of the steps that end at or after t     | the tokenizer  | DeepSeekMath §4.1.3 |

The composition's per-batch hook (methods.hooks) computes them into `Step.adv`; these pages read it back.
PPO's reward carries its KL per token (eq 2), so GAE takes the KL in the reward from the composition.
"""

from dataclasses import dataclass

import torch

from ... import _checks
from ...derivations.paper import REGISTRY as PAPER
from ..registry import ADVANTAGES


@dataclass(frozen=True)
class GAESettings:
    gae_whiten: bool = False
    """whiten the advantages over the batch's response tokens (every rank's), (A - mean) / sqrt(var + 1e-8) with the
    unbiased variance, as verl's GAE does (verl_F.masked_whiten); the critic still regresses on the unwhitened
    returns. Off: DeepSeekMath's eq 18, A_t from GAE as it is"""


def _adv(v):
    if v.adv is None:
        raise ValueError("this advantage is computed once per batch (Method.advantage): the Step has no adv")
    return _checks.per_token(v.adv, "adv", v.full).detach() * v.full


def whiten(adv, mask, across=None):
    """(A - mean) / sqrt(var + 1e-8) over the masked tokens, the variance unbiased; every rank's with `across`."""
    a, m = adv.double(), mask.double()
    sums = torch.stack([(a * m).sum(), m.sum()])
    if across is not None:
        sums = across.sum(sums)
    mean = sums[0] / sums[1]
    sq = (((a - mean) * m) ** 2).sum()
    if across is not None:
        sq = across.sum(sq)
    var = sq / (sums[1] - 1).clamp(min=1)
    return ((a - mean) * torch.rsqrt(var + 1e-8) * m).to(adv.dtype)


def _gae(v):
    a = _adv(v)
    return whiten(a, v.full, v.across).detach() if v.setting("gae_whiten", False) else a


def _gae_objective(v):
    a = v.adv * v.full
    if not v.setting("gae_whiten", False):
        return a
    on = v.full.bool()
    return (a - a[on].mean()) / torch.sqrt(a[on].var() + 1e-8) * v.full  # torch's var: unbiased


ADVANTAGES.add("gae", gc=_gae, objective=_gae_objective, settings=GAESettings, per_batch="gae", needs_critic=True,
               summary="generalized advantage estimation with a learned value model",
               cite="GAE, Schulman et al., arXiv 1506.02438; DeepSeekMath eq 18", ships_in=("paper", "verl"),
               derivation=PAPER["ppo"])
ADVANTAGES.add("process", gc=_adv, objective=lambda v: v.adv, per_batch="process",
               summary="per-step rewards normalised over the group, summed from each token onward",
               cite="DeepSeekMath §4.1.3, arXiv 2402.03300", ships_in=("paper",), derivation=PAPER["grpo"])
