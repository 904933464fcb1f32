"""Which KL does each estimator's gradient follow? Exact expectations on a tiny vocabulary.

A KL penalty estimated from samples o ~ pi adds a GC term (kl/gc.py). Its expected
gradient E_{o ~ pi}[GC(o) grad log pi(o)] is computed here exactly, by enumerating every o (no
sampling), and compared with the exact gradients of KL(pi || pi_ref) (reverse) and KL(pi_ref || pi)
(forward). Two worlds: one token from a categorical pi = softmax(z), and responses of two tokens
from a tiny autoregressive pi (every one of V^2 responses enumerated), where a per-token penalty only
sees each next-token distribution with its prefix held fixed. References: J. Schulman,
"Approximating KL divergence" (http://joschu.net/blog/kl-approx.html); TRL's GRPOConfig
`use_bias_correction_kl` (the k3 penalty times the ratio pi / pi_old, after DeepSeek-V3.2).
"""

import itertools

import torch

from .gc import kl_in_reward, kl_penalty

# how each estimator is used -> its GC term on (B, T) tensors (beta = 1); old: log pi_old, the sampler
USES = {
    "k1 as a loss": lambda lp, ref, m, old: kl_penalty(lp, ref, m, 1.0, "k1"),
    "k2 as a loss": lambda lp, ref, m, old: kl_penalty(lp, ref, m, 1.0, "k2"),
    "k3 as a loss (GRPO, eq 21)": lambda lp, ref, m, old: kl_penalty(lp, ref, m, 1.0, "k3"),
    "k3 x ratio as a loss (TRL use_bias_correction_kl)":
        lambda lp, ref, m, old: kl_penalty(lp, ref, m, 1.0, "k3-ratio", logp_old=old),
    "k1 in the reward (REINFORCE++, PPO)": lambda lp, ref, m, old: kl_in_reward(old, ref, m, 1.0),
}


def _grad(value, params):
    return torch.cat([g.flatten() for g in torch.autograd.grad(value, params, retain_graph=True)])


def _kls(logp, logp_ref):
    """(reverse, forward) KL between two fully enumerated distributions given by log-probs (N,)."""
    p, q = logp.exp(), logp_ref.exp()
    return (p * (logp - logp_ref)).sum(), (q * (logp_ref - logp)).sum()


def _expected(tok_logp, tok_ref, seq_logp, params, tok_old=None, seq_old=None):
    """Per use: E_{o ~ pi_old}[(1/|o|) sum_t GC_t grad log pi(o_t | o_<t)], each o weighted by pi_old(o).

    Without tok_old / seq_old the samples come from pi itself (pi_old = pi, one update per batch).
    """
    mask = torch.ones_like(tok_logp)  # (N, T) every enumerated response has all T tokens
    tok_old = tok_logp.detach() if tok_old is None else tok_old
    seq_old = seq_logp.detach() if seq_old is None else seq_old
    weight = seq_old.exp()[:, None] / tok_logp.shape[1]  # (N, 1): pi_old(o) / |o|
    return {name: _grad((weight * gc(tok_logp.detach(), tok_ref, mask, tok_old) * tok_logp).sum(), params)
            for name, gc in USES.items()}


def one_token(logits, logits_ref, logits_old=None):
    """Exact expected GC gradients and -grad of both KLs for one token, pi = softmax(logits). (V,) each.

    logits_old: the sampler pi_old when it is not pi (a second update on the same batch).
    """
    z = logits.detach().double().clone().requires_grad_(True)
    logp, logp_ref = z.log_softmax(-1), logits_ref.detach().double().log_softmax(-1)  # (V,)
    reverse, forward = _kls(logp, logp_ref)
    out = {"-grad KL(pi || pi_ref)": -_grad(reverse, [z]), "-grad KL(pi_ref || pi)": -_grad(forward, [z])}
    old = None if logits_old is None else logits_old.detach().double().log_softmax(-1)  # (V,)
    out.update(_expected(logp[:, None], logp_ref[:, None], logp, [z],
                         None if old is None else old[:, None], old))
    return out, {"KL(pi || pi_ref)": reverse.item(), "KL(pi_ref || pi)": forward.item()}


def two_tokens(first, second, first_ref, second_ref):
    """The same for responses (o_1, o_2): pi(o) = softmax(first)[o_1] softmax(second[o_1])[o_2].

    first: (V,) logits of o_1; second: (V, V) logits of o_2 given o_1. Also returns -grad of the
    per-context KLs, sum_t E_{o_<t ~ pi, held fixed}[KL_t], which a per-token penalty follows.
    """
    a = first.detach().double().clone().requires_grad_(True)
    b = second.detach().double().clone().requires_grad_(True)
    V = a.shape[0]
    pairs = torch.tensor(list(itertools.product(range(V), repeat=2)))  # (V^2, 2) every response
    l1, l2 = a.log_softmax(-1), b.log_softmax(-1)  # (V,), (V, V)
    r1, r2 = first_ref.double().log_softmax(-1), second_ref.double().log_softmax(-1)
    tok = torch.stack([l1[pairs[:, 0]], l2[pairs[:, 0], pairs[:, 1]]], 1)  # (V^2, 2) log pi(o_t | o_<t)
    tok_ref = torch.stack([r1[pairs[:, 0]], r2[pairs[:, 0], pairs[:, 1]]], 1)
    seq, seq_ref = tok.sum(-1), tok_ref.sum(-1)  # (V^2,) log pi(o)
    reverse, forward = _kls(seq, seq_ref)
    # per-context KLs with the prefix distribution detached: what a per-token penalty can see
    ctx_rev = _kls(l1, r1)[0] + (l1.detach().exp() * (l2.exp() * (l2 - r2)).sum(-1)).sum()
    ctx_fwd = _kls(l1, r1)[1] + (l1.detach().exp() * (r2.exp() * (r2 - l2)).sum(-1)).sum()
    params = [a, b]
    n = tok.shape[1]  # eq 5 averages the per-token terms over |o| = 2; so do the KLs compared
    out = {"-grad KL(pi || pi_ref)": -_grad(reverse, params) / n, "-grad KL(pi_ref || pi)": -_grad(forward, params) / n,
           "-grad per-context KL(pi || pi_ref)": -_grad(ctx_rev, params) / n,
           "-grad per-context KL(pi_ref || pi)": -_grad(ctx_fwd, params) / n}
    out.update(_expected(tok, tok_ref, seq, params))
    return out, {"KL(pi || pi_ref)": reverse.item(), "KL(pi_ref || pi)": forward.item()}


def match_table(grads):
    """For each use: max |expected GC gradient - target| against 0 and every -grad KL in `grads`."""
    targets = {"zero": None, **{k: v for k, v in grads.items() if k.startswith("-grad")}}
    table = {}
    for use in USES:
        g = grads[use]
        table[use] = {t: (g if v is None else g - v).abs().max().item() for t, v in targets.items()}
    return table


def random_case(V=5, seed=0, scale=1.0):
    """Random logits for pi and pi_ref: (first, second, first_ref, second_ref), float64."""
    gen = torch.Generator().manual_seed(seed)
    draw = lambda *shape: scale * torch.randn(*shape, generator=gen, dtype=torch.float64)  # noqa: E731
    return draw(V), draw(V, V), draw(V), draw(V, V)
