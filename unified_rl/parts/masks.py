"""Token masks: which rows and tokens of the batch the policy term keeps (the KL term is not masked, as in TRL).

| name                | setting (TRL's name)          | keeps                                                   | source |
|---------------------|-------------------------------|---------------------------------------------------------|--------|
| truncated           | mask_truncated_completions    | the rows the sampler ended (a cut row leaves J and every normaliser) | DAPO §3.4, arXiv 2503.14476 |
| entropy             | top_entropy_quantile rho_H    | the tokens whose entropy is in the top rho_H of the kept tokens' | arXiv 2506.01939 |
| off-policy-sequence | off_policy_mask_threshold     | a row with A >= 0, or whose mean log(pi_old / pi_theta) <= the threshold | DeepSeek-V3.2 eq 9, arXiv 2512.02556 |

A mask is a number fixed before the update, so it multiplies its tokens' GC (derivations: grpo_kept_tokens). The
entropies ranked are the sampler's (pi_old); TRL ranks pi_theta's at each update: the two agree on a batch's first.
"""

from dataclasses import dataclass, field
from typing import Optional

import sympy as sp
import torch

from .. import _checks
from ..derivations.core import Derivation, _flat, _ragged, _ragged_gc
from ..text import Text
from .registry import MASKS


@dataclass(frozen=True)
class TruncatedSettings:
    mask_truncated_completions: bool = False
    """rows the sampler cut at their budget get GC 0 and leave every normaliser (DAPO §3.4; TRL's name)"""


@dataclass(frozen=True)
class EntropySettings:
    top_entropy_quantile: float = field(default=1.0, metadata={"choices": (1.0, 0.5)})
    """keep the GC of the tokens whose entropy is in the top fraction (arXiv 2506.01939: 0.2); 1 keeps all.
    The entropies are the sampler's (pi_old), TRL's pi_theta's: they agree on a batch's first update"""


@dataclass(frozen=True)
class OffPolicySettings:
    off_policy_mask_threshold: Optional[float] = field(default=None, metadata={"choices": (None, 1e-3)})
    """a row with A < 0 whose mean log(pi_old / pi_theta) exceeds it gets GC 0 (DeepSeek-V3.2, arXiv
    2512.02556 eq 9); None: off"""


def kept_rows(mask, truncated=None):
    """(B, T) the mask of the rows the loss keeps: `truncated` (B,) bool rows set to 0."""
    if truncated is None:
        return mask
    truncated = torch.as_tensor(truncated, dtype=torch.bool, device=mask.device)
    if truncated.shape != (mask.shape[0],):
        raise ValueError(f"truncated must be ({mask.shape[0]},) booleans, got shape {tuple(truncated.shape)}")
    return mask * (~truncated).to(mask.dtype)[:, None]


def _truncated(v):
    if not v.setting("mask_truncated_completions", False):
        return v.mask
    if v.truncated is None:
        raise ValueError("mask_truncated_completions needs the sampler's record of the rows it cut "
                         "(a sampled Rollout, or step_from_tensors(..., truncated=...))")
    return kept_rows(v.mask, v.truncated)


def _truncated_objective(v):
    if not v.setting("mask_truncated_completions", False):
        return v.mask
    return v.mask * (~torch.as_tensor(v.truncated, dtype=torch.bool)).to(v.mask.dtype)[:, None]


def entropy_mask(entropy, mask, quantile, across=None):
    """1 on the tokens whose entropy is at least the (1 - quantile) quantile of the masked tokens' (every rank's
    with `across`, as TRL gathers them); quantile 1 keeps every token.

    >>> entropy_mask(torch.tensor([[0.1, 0.5, 0.9, 0.3]]), torch.ones(1, 4), 0.5)
    tensor([[0., 1., 1., 0.]])
    """
    quantile = _checks.scalar(quantile, "top_entropy_quantile", low=0.0, high=1.0)
    if quantile == 1.0:
        return mask.clone()
    if entropy is None:
        raise ValueError("top_entropy_quantile < 1 needs the entropy of each token (a sampled Rollout's entropy)")
    entropy = _checks.per_token(entropy, "entropy", mask).detach()
    on = mask.bool()
    values = entropy[on]
    if across is not None:
        values, _ = across.gather(values)
    if values.numel() == 0:
        return torch.zeros_like(mask)
    threshold = torch.quantile(values, 1 - quantile)
    return ((entropy >= threshold) & on).to(mask.dtype)


def _entropy_objective(v, adv):
    q = v.setting("top_entropy_quantile", 1.0)
    if q >= 1.0:
        return torch.ones_like(v.mask)
    on = v.mask.bool()
    threshold = torch.quantile(torch.as_tensor(v.entropy)[on], 1 - q)
    return ((torch.as_tensor(v.entropy) >= threshold) & on).to(v.mask.dtype)


def off_policy_rows(adv, logp, logp_old, mask, threshold):
    """1 where the loss keeps a token: A >= 0, or its row's mean_t log(pi_old / pi_theta) <= threshold;
    threshold None keeps every token.

    >>> m = torch.ones(2, 2); old = torch.zeros(2, 2); lp = torch.full((2, 2), -1.0)   # KL 1 on each row
    >>> off_policy_rows(torch.tensor([[1.] * 2, [-1.] * 2]), lp, old, m, 0.5)
    tensor([[1., 1.],
            [0., 0.]])
    """
    if threshold is None:
        return torch.ones_like(mask)
    threshold = _checks.scalar(threshold, "off_policy_mask_threshold", low=0.0)
    x = logp_old - logp.detach()
    kl = (x * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1)  # (B, 1)
    return ((adv >= 0) | (kl <= threshold)).to(mask.dtype)


def _off_policy_objective(v, adv):
    t = v.setting("off_policy_mask_threshold")
    if t is None:
        return torch.ones_like(v.mask)
    kl_seq = ((v.logp_old - v.logp.detach()) * v.mask).sum(-1, keepdim=True) / v.mask.sum(-1, keepdim=True).clamp(min=1)
    return ((adv >= 0) | (kl_seq <= t)).to(v.mask.dtype)


def derive_kept_tokens(n):
    """Three rows under token-mean, the third cut: the masks are numbers fixed before the update."""
    lengths = (n, n + 1, n)  # the third row is cut at the budget
    l = _ragged("ell", lengths)
    A = sp.symbols("A_1:4", real=True)
    e = _ragged("e", lengths)  # entropy mask: 1 on kept tokens (a number, not a function of theta)
    o = sp.symbols("o_1:4", nonnegative=True)  # off-policy row mask
    kept = (0, 1)
    N = sum(len(l[i]) for i in kept)  # batch-token-mean over the kept rows only
    J = sum(o[i] * A[i] * ei * x for i in kept for ei, x in zip(e[i], l[i])) / N
    B = len(lengths)
    hand = tuple((sp.Rational(B * len(l[i]), N) * o[i] * A[i] * ei if i in kept else sp.Integer(0))
                 for i in range(B) for ei in e[i])
    notes = (Text("mask_truncated_completions drops the cut row from J and from the token count N; the entropy "
                  "mask e and the off-policy mask o are numbers fixed before the update, so each multiplies its "
                  "token's GC: GC = B |o_i| / N * o_i e_{{i,t}} A_i on the kept rows, 0 on the cut one."),)
    symbols = {"logp": _flat(l), "adv": A, "entropy_mask": _flat(e), "row_mask": o}
    return Derivation("grpo_kept_tokens", "TRL mask_truncated_completions, top_entropy_quantile, "
                      "off_policy_mask_threshold", J, _ragged_gc(J, l), hand, None, symbols, notes=notes,
                      scale="B\\,|o_i|")


KEPT = {"grpo_kept_tokens": derive_kept_tokens}


MASKS.add("truncated", gc=_truncated, objective=_truncated_objective, settings=TruncatedSettings, rows=True,
          summary="rows cut at the sampling budget leave the loss and every normaliser",
          cite="DAPO §3.4, arXiv 2503.14476 (overlong filtering); TRL mask_truncated_completions",
          ships_in=("TRL",), derivation=derive_kept_tokens, derivations=KEPT)
MASKS.add("entropy", gc=lambda v, adv: entropy_mask(v.entropy, v.mask, v.setting("top_entropy_quantile", 1.0), v.across),
          objective=_entropy_objective, settings=EntropySettings,
          summary="only the tokens of highest entropy (the forks of reasoning) get a GC",
          cite="Wang et al., arXiv 2506.01939; TRL top_entropy_quantile", ships_in=("TRL",),
          derivation=derive_kept_tokens, derivations=KEPT)
MASKS.add("off-policy-sequence",
          gc=lambda v, adv: off_policy_rows(adv, v.logp, v.logp_old, v.mask, v.setting("off_policy_mask_threshold")),
          objective=_off_policy_objective, settings=OffPolicySettings,
          summary="a negative-advantage row the update has moved far from its sampler gets GC 0",
          cite="DeepSeek-V3.2 eq 9, arXiv 2512.02556; TRL off_policy_mask_threshold", ships_in=("TRL",),
          derivation=derive_kept_tokens, derivations=KEPT)
