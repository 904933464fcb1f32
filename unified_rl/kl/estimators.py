"""Per-token estimators of KL(pi_theta || pi_ref) from samples of pi_theta.

With log-ratio x = logp_ref - logp (so pi_ref/pi = e^x):
    k1 = -x                 unbiased, high variance, can be negative
    k2 = x^2 / 2            biased, low variance
    k3 = (e^x - 1) - x      unbiased, low variance, always >= 0: GRPO's penalty (eq 19)
Reference: http://joschu.net/blog/kl-approx.html ; DeepSeekMath eq 4.
"""

import torch

from .. import _checks


def _log_ratio(logp, logp_ref):
    logp = _checks.finite(_checks.as_tensor(logp, "logp"), "logp")
    logp_ref = _checks.finite(_checks.as_tensor(logp_ref, "logp_ref"), "logp_ref")
    if logp.shape != logp_ref.shape:
        raise ValueError(f"logp has shape {tuple(logp.shape)} but logp_ref has shape {tuple(logp_ref.shape)}")
    return logp_ref - logp  # log(pi_ref / pi)


def k1(logp, logp_ref):
    """k1 = log(pi / pi_ref) per token."""
    return -_log_ratio(logp, logp_ref)


def k2(logp, logp_ref):
    """k2 = (log(pi / pi_ref))^2 / 2 per token."""
    return 0.5 * _log_ratio(logp, logp_ref) ** 2


def k3(logp, logp_ref):
    """k3 = pi_ref/pi - log(pi_ref/pi) - 1 per token (eq 19's penalty)."""
    x = _log_ratio(logp, logp_ref)
    return torch.expm1(x) - x  # expm1 keeps it exact near x = 0
