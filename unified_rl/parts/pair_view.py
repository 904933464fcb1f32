"""What a preference part sees of one update: the batch's two halves, checked, and the composition's settings.

A preference batch is 2B rows: B chosen responses, then their B rejected partners (`PreferencePairs`), or KTO's
B labelled responses, then B mismatched rows that only give its reference point (`LabelledSamples`). The
composition scores every row with its scores part (`score`: each row's score s = pol - ref, its policy side pol
and its reference side ref) and hands the losses this view: `s1`, `p1`, `r1`, `n1` are the first half's scores,
policy sides, reference sides and lengths, `s2`, ... the second half's. On the coefficient's side every tensor
is detached; on the objective's side `logp` (and so s and pol) carries its gradient. `setting("beta")` reads a
part's setting by the part's own field name, whatever the method calls it (DPO's beta is the run's dpo_beta,
IPO's is ipo_tau): `PairComposition.setting_name`.
"""

from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

import torch
import torch.nn.functional as F

from .. import _checks


class Score(NamedTuple):
    """Each row's score s = pol - ref (B,), its policy side pol and its reference side ref (0 without pi_ref)."""

    s: torch.Tensor
    pol: torch.Tensor
    ref: torch.Tensor


@dataclass
class PairView:
    """One preference update as its parts read it. Per-token tensors are (2B, T), per-row (2B,)."""

    logp: torch.Tensor  # log pi_theta: detached (coefficient) or with its gradient (objective)
    logp_ref: Optional[torch.Tensor]  # pi_ref's, or None
    mask: torch.Tensor  # the response tokens
    rewards: Any  # (2B,) the reward's scores (KTO's labels are the first half's), or None
    hp: Any  # the composition's settings (a frozen dataclass)
    cfg: Any  # the run's RLConfig (read only for the settings a row takes from it: DPO's dpo_beta)
    composition: Any  # the PairComposition: the names of its settings
    norm: str = "mean"  # each response's score over its tokens: "mean" (DeepSeekMath's eq 12) or "sum"
    across: Any = None  # reductions over every rank's rows (distributed.across()), or None in one process
    grad: bool = False
    score: Optional[Score] = None  # set by the composition from its scores part

    @classmethod
    def of(cls, step, composition, hp, norm, grad=False):
        """The checked view of `step`: whole pairs (or halves), a response in every row, finite log-probs."""
        mask = _checks.response_mask(step.batch.mask).detach()
        if mask.shape[0] % 2:
            raise ValueError(f"{mask.shape[0]} rows cannot be split into two halves: DPO needs pairs (B chosen rows, "
                             "then their B rejected partners), and so does every preference loss (KTO: B labelled "
                             "rows, then B mismatched ones)")
        logp = _checks.per_token(step.logp, "logp", mask)
        ref = None if step.logp_ref is None else _checks.per_token(step.logp_ref, "logp_ref", mask).detach()
        return cls(logp if grad else logp.detach(), ref, mask, step.scores, hp, step.cfg, composition, norm,
                   getattr(step, "across", None), grad)

    @property
    def B(self):
        """Pairs (or labelled rows): half the batch."""
        return self.mask.shape[0] // 2

    def halves(self, x):
        """(first half, second half) of a per-row tensor."""
        return x[:self.B], x[self.B:]

    def setting(self, field):
        """The value of the part's setting `field` in this run (from the settings, or the run's config)."""
        return self.composition.setting(field, self.hp, self.cfg)

    @property
    def s1(self):
        return self.score.s[:self.B]

    @property
    def s2(self):
        return self.score.s[self.B:]

    @property
    def p1(self):
        return self.score.pol[:self.B]

    @property
    def p2(self):
        return self.score.pol[self.B:]

    @property
    def r1(self):
        return self.score.ref[:self.B]

    @property
    def r2(self):
        return self.score.ref[self.B:]

    @property
    def n1(self):
        """(B,) the first half's lengths |o|."""
        return self.mask[:self.B].sum(-1)

    @property
    def labels(self):
        """(B,) the first half's rewards, each 0 (undesirable) or 1 (desirable): KTO's labels."""
        if self.rewards is None:
            raise ValueError("an unpaired loss needs the rewards: its labelled rows' labels (1 desirable, 0 not)")
        r = _checks.as_tensor(_checks.not_bool(self.rewards, "rewards"), "rewards")
        if r.shape != (2 * self.B,):
            raise ValueError(f"rewards must have shape ({2 * self.B},), one per row, got {tuple(r.shape)}")
        labels = _checks.finite(r, "rewards")[:self.B].to(self.mask.dtype)
        if not ((labels == 0) | (labels == 1)).all():
            raise ValueError("desirable must contain only 0 and 1 (the labelled rows' rewards: undesirable / desirable)")
        return labels


def stack_pairs(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected,
                pairs_word="pairs are needed"):
    """(logp, logp_ref, mask) of 2B rows, chosen then rejected, each half padded to the longer T; checked.

    The bare-tensor calls (coefficients.ipo, objectives.dpo_loss, ...) hand their halves to a composition this
    way; `unstack` cuts its (2B, T) coefficient back into the two halves. logp keeps its gradient.
    """
    mc = _checks.response_mask(mask_chosen, "mask_chosen")
    mr = _checks.response_mask(mask_rejected, "mask_rejected")
    if mc.shape[0] != mr.shape[0]:
        raise ValueError(f"{mc.shape[0]} chosen responses but {mr.shape[0]} rejected ones: {pairs_word}")
    lc = _checks.per_token(logp_chosen, "logp_chosen", mc)
    lr = _checks.per_token(logp_rejected, "logp_rejected", mr)
    refs = [None if r is None else _checks.per_token(r, name, m) for r, name, m in
            ((logp_ref_chosen, "logp_ref_chosen", mc), (logp_ref_rejected, "logp_ref_rejected", mr))]
    T = max(mc.shape[1], mr.shape[1])

    def pad(x):
        return F.pad(x, (0, T - x.shape[1]))
    ref = None if refs[0] is None else torch.cat([pad(refs[0].detach()), pad(refs[1].detach())])
    return torch.cat([pad(lc), pad(lr)]), ref, torch.cat([pad(mc), pad(mr)])


def unstack(coef, mask_chosen, mask_rejected):
    """The (chosen, rejected) halves of a (2B, T) coefficient, each cut to its own T."""
    B = coef.shape[0] // 2
    return coef[:B, :mask_chosen.shape[1]], coef[B:, :mask_rejected.shape[1]]
