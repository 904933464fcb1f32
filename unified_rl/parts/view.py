"""What a part sees of one update: the Step's tensors, checked, with the composition's settings.

`View.of(step, grad)` checks every tensor once (shapes, finiteness, a response in every row) and holds them
detached for the coefficient's side, or `logp` with its gradient for the objective's side. `mask` is the
response mask of the rows the loss keeps (a row mask such as `truncated` removes rows from it), `full` the
batch's own. Everything global over the batch (a token count, a std, a quantile) goes through `across`,
the reductions over every rank's rows that the Step carries (None in one process).
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import torch

from .. import _checks


@dataclass
class View:
    """One update's tensors as the parts read them. Per-token tensors are (B, T), per-row (B,)."""

    mask: torch.Tensor  # (B, T) the kept rows' response tokens
    full: torch.Tensor  # (B, T) the batch's response tokens
    logp: torch.Tensor  # (B, T) log pi_theta: detached (coefficient) or with grad (objective)
    logp_old: torch.Tensor  # (B, T) the policy's when the batch's updates began (detached)
    logp_ref: Optional[torch.Tensor]  # (B, T) pi_ref's, or None
    scores: Any  # (B,) or (B, K) rewards, or None
    group_size: int
    hp: Any  # the composition's settings (a frozen dataclass)
    cfg: Any  # the run's RLConfig
    across: Any = None  # reductions over every rank's rows (distributed.across()), or None
    adv: Optional[torch.Tensor] = None  # (B, T) a per-batch advantage (GAE, process supervision), or None
    sampler_logp: Optional[torch.Tensor] = None  # (B, T) the sampler's log-probs (the KL in the reward's)
    truncated: Any = None  # (B,) bool: rows cut at the sampling budget, or None
    entropy: Any = None  # (B, T) the sampler's entropy at each token, or None
    grad: bool = False  # whether logp carries its gradient (the objective's side)
    kl_reward: Optional[torch.Tensor] = None  # (B, T) the KL estimate k per token where the KL sits in the reward
    teacher_logp: Optional[torch.Tensor] = None  # (B, T) a teacher's log-probs (the Step's, else pi_ref's), or None

    @classmethod
    def of(cls, step, hp, grad=False):
        """The checked View of `step` under settings `hp`; logp keeps its gradient when `grad`."""
        mask = _checks.response_mask(step.batch.mask).detach()
        logp = _checks.per_token(step.logp, "logp", mask)
        logp = logp if grad else logp.detach()
        old = logp.detach() if step.logp_old is None else _checks.per_token(step.logp_old, "logp_old", mask).detach()
        ref = None if step.logp_ref is None else _checks.per_token(step.logp_ref, "logp_ref", mask).detach()
        batch = step.batch
        sampler = getattr(batch, "logp", None)
        sampler = old if sampler is None else _checks.per_token(sampler, "the sampler's logp", mask).detach()
        teacher = getattr(step, "teacher_logp", None)  # none given: the default teacher, pi_ref
        teacher = ref if teacher is None else _checks.per_token(teacher, "teacher_logp", mask).detach()
        return cls(mask=mask, full=mask, logp=logp, logp_old=old, logp_ref=ref, scores=step.scores,
                   group_size=batch.group_size, hp=hp, cfg=step.cfg, across=getattr(step, "across", None),
                   adv=step.adv, sampler_logp=sampler, truncated=getattr(batch, "truncated", None),
                   entropy=getattr(batch, "entropy", None), grad=grad, teacher_logp=teacher)

    def setting(self, name, default=None):
        """The run's value of one setting (the composition's, else `default`)."""
        return getattr(self.hp, name, default)

    def rows(self, keep):
        """The View restricted to the rows where `keep` (B,) is True, each its own group."""
        idx = keep.nonzero().flatten()

        def cut(x):
            return x[idx] if torch.is_tensor(x) and x.dim() >= 1 and x.shape[0] == keep.shape[0] else x
        return dataclasses.replace(self, **{f.name: cut(getattr(self, f.name)) for f in dataclasses.fields(self)
                                            if f.name not in ("hp", "cfg", "across", "group_size", "grad")},
                                   group_size=1)

    def seq_mean(self, x, mask=None):
        """(B, 1) the mean of x over each row's tokens (0 for a row with none)."""
        m = self.mask if mask is None else mask
        return (x * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp(min=1)

    def log_ratio(self):
        """(B, T) log(pi_theta / pi_old) per token (with logp's gradient on the objective's side)."""
        return self.logp - self.logp_old

    def ratio(self, level="token"):
        """rho: the token ratio (B, T), or the sequence's exp(mean_t log ratio) (B, 1) over the kept tokens."""
        if level == "token":
            return torch.exp(self.log_ratio())
        if level == "sequence":
            return torch.exp(self.seq_mean(self.log_ratio()))
        raise ValueError(f"unknown importance_sampling_level {level!r}; choose token or sequence")


def out(coef, mask):
    """Detached, exactly 0 off the mask (not -0.0: the doctests print what a learner sees)."""
    return torch.where(mask.bool(), coef, torch.zeros_like(coef)).detach()


def per_token(seq, mask):
    """(B,) per-response values on every response token. -> (B, T)"""
    return seq.to(mask.dtype)[:, None] * mask
