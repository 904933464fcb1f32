"""The registry: every method as a `paradigm.Method` (data source, reward, coefficient, objective).

`METHODS` maps a name to its Method; `get_method(name)` looks one up with a clear error. The
methods are defined by family:

| module              | methods                                                         |
|---------------------|-----------------------------------------------------------------|
| `paper`             | DeepSeekMath's six (A.1, eq 6-21) and GRPO with process rewards |
| `policy_gradient`   | after GRPO: Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax |
| `preference`        | beside DPO: IPO, SimPO, KTO, ORPO                               |

Adding a method is one entry in a family's tuple (docs/ARCHITECTURE.md, "Adding a method").
"""

from ..paradigm import Method
from ..presets import get_preset
from ..wiring import check_hparams
from .paper import (DEEPSEEKMATH, DPO, GRPO, GRPO_PROCESS, ONLINE_RFT, PPO, RFT, SFT, Critic, dpo_gc,
                    dpo_objective, grpo_gc, grpo_objective, online_rft_objective, ppo_advantage, ppo_gc,
                    ppo_objective, process_advantage, rft_gc, rft_objective, sft_gc, sft_objective)
from .policy_gradient import POLICY_GRADIENT
from .preference import PREFERENCE

METHODS = {m.name: m for m in DEEPSEEKMATH + PREFERENCE + POLICY_GRADIENT}
for _m in METHODS.values():  # a registered method whose settings could never be set is an error now
    check_hparams(_m, get_preset("cpu"))


def get_method(name):
    """A method by name (or a Method passed through)."""
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    return METHODS[name]


__all__ = ["METHODS", "get_method", "DEEPSEEKMATH", "POLICY_GRADIENT", "PREFERENCE", "SFT", "RFT",
           "ONLINE_RFT", "DPO", "PPO", "GRPO", "GRPO_PROCESS", "Critic", "dpo_gc", "dpo_objective", "grpo_gc",
           "grpo_objective", "online_rft_objective", "ppo_advantage", "ppo_gc", "ppo_objective",
           "process_advantage", "rft_gc", "rft_objective", "sft_gc", "sft_objective"]
