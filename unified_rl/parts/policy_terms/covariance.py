"""Clip-Cov and KL-Cov (verl's `clip_cov`, `kl_cov`): the tokens whose advantage and log-prob covary most.

    cov_{i,t} = (A_{i,t} - mean A)(log pi_{i,t} - mean log pi)      (means over the batch's tokens)

Clip-Cov: PPO's clipped term, with max(1, int(ratio N)) tokens drawn at random among the unclipped ones whose
covariance lies in (lb, ub) detached (GC 0 there). KL-Cov: r A with no clip, minus coef |log r| on the
max(1, int(ratio N)) tokens of largest covariance (GC r A - coef sign(log r) there). These are the tokens that
drive the policy's entropy down. Cui et al., arXiv 2505.22617, §4.

Clip-Cov's draw is repeatable from the batch: a generator seeded by the sha256 of its rewards and response lengths
(every rank's, in one process's order), so its coefficient and its objective draw the same tokens.
"""

import hashlib
from dataclasses import dataclass

import sympy as sp
import torch

from ... import _checks
from ...derivations.core import Derivation, EPS_HIGH, EPS_LOW, _asym_cases, _asym_clipped, _one, _ragged_gc, clip
from ...text import Text
from ..registry import POLICY_TERMS
from .vanilla import clip_range, clipped


@dataclass(frozen=True)
class ClipCovSettings:
    """Clip-Cov's choice of tokens (verl's defaults). Its clip range is RLConfig.clip_eps."""

    clip_cov_ratio: float = 2e-4
    """the share of the batch's tokens detached (at least 1)"""
    clip_cov_lb: float = 1.0
    """lower bound of the covariance of a token that may be detached"""
    clip_cov_ub: float = 5.0
    """upper bound of that covariance"""


@dataclass(frozen=True)
class KLCovSettings:
    """KL-Cov's choice of tokens and penalty (verl's defaults)."""

    kl_cov_ratio: float = 2e-4
    """the share of the batch's tokens penalised (at least 1)"""
    kl_cov_coef: float = 1.0
    """the weight of |log r| on them (verl's ppo_kl_coef)"""


def _global(values, across):
    """(the batch's values in one process's order, this rank's offset in them)."""
    return (values, 0) if across is None else across.gather(values)


def covariance(adv, logp, mask, across=None):
    """(B, T) (A - mean A)(log pi - mean log pi) per token, means over the batch's masked tokens."""
    on = mask.bool()
    lp = logp.detach()
    sums = torch.stack([adv[on].sum(), lp[on].sum(), on.sum().to(adv.dtype)])
    if across is not None:
        sums = across.sum(sums)
    return (adv - sums[0] / sums[2]) * (lp - sums[1] / sums[2])


def draw_seed(*tensors):
    """A seed read from tensors' float64 bytes (the first 8 of their sha256)."""
    h = hashlib.sha256()
    for x in tensors:
        h.update(x.detach().double().cpu().contiguous().numpy().tobytes())
    return int.from_bytes(h.digest()[:8], "little") % (2 ** 63)


def batch_seed(v):
    """Clip-Cov's seed from the batch's rewards and response lengths (every rank's)."""
    scores, lengths = torch.as_tensor(v.scores).double(), v.full.sum(-1).double()
    if v.across is not None:
        (scores, _), (lengths, _) = v.across.gather(scores), v.across.gather(lengths)
    return draw_seed(scores, lengths)


def _chosen(picked_global, start, mask):
    """(B, T) 1 on this rank's tokens among `picked_global`, indices into the batch's masked tokens."""
    valid = mask.bool().flatten().nonzero().flatten()
    local = picked_global[(picked_global >= start) & (picked_global < start + len(valid))] - start
    out = torch.zeros(mask.numel(), dtype=mask.dtype, device=mask.device)
    out[valid[local.to(valid.device)]] = 1
    return out.view_as(mask)


def clip_cov_tokens(adv, logp, logp_old, mask, low, high, ratio=2e-4, lb=1.0, ub=5.0, seed=0, across=None):
    """(B, T) 1 on the tokens Clip-Cov detaches: a torch.randperm (seeded) of the candidates, row-major."""
    on = mask.bool()
    cov = covariance(adv, logp, mask, across)
    r = torch.exp(logp.detach() - logp_old)
    binds = (-adv * r.clamp(1 - low, 1 + high)) > (-adv * r)  # where PPO's clip binds
    flags, start = _global(((cov > lb) & (cov < ub) & ~binds)[on].double(), across)
    candidates = flags.nonzero().flatten()
    n = max(int(ratio * len(flags)), 1)
    g = torch.Generator().manual_seed(seed)
    picked = candidates[torch.randperm(len(candidates), generator=g)[:n].to(candidates.device)]
    return _chosen(picked, start, mask)


def kl_cov_tokens(adv, logp, mask, ratio=2e-4, across=None):
    """(B, T) 1 on the max(1, int(ratio N)) tokens of largest covariance; among equal covariances (a group whose
    answers all score the same) the batch's first tokens, row-major (topk leaves ties to the kernel)."""
    values, start = _global(covariance(adv, logp, mask, across)[mask.bool()], across)
    n = max(int(ratio * len(values)), 1)
    return _chosen(torch.sort(values, descending=True, stable=True).indices[:n], start, mask)


def _clip_cov_gc(v, adv, keep):
    low, high = clip_range(v.cfg.clip_eps)
    cut = clip_cov_tokens(adv, v.logp, v.logp_old, v.mask, low, high, v.setting("clip_cov_ratio"),
                          v.setting("clip_cov_lb"), v.setting("clip_cov_ub"), batch_seed(v), v.across)
    return clipped(adv, v.ratio("token"), v.mask, low, high, None, keep) * (1 - cut)


def _covariance_objective(adv, logp, mask):
    on = mask.bool()
    n = on.sum().to(adv.dtype)
    return (adv - adv[on].sum() / n) * (logp.detach() - logp.detach()[on].sum() / n)


def _written_seed(v):
    """The draw's seed as the objective's side writes it: sha256 of the rewards', then the lengths' float64 bytes."""
    h = hashlib.sha256(torch.as_tensor(v.scores).double().cpu().contiguous().numpy().tobytes())
    h.update(v.full.sum(-1).double().cpu().contiguous().numpy().tobytes())
    return int.from_bytes(h.digest()[:8], "little") % (2 ** 63)


def clip_cov_objective(v, adv):
    """corr min(r A, clip(r) A), corr = 0 on the drawn tokens of covariance in (lb, ub)."""
    eps = v.cfg.clip_eps
    r = torch.exp(v.logp - v.logp_old)
    plain, clip = r * adv, torch.clamp(r, 1 - eps, 1 + eps) * adv
    cov = _covariance_objective(adv, v.logp, v.mask)
    lb, ub = v.setting("clip_cov_lb"), v.setting("clip_cov_ub")
    candidates = ((cov > lb) & (cov < ub) & v.mask.bool() & ~(clip.detach() < plain.detach())).flatten().nonzero().flatten()
    g = torch.Generator().manual_seed(_written_seed(v))
    n = max(int(v.setting("clip_cov_ratio") * v.mask.sum().item()), 1)
    corr = torch.ones(v.mask.numel(), dtype=v.mask.dtype)
    corr[candidates[torch.randperm(len(candidates), generator=g)[:n]]] = 0
    return corr.view_as(v.mask) * torch.min(plain, clip)


def _kl_cov_gc(v, adv, keep):
    coef = _checks.scalar(v.setting("kl_cov_coef"), "coef", low=0.0)
    lr = v.log_ratio()
    chosen = kl_cov_tokens(adv, v.logp, v.mask, v.setting("kl_cov_ratio"), v.across)
    return (torch.exp(lr) * adv - coef * chosen * torch.sign(lr)) * keep


def kl_cov_objective(v, adv):
    """r A - coef |log r| on the tokens of largest covariance, no clip."""
    cov = _covariance_objective(adv, v.logp, v.mask).masked_fill(~v.mask.bool(), -torch.inf)
    n = max(int(v.setting("kl_cov_ratio") * v.mask.sum().item()), 1)
    top = torch.zeros(v.mask.numel(), dtype=v.mask.dtype)
    top[torch.sort(cov.flatten(), descending=True, stable=True).indices[:n]] = 1  # ties: the first tokens
    return torch.exp(v.logp - v.logp_old) * adv - v.setting("kl_cov_coef") * top.view_as(v.mask) * (v.logp - v.logp_old).abs()


# the derivations: the chosen tokens are numbers c_t, s_t in {0, 1} fixed before the update

KAPPA = sp.Symbol("kappa", positive=True)


def derive_clip_cov(n):
    """One response: c_t times PPO's clipped term, c = 0 on the detached tokens."""
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    corr = tuple(sp.Symbol(f"c_{t + 1}", nonnegative=True) for t in range(n))  # 0 on the detached tokens, else 1
    r = [sp.exp(x - y) for x, y in zip(l, lo)]
    J = sum(ci * sp.Min(ri * A, clip(ri, 1 - EPS_LOW, 1 + EPS_HIGH) * A) for ci, ri in zip(corr, r)) / n
    hand = tuple(ci * _asym_clipped(ri, A) for ci, ri in zip(corr, r))
    notes = (Text("Clip-Cov multiplies PPO's term of a few tokens by c = 0 (drawn among the unclipped tokens whose "
                  "covariance of A and log pi is in (lb, ub)); c is chosen before the update, so the GC is c times "
                  "PPO's."),)
    symbols = {"adv": (A,), "logp": l, "logp_old": lo, "clip_eps": EPS_LOW, "clip_eps_high": EPS_HIGH, "corr": corr}
    return Derivation("clip_cov", "arXiv 2505.22617, §4", J, _ragged_gc(J, (l,)), hand, None, symbols,
                      cases=_asym_cases(l, lo, (A,)), notes=notes)


def derive_kl_cov(n):
    """One response: r A - kappa s_t |log r| per token, s = 1 on the chosen tokens."""
    l, lo = _one(n, "ell", "ell^old")
    A = sp.Symbol("A", real=True)
    chosen = tuple(sp.Symbol(f"s_{t + 1}", nonnegative=True) for t in range(n))  # 1 on the top-covariance tokens
    J = sum(sp.exp(x - y) * A - KAPPA * s * sp.Abs(x - y) for x, y, s in zip(l, lo, chosen)) / n
    hand = tuple(sp.exp(x - y) * A - KAPPA * s * sp.sign(x - y) for x, y, s in zip(l, lo, chosen))
    notes = (Text("KL-Cov has no clip: the GC is r A, minus kappa sign(log r) on the chosen tokens, which pulls "
                  "their log-ratio back to 0 (and is 0 at pi_old = pi_theta)."),)
    symbols = {"adv": A, "logp": l, "logp_old": lo, "kappa": KAPPA, "chosen": chosen}
    return Derivation("kl_cov", "arXiv 2505.22617, §4", J, _ragged_gc(J, (l,)), hand, None, symbols, notes=notes)


POLICY_TERMS.add("clip_cov", gc=_clip_cov_gc, objective=clip_cov_objective, settings=ClipCovSettings, reads_old=True,
                 summary="PPO's clip, and no gradient on a few tokens of high A-log-prob covariance",
                 cite="Clip-Cov, Cui et al., arXiv 2505.22617 §4", aliases=("clip-cov",), ships_in=("verl",),
                 derivation=derive_clip_cov, derivations={"clip_cov": derive_clip_cov})
POLICY_TERMS.add("kl_cov", gc=_kl_cov_gc, objective=kl_cov_objective, settings=KLCovSettings, reads_old=True,
                 summary="no clip; a |log r| penalty on the tokens of highest A-log-prob covariance",
                 cite="KL-Cov, Cui et al., arXiv 2505.22617 §4", aliases=("kl-cov",), ships_in=("verl",),
                 derivation=derive_kl_cov, derivations={"kl_cov": derive_kl_cov})
