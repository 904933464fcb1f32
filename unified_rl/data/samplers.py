"""A sampler that is not the learner: the policy of `sampler_lag` steps ago, in `sampler_dtype`.

An asynchronous trainer (TRL's AsyncGRPO, whose `max_staleness` bounds how many updates a sample's policy may
lag) learns from samples its policy drew some updates ago, and an inference engine samples in another precision
than the trainer's float32 (bf16 weights; llama.cpp's quantised ones). Both make the batch off-policy before its
first update: pi_old (the learner at the batch's start, `View.logp_old`) is not the sampler, whose log-probs the
batch records (`Rollout.logp`, `View.sampler_logp`), which is what a sampler correction (truncated importance
sampling) reads.

Staleness here is fixed, not bounded: at step s the batch is drawn by a copy of the policy holding the weights
of step max(s - k, 0). The alternative, a frozen sampler refreshed every k steps, lags 0, 1, ..., k-1 steps in
turn, so a run's staleness would be its step's remainder, not the setting; keeping the last k snapshots costs
k copies of the trainable weights (a LoRA adapter's alone under LoRA) and makes the lag one number a test can
pin down. The snapshots are the source's state, so a resumed run samples as the uninterrupted one.

`source_of(method, lab)` is the loop's data source: the method's own (nothing changes at lag 0 in the learner's
precision), or that source built on a lab whose policy is the sampler. Refused in one line: a source that does
not sample the policy and record its log-probs (SFT's dataset, pi_ref's samples, preference pairs built from
texts), an FSDP2-sharded policy (the sampler is a whole copy), and `gguf` without a GGUF file.
"""

import copy
import dataclasses

import torch

from .. import fsdp
from ..presets import SAMPLER_DTYPES
from . import quantised
from .core import PolicySamples
from .distillation import OnOrOffPolicy
from .policy_gradient import GreedyBaselinePairs

RECORDING = (PolicySamples, GreedyBaselinePairs, OnOrOffPolicy)
"""Sources that sample lab.policy and keep its log-probs (DynamicSampling is a PolicySamples); another source
says so with `records_sampler = True`."""


def off_policy(cfg) -> bool:
    """Whether a run's sampler is not the learner: a lag, or another precision."""
    if cfg.sampler_dtype not in SAMPLER_DTYPES:
        raise ValueError(f"unknown sampler_dtype {cfg.sampler_dtype!r}; choose one of {', '.join(SAMPLER_DTYPES)}")
    return cfg.sampler_lag != 0 or cfg.sampler_dtype != "same"


def source_of(method, lab):
    """The data source a run draws from: the method's, or it drawing from a stale or lower-precision sampler."""
    if method.section == "rl" and off_policy(lab.preset.rl):
        return Sampler(method, lab)
    return method.data_source(lab)


def _records(source):
    return getattr(source, "records_sampler", isinstance(source, RECORDING))


class Sampler:
    """The method's data source drawing from a copy of the policy: `sampler_lag` steps old, in `sampler_dtype`."""

    def __init__(self, method, lab):
        cfg = lab.preset.rl
        self.lag, self.dtype = cfg.sampler_lag, cfg.sampler_dtype
        what = f"sampler_lag={self.lag}, sampler_dtype={self.dtype!r}"
        if isinstance(self.lag, bool) or not isinstance(self.lag, int) or self.lag < 0:
            raise ValueError(f"sampler_lag must be a whole number >= 0, got {self.lag!r}")
        if fsdp.sharded(lab.policy):
            raise ValueError(f"{what}: the sampler is a whole copy of the policy, which fsdp shards: train it with "
                             "fsdp off")
        self.policy = lab.policy
        self.model = copy.deepcopy(lab.policy).requires_grad_(False).eval()
        if self.dtype == "bfloat16":
            self.model.to(torch.bfloat16)
        self.plan = self._plan(lab, what)
        self.inner = method.data_source(dataclasses.replace(lab, policy=self.model))
        if not _records(self.inner):
            raise ValueError(f"{what}: {method.name}'s data source {type(self.inner).__name__} does not sample the "
                             f"policy and record its log-probs (its rows are {self.inner.samples or 'given'}'s), "
                             "so there is no sampler to make stale or round")
        self.samples = self.inner.samples
        self.snapshots = []  # the trainable weights of the last `lag` steps, oldest first
        if self.plan:  # weights that never train (a LoRA's base) are rounded once
            frozen = {n: p.detach() for n, p in self.policy.named_parameters() if not p.requires_grad}
            quantised.load_into(self.model, {n: w for n, w in frozen.items() if n in self.plan}, self.plan)

    def _plan(self, lab, what):
        if self.dtype in quantised.FORMATS:
            return quantised.uniform_plan(self.model, self.dtype)
        if self.dtype != "gguf":
            return {}
        llm = lab.preset.llm
        if llm is None:
            raise ValueError(f"{what}: the lab's model has no GGUF file; choose q8_0 or q4_1")
        from ..llm import ALIASES, gguf_file
        if llm.model.lower() not in ALIASES:
            raise ValueError(f"{what}: {llm.model} is not a model this package reads from a GGUF file "
                             f"({', '.join(ALIASES)}); choose q8_0 or q4_1")
        return quantised.gguf_plan(self.model, gguf_file(llm.model.lower()))

    def _trainable(self):
        return {n: p.detach().clone() for n, p in self.policy.named_parameters() if p.requires_grad}

    def next_batch(self):
        """The method's batch drawn by the policy of `lag` steps ago (the oldest kept in the first steps)."""
        now = self._trainable()
        quantised.load_into(self.model, self.snapshots[0] if self.snapshots else now, self.plan)
        if self.lag:
            self.snapshots = (self.snapshots + [now])[-self.lag:]
        return self.inner.next_batch()

    def get_state(self):
        """The method's source's state and the snapshots (tensors on the CPU)."""
        return {"inner": self.inner.get_state(),
                "snapshots": [{n: w.cpu() for n, w in s.items()} for s in self.snapshots]}

    def set_state(self, state):
        self.inner.set_state(state["inner"])
        device = next(self.policy.parameters()).device
        self.snapshots = [{n: w.to(device) for n, w in s.items()} for s in state["snapshots"]]
