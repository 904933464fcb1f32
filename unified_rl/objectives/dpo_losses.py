"""The objective of every loss_type of TRL 1.16's DPOTrainer, as each paper writes its loss: J = -mean l.

Differentiable and written without the coefficients: the composition of DPO's row with its dpo_loss set, whose
objective is each loss page's term (parts/pair_losses/), so autograd of J is the oracle for each GC.
The scores are log-ratio sums (norm="sum": the papers' sequence log-probs) or per-token means (norm="mean":
DeepSeekMath's eq 12). Sources (arXiv): DPO 2305.18290 eq 7; hinge: SLiC 2305.10425 as RSO 2309.06657 uses
it; IPO 2310.12036 eq 17; EXO 2402.00856 eq 16 (two responses); NCA 2402.05369; robust DPO 2403.00409; BCO
2404.04656 (its pairwise form as TRL's DPOTrainer has it: without the paper's running shift delta); SPPO
2405.00675 eq 4.7 with hard probabilities; AOT 2406.05882 (sorted margins); APO 2408.06266 eq 7 (zero) and 8
(down); DiscoPOP 2406.08414 eq 5 (its log-ratio modulated loss); sft: the chosen responses' NLL.
"""

from ..parts.pair_losses import trl_dpo
from .preference import pair_objective


def dpo_loss(loss_type, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
             mask_rejected, beta, norm="mean", label_smoothing=0.0, discopop_tau=0.05):
    """J = -(1/B) sum over pairs of TRL's `loss_type` loss (module docstring), scalar, differentiable."""
    return pair_objective(trl_dpo(loss_type), logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                          logp_ref_rejected, mask_rejected, beta=beta, norm=norm, label_smoothing=label_smoothing,
                          discopop_tau=discopop_tau)


def dpo_weighted(terms, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                 beta, label_smoothing=0.0, discopop_tau=0.05):
    """J = sum_k w_k J_k, terms ((loss_type, norm, weight), ...): TRL's loss_type list with loss_weights."""
    if not terms:
        raise ValueError("terms is empty: give at least one (loss_type, norm, weight)")
    args = (logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta)
    return sum(w * dpo_loss(t, *args, norm=n, label_smoothing=label_smoothing, discopop_tau=discopop_tau)
               for t, n, w in terms)
