"""The advantages of imitation: SFT's 1 and RFT's indicator I(o) (DeepSeekMath eq 7, 10, 11).

With the REINFORCE policy term these give SFT's GC = 1 on every human-written token and RFT's GC = I(o): the
sample is imitated if it is correct and dropped if not. Online RFT is the same advantage on the policy's samples.
"""

import torch

from ... import _checks
from ...derivations.paper import REGISTRY as PAPER
from ..registry import ADVANTAGES
from ._common import on_tokens


def _one(v):
    return v.full.clone()


def indicator(v):
    """(B, T) I(o): the rewards, each 0 or 1, on every response token."""
    if v.scores is None:
        raise ValueError("rft needs correct (the 0/1 reward of each sample)")
    correct = _checks.per_sequence(v.scores, "correct", v.full.shape[0]).to(v.full.dtype)
    if not ((correct == 0) | (correct == 1)).all():
        raise ValueError("correct must contain only 0 and 1 (the indicator I(o))")
    return on_tokens(correct, v)


def _indicator_objective(v):
    return torch.as_tensor(v.scores).to(v.mask.dtype)[:, None] * torch.ones_like(v.mask)


ADVANTAGES.add("one", gc=_one, objective=lambda v: torch.ones_like(v.mask),
               summary="1 on every token: imitate the response (human-selected data)", cite="DeepSeekMath eq 6-7",
               ships_in=("paper",), derivation=PAPER["sft"])
ADVANTAGES.add("indicator", gc=indicator, objective=_indicator_objective,
               summary="I(o): 1 for a correct sample, 0 for a wrong one", cite="DeepSeekMath eq 8-11",
               aliases=("rft",), ships_in=("paper",), derivation=PAPER["rft"])
