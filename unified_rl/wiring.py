"""How a Method meets a batch: the one path the trainer and the model oracle (verify.py) share.

`configure` gives a run its settings (the method's defaults, then the caller's overrides). Once per
batch, `prepare` scores it and computes log pi_ref, the method's advantages, its extra loss's
targets and a teacher's log-probs; for each update, `step_of` builds the Step and `coefficient_of`
runs the method's coefficient on it. So the oracle proves the very call that trains. See docs/ARCHITECTURE.md.
"""

from dataclasses import dataclass, fields, replace
from typing import Any

import torch

from . import distributed
from .data import teachers
from .paradigm import Step
from .sampling import token_logp
from .worlds import world_of


def check_hparams(method, preset):
    """ValueError if a field of the method's hparams shares a name with its preset section's settings:
    `train(name, field=...)` sets the section's field, so the method's own could never be set."""
    own = {f.name for f in fields(getattr(preset, method.section))}
    hp_names = {f.name for f in fields(method.hparams)} if method.hparams is not None else set()
    clash = sorted(own & hp_names)
    if clash:
        raise ValueError(f"method {method.name!r}: its hparams field(s) {clash} have the names of "
                         f"{type(getattr(preset, method.section)).__name__} fields, so they could never be "
                         "set; give them names of their own (e.g. prefixed with the method's name)")
    return own, hp_names


def configure(method, preset, overrides):
    """(preset, hparams) of a run: the method's defaults and the caller's overrides applied."""
    section = getattr(preset, method.section)
    own, hp_names = check_hparams(method, preset)
    merged = {**method.defaults, **overrides}  # the caller's word wins
    unknown = sorted(set(merged) - own - hp_names)
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown} for {method.name}; choose from "
                         f"{sorted(own | hp_names)}")
    for_section = {k: v for k, v in merged.items() if k in own}
    for_hp = {k: v for k, v in merged.items() if k in hp_names and k not in own}
    if for_section:
        preset = preset.with_(**{method.section: for_section})
    hp = replace(method.hparams, **for_hp) if method.hparams is not None else None
    return preset, hp


@dataclass
class Prepared:
    """What one batch gives every update made on it."""

    batch: Any  # Rollout
    scores: Any  # (B,) or None
    logp_ref: Any  # (B, T) or None
    adv: Any  # (B, T) or None
    targets: Any  # the extra loss's targets, or None
    teacher_logp: Any = None  # (B, T) the teacher's log-probs (a method whose parts read a teacher), or None


def policy_logp(model, batch, response_only=False):
    """(B, T) log pi of each response token of `batch` under `model`, 0 off the response.

    response_only: compute logits at response positions only (a large-vocabulary LLM's saving);
    the lab's runs keep the full computation, so their numbers stay bit for bit as shipped.
    """
    start = batch.prompt_len - 1 if response_only else 0
    return token_logp(model, batch.input_ids, batch.attention_mask, start=start) * batch.mask  # (B, T)


def response_only(lab) -> bool:
    """Whether a lab's log-probs skip the prompt's logits: its world's flag (a pretrained LLM's)."""
    return world_of(lab.preset).response_only


def prepare(method, lab, batch, extra=None, scores=None):
    """Score `batch` (unless `scores` is given), then its logp_ref, advantages and extra-loss targets."""
    if scores is None and method.reward is not None:
        scores = method.reward(batch).to(lab.device)  # (B,)
    logp_ref = None
    if method.uses_ref:
        with torch.no_grad():
            logp_ref = policy_logp(lab.ref, batch, response_only(lab))  # (B, T)
    adv = method.advantage(lab, batch, scores, logp_ref, extra) if method.advantage else None
    targets = extra.targets(lab, batch, scores, logp_ref, adv) if extra is not None else None
    teacher_logp = teachers.of_batch(method, lab, batch, logp_ref)  # a distillation method's teacher, or None
    return Prepared(batch, scores, logp_ref, adv, targets, teacher_logp)


def step_of(prep, logp, logp_old, cfg, hp=None):
    """The Step of one update: `logp` with grad, `logp_old` the policy's when the batch's updates began; the
    world's reductions over the ranks' rows travel on it (`Step.across`, None in one process)."""
    return Step(prep.batch, prep.scores, logp, logp_old, prep.logp_ref, prep.adv, cfg, hp, prep.targets,
                distributed.across(), prep.teacher_logp)


def coefficient_of(method, step):
    """(B, T) GC of `method` on `step`, detached; checked to be one number per token. A step made without
    settings (`step_of(..., hp=None)`) is read with the method's defaults."""
    if step.hp is None and method.hparams is not None:
        step = replace(step, hp=method.hparams)
    coef = method.coefficient(step)
    if not torch.is_tensor(coef) or coef.shape != step.logp.shape:
        got = tuple(coef.shape) if torch.is_tensor(coef) else type(coef).__name__
        raise ValueError(f"method {method.name!r}: its coefficient gave {got}, expected a tensor of "
                         f"logp's shape {tuple(step.logp.shape)}")
    return coef.detach()
