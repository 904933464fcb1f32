"""Watch the log-ratios of fixed preference pairs move while a method trains on others.

DPO's objective (DeepSeekMath eq 12) depends on a pair only through the margin x+ - x-, where
x = (1/|o|) sum_t log(pi_theta / pi_ref) is the length-normalised log-ratio. Nothing in it holds x+
up on its own: both can fall while the margin grows ("likelihood displacement", Razin et al. 2024,
arXiv 2410.08847; Pal et al. 2024, arXiv 2402.13228). To see it, fix a set of pairs before training
and measure x+, x- on them as the policy moves: `probed` wraps a method's data source so that the
shared trainer measures them before each step, without any change to the trainer. Used by the
preference-family experiment and by notebooks 04 and 11 (through `course.nb_dpo`).
"""

import dataclasses
import random

import torch

from .. import coefficients
from ..data import PreferencePairs
from ..methods import get_method
from ..rewards import RuleReward
from ..sampling import token_logp


def fixed_pairs(lab, n_pairs=None, seed=1234):
    """A fixed set of preference pairs from the frozen SFT model (lab.ref), drawn once.

    It uses the data source DPO trains with (`data.PreferencePairs`), with its own stream of
    questions; `trainer.train` reseeds, so drawing these pairs leaves the training batches unchanged.
    Rows: the n chosen responses, then their n rejected partners in the same order.
    """
    source = PreferencePairs(lab, RuleReward())
    source.rng = random.Random(seed)
    if n_pairs is not None:
        source.lab = dataclasses.replace(lab, preset=lab.preset.with_(rl={"prompts_per_step": n_pairs}))
    return source.next_batch()


def _logps(policy, ref, pairs):
    """(logp, logp_ref) of every token of the 2B rows under the policy and pi_ref. (2B, T) each"""
    m = pairs.mask
    logp = token_logp(policy, pairs.input_ids, pairs.attention_mask) * m  # (2B, T)
    logp_ref = token_logp(ref, pairs.input_ids, pairs.attention_mask) * m  # (2B, T)
    return logp, logp_ref


@torch.no_grad()
def pair_summary(policy, ref, pairs, beta, step=None):
    """The numbers the notebook tracks on the fixed pairs, as one dict of floats (means over pairs).

    x_chosen, x_rejected, margin: eq 12's length-normalised log-ratios and their difference;
    logp_chosen, logp_rejected: mean log-prob per token under `policy`; chosen_fell: fraction of
    pairs with x+ < 0 (the chosen answer is now less likely than under pi_ref); ranked: fraction
    with x+ > x- (the implicit reward ranks the pair right); gc: the mean exact coefficient
    c = beta * sigmoid(beta x- - beta x+), from `coefficients.dpo`.
    """
    m = pairs.mask  # (2B, T)
    B = len(pairs) // 2
    logp, logp_ref = _logps(policy, ref, pairs)
    x = ((logp - logp_ref) * m).sum(-1) / m.sum(-1)  # (2B,)
    mean_logp = logp.sum(-1) / m.sum(-1)  # (2B,)
    x_c, x_r = x[:B], x[B:]
    coef_c, _ = coefficients.dpo(logp[:B], logp_ref[:B], m[:B], logp[B:], logp_ref[B:], m[B:], beta)
    c = coef_c.amax(-1)  # (B,): the same c on every chosen token of a pair
    out = {"x_chosen": x_c.mean().item(), "x_rejected": x_r.mean().item(),
           "margin": (x_c - x_r).mean().item(),
           "logp_chosen": mean_logp[:B].mean().item(), "logp_rejected": mean_logp[B:].mean().item(),
           "chosen_fell": (x_c < 0).float().mean().item(), "ranked": (x_c > x_r).float().mean().item(),
           "gc": c.mean().item()}
    return out if step is None else {"step": step, **out}


class _Probe:
    """A data source that measures the fixed pairs with the current policy, then hands over a batch."""

    def __init__(self, inner, lab, pairs, history, every):
        self.inner, self.lab, self.pairs, self.history, self.every = inner, lab, pairs, history, every
        self.calls = 0

    def next_batch(self):
        if self.calls % self.every == 0:  # before step `calls + 1`: the policy after `calls` steps
            beta = self.lab.preset.rl.dpo_beta
            self.history.append(pair_summary(self.lab.policy, self.lab.ref, self.pairs, beta, step=self.calls))
        self.calls += 1
        return self.inner.next_batch()


def probed(method, pairs, every=1):
    """(method', history): the same method, whose data source first appends `pair_summary` of the
    fixed pairs to `history` every `every` steps. Pass method' to `trainer.train` as usual."""
    m = get_method(method)
    history = []
    source = lambda lab: _Probe(m.data_source(lab), lab, pairs, history, every)  # noqa: E731
    return dataclasses.replace(m, data_source=source), history
