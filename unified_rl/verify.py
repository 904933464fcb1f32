"""The course's central check, on a real model: for each method in METHODS, the parameter gradient of
its own objective equals the parameter gradient of the eq-5 surrogate with its coefficient.

Two independent computations: a Method's `objective` is built from `objectives`, which never
mentions a coefficient; its `coefficient` from `coefficients`, which never mentions an objective.
Both run through the same transformer in float64 on a batch sampled from it, and the coefficient is
called exactly as the trainer calls it (`wiring.prepare`, `step_of`, `coefficient_of`), so a wrong
coefficient or a wrong wiring shows as a difference above round-off. Every method registered in
METHODS is checked, those added later included.
"""

import copy
import dataclasses

import torch

from . import methods as _methods
from .lab import Lab
from .paradigm import surrogate_loss
from .presets import get_preset
from .sampling import sample
from .wiring import coefficient_of, policy_logp, prepare, step_of


class _OracleKeys:
    """The oracle's result keys, read live from METHODS: each method, plus NAME-clipped for the
    off-policy ones (their coefficient also checked with logp_old != logp)."""

    def _names(self):
        for name, m in _methods.METHODS.items():
            yield name
            if m.off_policy:
                yield f"{name}-clipped"

    def __iter__(self):
        return iter(list(self._names()))

    def __contains__(self, name):
        return name in list(self._names())

    def __len__(self):
        return len(list(self._names()))

    def __repr__(self):
        return repr(tuple(self._names()))


ORACLE_KEYS = _OracleKeys()


def _grads(model, loss):
    """d loss / d theta, one tensor per parameter (None where loss does not reach it)."""
    params = [p for p in model.parameters() if p.requires_grad]
    # retain_graph: the forward pass that made logp serves each gradient of a method
    return torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)


def _max_abs(tensors):
    return max((t.abs().max().item() for t in tensors if t is not None), default=0.0)


def _max_abs_diff(a, b):
    """max |a - b| over two gradients (None: the loss does not reach that parameter), tensor by tensor:
    no 10^8-entry concatenation of a real LLM's gradient, and one tensor's difference alive at a time."""
    return max(((x if y is None else y.neg() if x is None else x - y).abs().max().item()
                for x, y in zip(a, b) if x is not None or y is not None), default=0.0)


def _informative(scores, gen):
    """The reward's scores, or coin flips if every score is equal (the check would learn little)."""
    if scores is None or scores.min() != scores.max():
        return scores
    return torch.randint(0, 2, scores.shape, generator=gen).to(scores)


def _oracle_lab(model, tokenizer, problems, group_size, seed):
    """A lab around `model` whose reference is moved a little, so KL terms are not trivially zero."""
    ref = copy.deepcopy(model).requires_grad_(False)
    with torch.no_grad():
        for p in ref.parameters():  # float32 noise moves it as well as float64's would, drawn at less cost
            p.add_(torch.randn(p.shape, dtype=torch.float32, device=p.device).to(p.dtype), alpha=0.01)
    preset = get_preset("tiny").with_(rl={"group_size": group_size})
    return Lab(preset, tokenizer, model, ref, torch.device("cpu"), seed, problems, problems, problems)


def _diff(m, lab, prep, logp, logp_old_shift, hp, relative=False):
    """max |grad J - grad surrogate| with logp_old = logp + logp_old_shift. `logp` (B, T) is the
    policy's, with its graph: both gradients are taken through the same forward pass (the parts under
    test, objective and coefficient, are computed apart from each other after it)."""
    cfg, mask = lab.preset.rl, prep.batch.mask
    g_obj = _grads(lab.policy, -m.objective(step_of(prep, logp, logp.detach() + logp_old_shift, cfg, hp)))
    coef = coefficient_of(m, step_of(prep, logp, logp.detach() + logp_old_shift, cfg, hp))
    g_gc = _grads(lab.policy, surrogate_loss(logp, coef, mask))
    diff = _max_abs_diff(g_obj, g_gc)
    return diff / max(_max_abs(g_gc), 1e-300) if relative else diff


def _with_settings(m, settings):
    """The method's hparams with those of `settings` it has (its other options stay)."""
    if not settings or m.hparams is None:
        return m.hparams
    own = {f.name for f in dataclasses.fields(m.hparams)}
    return dataclasses.replace(m.hparams, **{k: v for k, v in settings.items() if k in own})


def model_oracle(policy, tokenizer, problems, methods=None, group_size=4, seed=0, relative=False, settings=None):
    """{key: max |grad_theta J - grad_theta surrogate|} on a batch sampled from `policy` (float64).

    relative=True: each difference divided by max |grad_theta surrogate|, so models of any size
    (a pretrained LLM's gradient entries are not the lab's) compare with round-off directly.
    settings: hparams options (e.g. {"dpo_loss": "hinge"}) given to the methods that have them, so
    each option of a method is checked, not only its defaults.

    Keys (ORACLE_KEYS): every method in methods.METHODS (on-policy, and for methods that ignore logp_old also off-policy:
    the larger difference), and NAME-clipped for off-policy methods with logp_old != logp.
    """
    names = list(ORACLE_KEYS) if methods is None else list(methods)
    unknown = [n for n in names if n not in ORACLE_KEYS]
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {tuple(ORACLE_KEYS)}")
    bases = {n.removesuffix("-clipped") if n not in _methods.METHODS else n for n in names}
    owned = {f.name for b in bases if _methods.METHODS[b].hparams is not None
             for f in dataclasses.fields(_methods.METHODS[b].hparams)}
    if settings and set(settings) - owned:
        raise ValueError(f"settings {sorted(set(settings) - owned)} belong to none of the methods checked")
    torch.manual_seed(seed)
    model = copy.deepcopy(policy).double().cpu()
    lab = _oracle_lab(model, tokenizer, problems, group_size, seed)
    batch = sample(model, tokenizer, problems[:4], group_size=group_size)
    batch = dataclasses.replace(batch, mask=batch.mask.double(), logp=batch.logp.double())  # all float64
    gen = torch.Generator().manual_seed(seed)
    jitter = 0.3 * torch.randn(batch.mask.shape, generator=gen, dtype=torch.float64) * batch.mask  # (B, T)
    out = {}
    for base in dict.fromkeys(n.removesuffix("-clipped") if n not in _methods.METHODS else n for n in names):
        m = _methods.METHODS[base]
        if m.objective is None:
            raise ValueError(f"method {base!r} declares no objective, so its coefficient cannot be checked")
        extra = m.extra_loss(lab) if m.extra_loss else None
        scores = _informative(m.reward(batch).double(), gen) if m.reward else None
        prep = prepare(m, lab, batch, extra, scores=scores)
        # (B, T): one forward pass for the method's four gradients; the vocabulary projection on the
        # reply's positions only (the prompt's log-probs are masked out of every objective anyway)
        logp = policy_logp(lab.policy, prep.batch, response_only=True)
        # an off-policy method's on-policy and clipped cases are two keys: only the asked ones are computed
        wants_on, wants_off = (base in names, f"{base}-clipped" in names) if m.off_policy else (True, True)
        hp = _with_settings(m, settings)
        on = _diff(m, lab, prep, logp, 0.0, hp, relative) if wants_on else None
        off = _diff(m, lab, prep, logp, jitter, hp, relative) if wants_off else None
        del logp  # frees the graph
        if m.off_policy:
            out[base], out[f"{base}-clipped"] = on, off
        else:
            out[base] = max(on, off)
    return {n: out[n] for n in names}
