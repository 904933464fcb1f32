"""Data sources, the first component of the paradigm: where (q, o) come from.

| module            | sources                                                              |
|-------------------|----------------------------------------------------------------------|
| `core`            | FixedDataset (SFT), FrozenPolicySamples (RFT), PolicySamples (online), PreferencePairs (DPO); GivenBatch (one given batch, for a single step of the trainer) |
| `policy_gradient` | DynamicSampling (DAPO), GreedyBaselinePairs (ReMax)                  |
| `preference`      | LabelledSamples (KTO), PolicyPairs (on-policy DPO)                   |
| `distillation`    | OnOrOffPolicy (GKD: the policy's samples or the SFT set's, lambda)   |

`samplers` draws any policy source from a stale or lower-precision copy of the policy (RLConfig.sampler_lag,
sampler_dtype); `teachers` gives a distillation method its teacher's log-probs (RLConfig.teacher, teacher_sees).

Each is built from the run's `Lab` and returns a `Rollout` per `next_batch()`; the contract
(`paradigm.DataSource`: next_batch, get_state, set_state) is in docs/ARCHITECTURE.md.
"""

from .core import FixedDataset, FrozenPolicySamples, GivenBatch, PolicySamples, PreferencePairs, _Source, pairs
from .distillation import OnOrOffPolicy
from .policy_gradient import DynamicSampling, GreedyBaselinePairs
from .preference import LabelledSamples, PolicyPairs

__all__ = ["FixedDataset", "FrozenPolicySamples", "GivenBatch", "PolicySamples", "PreferencePairs", "pairs",
           "DynamicSampling", "GreedyBaselinePairs", "LabelledSamples", "PolicyPairs", "OnOrOffPolicy"]
