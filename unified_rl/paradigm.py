"""Eq 5 of DeepSeekMath as a loss, a Method as what one post-training method chooses, and the Step
its coefficient reads.

    grad J(theta) = E[(q, o) ~ D] ( 1/|o| sum_t GC(q, o, t) grad log pi_theta(o_t | q, o_<t) )

`surrogate_loss` is "a loss whose gradient, for the right data, is the policy gradient" (Spinning Up):
its value means nothing, only its gradient does. Reference: arXiv 2402.03300, section 5.2.1.
The contracts of a Method, a data source and an extra loss are described in docs/ARCHITECTURE.md.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol

import torch

from . import _checks

SECTIONS = ("sft", "rl")  # which preset section (SFTConfig or RLConfig) sizes a method's run
INIT_CHOICES = ("scratch", "sft")  # Method.init: where a run starts by default: a fresh model, or the cached SFT model


def surrogate_loss(logp, coef, mask):
    """-mean_i 1/|o_i| sum_t coef.detach() * logp: its gradient is minus eq 5's."""
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    coef = _checks.per_token(coef, "coef", mask)
    per_seq = (coef.detach() * logp * mask).sum(-1) / mask.sum(-1)  # (B,)
    return -per_seq.mean()


class DataSource(Protocol):
    """Where (q, o) come from; `Method.data_source(lab)` builds one per run.

    get_state() returns what continues the same stream of batches after a resume (its RNG, any
    buffered samples): only tensors, numbers, strings, None and lists/tuples/dicts of them, so
    that `torch.load(weights_only=True)` reads it back. set_state(state) restores it.
    """

    def next_batch(self): ...  # -> sampling.Rollout
    def get_state(self) -> dict: ...
    def set_state(self, state: dict) -> None: ...


class ExtraLoss(Protocol):
    """A loss minimised beside the surrogate, e.g. PPO's value model; `Method.extra_loss(lab)` builds it.

    targets() is computed once per batch, before its updates, and reaches loss() as `step.targets`.
    """

    lr: float  # learning rate of its own parameters
    metric: str  # the name its loss is logged under, e.g. "value_loss"

    def parameters(self): ...  # its own trainable parameters (may be empty)
    def targets(self, lab, batch, scores, logp_ref, adv): ...  # e.g. PPO's returns (B, T)
    def loss(self, step) -> torch.Tensor: ...  # a scalar to minimise
    def state_dict(self) -> dict: ...
    def load_state_dict(self, state: dict) -> None: ...


@dataclass(frozen=True)
class Method:
    """A post-training method: everything in which it differs from the others. The trainer holds no
    method name; it reads these fields.

    data_source: Lab -> a DataSource (where (q, o) come from).
    reward:      Rollout -> (B,) scores (how good o is); None for SFT, whose data is human-selected.
    coefficient: Step -> (B, T) GC(q, o, t), how hard to push each token's log-prob.
    objective:   Step -> scalar J, the method's own objective written without its GC; the model
                 oracle (verify.py) checks grad J == grad of the surrogate with `coefficient`.
    advantage:   optional (lab, batch, scores, logp_ref, extra) -> (B, T), computed once per batch
                 before the updates (PPO's GAE, GRPO's process supervision).
    extra_loss:  optional Lab -> ExtraLoss (PPO's value model), minimised beside the surrogate.
    section:     "rl" or "sft": which preset section gives steps, lr and batch size.
    uses_ref:    whether the run computes logp_ref under the frozen reference pi_ref.
    init:        "sft" (the cached SFT model of the preset) or "scratch" (a fresh model).
    off_policy:  the coefficient reads logp_old (a clipped ratio); the oracle also checks it with
                 logp_old != logp and reports it as NAME-clipped.
    hparams:     the method's own settings, a frozen dataclass (Step.hp); train(**overrides) sets
                 its fields as it sets RLConfig's, so a new method needs no new RLConfig field.
    defaults:    fields of its preset section this method changes from the shared ones.
    paper:       where the method is defined, e.g. "DeepSeekMath eq 19-21, arXiv 2402.03300".
    composition: the parts it is made of (parts.Composition, or parts.PairComposition for the preference
                 family), for a method built by `parts.compose` or `parts.compose_pairs`.
    ships_in:    where it ships ("paper", "TRL", "verl").
    """

    name: str
    data_source: Callable
    reward: Optional[Callable]
    coefficient: Callable
    objective: Optional[Callable] = None
    advantage: Optional[Callable] = None
    extra_loss: Optional[Callable] = None
    section: str = "rl"
    uses_ref: bool = True
    init: str = "sft"
    off_policy: bool = False
    hparams: Any = None
    defaults: dict = field(default_factory=dict)
    paper: str = ""
    summary: str = ""
    composition: Any = None
    ships_in: tuple = ()

    def __post_init__(self):
        if self.section not in SECTIONS:
            raise ValueError(f"method {self.name!r}: section must be one of {SECTIONS}, got {self.section!r}")
        if self.init not in INIT_CHOICES:
            raise ValueError(f"method {self.name!r}: init must be one of {INIT_CHOICES}, got {self.init!r}")
        if self.hparams is not None and not (dataclasses.is_dataclass(self.hparams)
                                             and not isinstance(self.hparams, type)):
            raise ValueError(f"method {self.name!r}: hparams must be a dataclass instance, got {self.hparams!r}")

    @property
    def critic(self):
        """The extra loss under its older name (PPO's value model is the only one here)."""
        return self.extra_loss


@dataclass
class Step:
    """What a coefficient (and an objective) may look at for one update."""

    batch: Any  # the Rollout (or a TensorBatch): .mask (B, T), .group_size, len() == B
    scores: Any  # the reward's output (B,), or None
    logp: Any  # (B, T) log pi_theta, with grad
    logp_old: Any  # (B, T) log pi of the policy as it was when this batch's updates began (detached)
    logp_ref: Any  # (B, T) log pi_ref, or None
    adv: Any  # (B, T) from Method.advantage, or None
    cfg: Any  # the run's RLConfig
    hp: Any = None  # the run's Method.hparams, or None
    targets: Any = None  # ExtraLoss.targets of this batch, or None
    across: Any = None  # reductions over every rank's rows (sum, max, min, gather) in a distributed run, else None:
    # the world travels on the step, so no part and no method knows of the process group
    teacher_logp: Any = None  # (B, T) a teacher's log-probs of the batch (the distillation methods), or None


@dataclass
class TensorBatch:
    """The least a coefficient reads of a batch: its response mask and group size."""

    mask: torch.Tensor  # (B, T)
    group_size: int = 1
    truncated: Optional[torch.Tensor] = None  # (B,) bool: rows cut at the sampling budget (sampling.Rollout)
    entropy: Optional[torch.Tensor] = None  # (B, T) the sampler's entropy at each token (sampling.Rollout)

    def __len__(self):
        return self.mask.shape[0]


def step_from_tensors(logp, mask, cfg, *, logp_ref=None, logp_old=None, scores=None, adv=None,
                      group_size=1, hp=None, targets=None, truncated=None, entropy=None, across=None,
                      teacher_logp=None):
    """A Step from bare tensors, to call `METHODS[name].coefficient` outside a run (widgets, tests).

    logp_old defaults to logp.detach() (on-policy). Row layout is the method's data source's: DPO
    wants its B chosen rows first, then their B rejected partners. truncated, entropy: what a sampler
    records (sampling.Rollout), for the options that read them; teacher_logp: a teacher's log-probs.
    """
    mask = _checks.response_mask(mask)
    logp = _checks.per_token(logp, "logp", mask)
    logp_old = logp.detach() if logp_old is None else logp_old
    batch = TensorBatch(mask, group_size, truncated, entropy)
    return Step(batch, scores, logp, logp_old, logp_ref, adv, cfg, hp, targets, across, teacher_logp)
