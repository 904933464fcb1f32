"""The pair GC of every loss_type of TRL 1.16's DPOTrainer on bare tensors: DPO's row with its dpo_loss set.

A pair loss l depends on the chosen and rejected responses through their scores s+ and s- (a
log-ratio to pi_ref; AOT: the policy's and pi_ref's log-probs; sft: the chosen log-probs). With J =
-mean over pairs of l, GC = k * dJ/ds per pair (the same number on every token of a response), where
`norm` sets the score and k:
    mean   s = (1/|o|) sum_t log(pi_theta / pi_ref), k = 1      DeepSeekMath eq 12; TRL's ipo, sigmoid_norm
    sum    s = sum_t log(pi_theta / pi_ref),         k = |o|    the papers' sequence log-probs; TRL's others
so under `sum` a longer response is pushed harder. Each loss type is a part with a page of its own
(parts/pair_losses/: its a+ and a-, its objective, its derivation, its paper); the table of every a+ and a-
is notebook 11's (course/nb_preference.py, TRL_GC).
"""

import torch  # noqa: F401  (the doctests)

from ..parts.pair_losses import TRL_DPO, trl_dpo
from ..parts.pair_scores import NORMS
from .preference import pair_gc

LOSS_TYPES = TRL_DPO
"""TRL 1.16's DPOConfig.loss_type values, in its docstring's order."""
__all__ = ["LOSS_TYPES", "NORMS", "dpo_loss", "dpo_weighted"]


def dpo_loss(loss_type, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
             mask_rejected, beta, norm="mean", label_smoothing=0.0, discopop_tau=0.05):
    """The GC of TRL's DPO `loss_type` (module table): (coef_chosen, coef_rejected), each (B, T), detached.

    norm="mean" with "sigmoid" (or "sigmoid_norm") is DeepSeekMath's DPO, `coefficients.dpo`.
    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> dpo_loss("hinge", z, z, m, z, z, m, beta=0.5)[0]          # u = 0 < 1: beta
    tensor([[0.5000, 0.5000]])
    >>> dpo_loss("hinge", z, z, m, z, z, m, beta=0.5, norm="sum")[0]   # |o| = 2 tokens: 2 beta
    tensor([[1., 1.]])
    """
    return pair_gc(trl_dpo(loss_type), logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                   logp_ref_rejected, mask_rejected, beta=beta, norm=norm, label_smoothing=label_smoothing,
                   discopop_tau=discopop_tau)


def dpo_weighted(terms, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                 beta, label_smoothing=0.0, discopop_tau=0.05):
    """GC of sum_k w_k l_k (TRL's loss_type list with loss_weights, e.g. MPO arXiv 2411.10442): sum_k w_k GC_k.

    terms: ((loss_type, norm, weight), ...). J is linear in the losses, so its GC is too.
    """
    if not terms:
        raise ValueError("terms is empty: give at least one (loss_type, norm, weight)")
    args = (logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta)
    parts = [(w, dpo_loss(t, *args, norm=n, label_smoothing=label_smoothing, discopop_tau=discopop_tau))
             for t, n, w in terms]
    return (sum(w * c for w, (c, _) in parts), sum(w * r for w, (_, r) in parts))
