"""The registry: every method as a `paradigm.Method` (data source, reward, coefficient, objective).

`METHODS` maps a name to its Method; `get_method(name)` looks one up with a clear error. A reinforcement-learning
method is a row of `table.ROWS`: a composition of parts (parts/: an advantage estimator, a policy term, a KL term,
an aggregation, token masks) with its data source, reward, defaults and citation; `compose(...)` makes any other
composition. The preference family (DPO, IPO, SimPO, KTO, ORPO) is `preference.py`.

Adding a method is one row; adding a part is one page (docs/ARCHITECTURE.md, "Adding a part").
"""

from ..paradigm import Method
from ..presets import get_preset
from ..wiring import check_hparams
from .hooks import Critic, process_advantage
from .preference import DPO, PREFERENCE
from .table import ROWS, Row, compose, recompose

_ROWS = {r.name: r.method() for r in ROWS}
DEEPSEEKMATH = tuple(_ROWS[n] for n in ("sft", "rft", "online-rft")) + (DPO,) + tuple(
    _ROWS[n] for n in ("ppo", "grpo", "grpo-process"))
"""DeepSeekMath's six (appendix A.1, eq 6-21) and GRPO with process rewards (§4.1.3)."""
POLICY_GRADIENT = tuple(m for n, m in _ROWS.items() if m not in DEEPSEEKMATH)
"""The policy-gradient methods after GRPO: Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax and the rest."""

METHODS = {m.name: m for m in DEEPSEEKMATH + PREFERENCE + POLICY_GRADIENT}
SFT, RFT, ONLINE_RFT, PPO, GRPO, GRPO_PROCESS = (METHODS[n] for n in ("sft", "rft", "online-rft", "ppo", "grpo",
                                                                      "grpo-process"))
for _m in METHODS.values():  # a registered method whose settings could never be set is an error now
    check_hparams(_m, get_preset("cpu"))


def get_method(name):
    """A method by name (or a Method passed through)."""
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        import difflib
        near = difflib.get_close_matches(str(name), list(METHODS), n=1)
        raise ValueError(f"unknown method {name!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
                         + f"; choose one of {', '.join(METHODS)}")
    return METHODS[name]


def gc_of(method, logp, mask, *, settings=None, beta=None, clip_eps=None, **tensors):
    """The coefficient of a method (a name or a Method) on bare tensors (`paradigm.step_from_tensors`: logp_old,
    logp_ref, scores, group_size, ...), with its settings moved by `settings` and the cpu preset's RLConfig with
    `beta` and `clip_eps` where given. (B, T), detached."""
    import dataclasses

    from ..paradigm import step_from_tensors
    m = get_method(method)
    cfg = get_preset("cpu").rl
    cfg = dataclasses.replace(cfg, **{k: v for k, v in (("beta", beta), ("clip_eps", clip_eps)) if v is not None})
    hp = dataclasses.replace(m.hparams, **(settings or {})) if m.hparams is not None else None
    return m.coefficient(step_from_tensors(logp, mask, cfg, hp=hp, **tensors))


__all__ = ["gc_of", "recompose", "METHODS", "get_method", "compose", "Row", "ROWS", "DEEPSEEKMATH", "POLICY_GRADIENT", "PREFERENCE",
           "Critic", "process_advantage", "SFT", "RFT", "ONLINE_RFT", "DPO", "PPO", "GRPO", "GRPO_PROCESS"]
