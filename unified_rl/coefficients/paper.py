"""The gradient coefficients of DeepSeekMath's six methods (appendix A.1, eq 7-21) as pure tensor functions.

GC is |o| times the derivative of the method's objective J with respect to log pi_theta(o_t | ...): plug it into
`paradigm.surrogate_loss` and the gradient is exactly grad J (tests/test_oracle.py). Each function below is the
paper's method as a composition of parts (parts/: SFT is 1 x REINFORCE, RFT I(o) x REINFORCE, PPO GAE's A x PPO's
clip, GRPO A-hat x PPO's clip + k3), called on bare tensors: the same code the trainer runs, written once.
Every function returns a detached (B, T) tensor that is 0 off the mask. Conventions: docs/ARCHITECTURE.md.
"""

from types import SimpleNamespace

import torch

from .. import _checks
from ..paradigm import step_from_tensors
from ..parts import Composition, settings_class
from ..parts.pair_composition import composed
from .preference import pair_gc

_COMPOSITIONS = {}


def _composition(*parts):
    """The Composition of `parts` (advantage, policy, kl) with its default settings, made once per process."""
    if parts not in _COMPOSITIONS:
        bare = Composition(*parts)
        _COMPOSITIONS[parts] = Composition(*parts, settings=settings_class("PaperConfig", bare)())
    return _COMPOSITIONS[parts]


def _mask(mask):
    return _checks.response_mask(mask).detach()


def _gc(parts, mask, logp=None, *, beta=0.0, clip_eps=None, **tensors):
    mask = _mask(mask)
    logp = torch.zeros_like(mask) if logp is None else logp
    cfg = SimpleNamespace(beta=beta, clip_eps=0.2 if clip_eps is None else clip_eps)
    return _composition(*parts).coefficient(step_from_tensors(logp, mask, cfg, **tensors))


def sft(mask):
    """Eq 7: GC = 1 on every token of the human-written response.

    >>> sft(torch.tensor([[0., 1., 1.]]))
    tensor([[0., 1., 1.]])
    """
    return _gc(("one", "reinforce"), mask)


def rft(correct, mask):
    """Eq 10: GC = I(o), 1 when the sampled answer is correct, else 0 (the sample is dropped).

    >>> rft(torch.tensor([1., 0.]), torch.ones(2, 2))
    tensor([[1., 1.],
            [0., 0.]])
    """
    return _gc(("indicator", "reinforce"), mask, scores=correct)


def online_rft(correct, mask):
    """Eq 11: the same GC as RFT, I(o); only the data source differs (samples of the current policy)."""
    return rft(correct, mask)


def dpo(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected, mask_rejected, beta):
    """Eq 14, exact: +c on chosen tokens, -c on rejected ones, c = beta * sigmoid(beta x- - beta x+).

    x = (1/|o|) sum_t log(pi_theta / pi_ref) is the length-normalised log-ratio of eq 12.
    The printed eq 14 omits the leading beta (it drops the chain rule's inner factor) and writes the
    sigmoid's argument per token; differentiating eq 12 gives the sequence-level form used here.
    Returns (coef_chosen, coef_rejected), each (B, T): DPO's composition (the log-ratio scores, the sigmoid
    loss, the mean norm: its row of methods/preference.py) on the two halves, as the trainer runs it.

    >>> m = torch.ones(1, 2); z = torch.zeros(1, 2)
    >>> dpo(z, z, m, z, z, m, beta=0.1)[0]     # equal log-ratios: c = 0.1 * sigmoid(0)
    tensor([[0.0500, 0.0500]])
    """
    beta = _checks.scalar(beta, "beta", low=0.0)
    return pair_gc(composed("log_ratio", "sigmoid"), logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected,
                   logp_ref_rejected, mask_rejected, "DPO needs pairs", beta=beta)


def _clip(logp, logp_old, clip_eps, name):
    if logp is not None or logp_old is not None or clip_eps is not None:
        if logp_old is None or clip_eps is None:
            raise ValueError(f"the clipped {name} coefficient needs logp, logp_old and clip_eps together")
        _checks.scalar(clip_eps, "clip_eps", low=0.0)


def ppo(adv, mask, *, logp=None, logp_old=None, clip_eps=None):
    """Eq 18: GC = A_t (from GAE), taken on-policy (pi_old = pi_theta) as the paper does.

    Given logp, logp_old and clip_eps it is the exact gradient of eq 15 off-policy as well:
    ratio * A_t inside the clip range and 0 where the clip is active.
    >>> ppo(torch.tensor([[0.5, -1.0]]), torch.ones(1, 2))
    tensor([[ 0.5000, -1.0000]])
    """
    if (logp is None) != (logp_old is None):
        raise ValueError("the clipped PPO coefficient needs logp, logp_old and clip_eps together")
    _clip(logp, logp_old, clip_eps, "PPO")
    return _gc(("gae", "vanilla"), mask, logp, clip_eps=clip_eps, adv=adv, logp_old=logp_old)


def grpo(rewards, group_size, logp, logp_ref, mask, beta, eps=1e-6, *, adv=None, logp_old=None, clip_eps=None):
    """Eq 21: GC = A-hat_{i,t} + beta * (pi_ref / pi_theta - 1).

    A-hat is the group-relative advantage of the rewards (outcome supervision); pass `adv` (B, T)
    instead for process supervision. The second term is the gradient of the k3 KL penalty of eq 19.
    With logp_old and clip_eps the advantage term becomes ratio * A-hat inside the clip range, 0 out.
    >>> m = torch.ones(2, 1); z = torch.zeros(2, 1)
    >>> grpo(torch.tensor([1., 0.]), 2, z, z, m, beta=0.04)
    tensor([[ 0.7071],
            [-0.7071]])
    """
    if adv is None and rewards is None:
        raise ValueError("grpo needs rewards (outcome supervision) or adv (process supervision)")
    if (logp_old is None) != (clip_eps is None):
        raise ValueError("the clipped GRPO coefficient needs logp_old and clip_eps together")
    beta = _checks.scalar(beta, "beta", low=0.0)
    eps = _checks.scalar(eps, "eps", low=0.0)
    parts = ("grpo" if adv is None else "process", "vanilla", "k3")
    comp = _composition(*parts)
    hp = comp.settings if adv is not None or eps == 1e-6 else type(comp.settings)(adv_eps=eps)
    mask = _mask(mask)
    if adv is not None:
        _checks.groups(mask.shape[0], group_size)
    cfg = SimpleNamespace(beta=beta, clip_eps=0.2 if clip_eps is None else clip_eps)
    step = step_from_tensors(logp, mask, cfg, logp_ref=logp_ref, logp_old=logp_old, scores=rewards, adv=adv,
                             group_size=group_size, hp=hp)
    return comp.coefficient(step)
