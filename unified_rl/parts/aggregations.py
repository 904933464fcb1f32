"""Aggregations: how per-token terms f_{i,t} become one number, and the factor w_i each row's GC carries.

Every aggregation here is J = (1/B) sum_i w_i (1/|o_i|) sum_t f_{i,t} with w_i fixed by the mask, so eq 5's
GC is w_i times the per-token term's (B responses; |o_i| their kept tokens; N = sum_i |o_i|):

| name (verl's where verl has it) | J                                   | w_i              | ships in                  |
|---------------------------------|-------------------------------------|------------------|---------------------------|
| seq-mean-token-mean             | (1/B) sum_i (1/|o_i|) sum_t f       | 1                | DeepSeekMath eq 19; verl; TRL grpo |
| token-mean                      | sum_i sum_t f / N (the batch's)     | B |o_i| / N     | verl; TRL dapo, cispo      |
| seq-mean-token-sum              | (1/B) sum_i sum_t f                 | |o_i|            | verl; RLOO, ReMax, OPO     |
| seq-mean-token-sum-norm         | sum_i sum_t f / L                   | B |o_i| / L     | verl (L: its max response length) |
| constant                        | (1/B) sum_i sum_t f / L             | |o_i| / L        | Dr. GRPO; TRL dr_grpo      |
| group-token-mean                | mean over groups of sum_g f / sum_g |o_i| | G |o_i| / sum_g |o_j| | DAPO §3, CISPO (per question) |

verl's names mean verl's arithmetic (core_algos.agg_loss): its `token-mean` is the batch's token mean; the
mean over each group's tokens is `group-token-mean` here. L is the setting `max_len`. A row with no kept
tokens (a truncated row left out) has w_i = 0 and still counts in B, as TRL and verl count it.
"""

import torch

from .. import _checks
from .registry import AGGREGATIONS

RENAMED = {"batch-token-mean": "token-mean"}
"""Old spellings of an aggregation, refused in one line that names the new one (verl's names win)."""


def _lengths(mask):
    return mask.sum(-1, keepdim=True)  # (B, 1) |o_i|


def _L(v):
    L = v.setting("max_len")
    if L is None:
        raise ValueError("this aggregation needs max_len (L, e.g. the generation budget)")
    L = _checks.scalar(L, "max_len", low=0.0)
    if L == 0:
        raise ValueError("max_len must be > 0")
    return L


def token_mean_weight(mask, across=None):
    """(B, 1) B |o_i| / N over the whole batch (every rank's rows and tokens with `across`)."""
    n = _lengths(mask)
    B = torch.tensor(float(mask.shape[0]), dtype=n.dtype, device=n.device)
    total = torch.stack([B, n.sum()])
    if across is not None:
        total = across.sum(total)
    return total[0] * n / total[1].clamp(min=1)


def group_token_mean_weight(mask, group_size):
    """(B, 1) G |o_i| / sum_{j in i's group} |o_j|; a group a rank holds whole never crosses ranks."""
    _checks.groups(mask.shape[0], group_size)
    n = _lengths(mask)
    per_group = n.view(-1, group_size).sum(-1, keepdim=True).repeat_interleave(group_size, 0)
    return group_size * n / per_group.clamp(min=1)


# the objective's side: each J written as its source prints it (a sum and a normaliser), no weight

def _seq_mean_token_mean(f, v):
    return ((f * v.mask).sum(-1) / v.mask.sum(-1).clamp(min=1)).mean()


def _token_mean(f, v):
    return (f * v.mask).sum() / v.mask.sum().clamp(min=1)


def _seq_mean_token_sum(f, v):
    return (f * v.mask).sum(-1).mean()


def _seq_mean_token_sum_norm(f, v):
    return (f * v.mask).sum() / _L(v)


def _constant(f, v):
    return (f * v.mask).sum() / (v.mask.shape[0] * _L(v))


def _group_token_mean(f, v):
    G = v.group_size
    per = (f * v.mask).reshape(-1, G * v.mask.shape[1]).sum(-1) / v.mask.reshape(-1, G * v.mask.shape[1]).sum(-1).clamp(min=1)
    return per.mean()


def _register(name, weight, objective, summary, cite, **kw):
    AGGREGATIONS.add(name, gc=weight, objective=objective, summary=summary, cite=cite,
                     derivation=lambda n, name=name: _derive(n, name), **kw)


_register("seq-mean-token-mean", lambda v: (_lengths(v.mask) > 0).to(v.mask.dtype), _seq_mean_token_mean,
          "each response's mean over its tokens, then the mean over responses", "DeepSeekMath eq 19, arXiv 2402.03300",
          ships_in=("paper", "TRL", "verl"))
_register("token-mean", lambda v: token_mean_weight(v.mask, v.across), _token_mean,
          "every token of the batch weighs the same", "verl core_algos.agg_loss; DAPO arXiv 2503.14476",
          ships_in=("TRL", "verl"))
_register("seq-mean-token-sum", lambda v: _lengths(v.mask), _seq_mean_token_sum,
          "each response's token sum (log pi(o|q)), then the mean over responses", "verl core_algos.agg_loss",
          ships_in=("verl",))
_register("seq-mean-token-sum-norm", lambda v: v.mask.shape[0] * _lengths(v.mask) / _L(v), _seq_mean_token_sum_norm,
          "the batch's token sum over a constant L (no 1/B)", "verl core_algos.agg_loss (Dr. GRPO, arXiv 2503.20783)",
          ships_in=("verl",))
_register("constant", lambda v: _lengths(v.mask) / _L(v), _constant,
          "the mean over responses of each token sum over a constant L", "Dr. GRPO, arXiv 2503.20783; TRL dr_grpo",
          ships_in=("TRL",))
_register("group-token-mean", lambda v: group_token_mean_weight(v.mask, v.group_size), _group_token_mean,
          "every token of a question's group weighs the same, then the mean over groups",
          "DAPO §3, arXiv 2503.14476; CISPO, arXiv 2506.13585")


def weight(v, name):
    """(B, 1) the row factor of aggregation `name` on View v (the registry's, old spellings refused)."""
    return AGGREGATIONS.get(checked(name)).gc(v)


def checked(name):
    """`name` if it is an aggregation; an old spelling or an unknown one is a ValueError naming what to use."""
    if name in RENAMED:
        raise ValueError(f"aggregation {name!r} is now called {RENAMED[name]!r} (verl's name and arithmetic: the "
                         "batch's token mean); the mean over each group's tokens is 'group-token-mean'")
    AGGREGATIONS.get(name)
    return name


def _derive(n, name):
    from ..derivations.aggregations import derive_aggregation
    return derive_aggregation(n, name)
