"""Helpers for notebook 06 (GRPO, DeepSeekMath eq 19-21, §4.1.2-4.1.3): measurements, not methods.

- `zero_signal_exact` / `zero_signal_sampled`: how often a group of G samples carries no signal
  (all right or all wrong, so every A-hat is 0), computed two independent ways.
- `GroupSignal`: wraps a reward to record that fraction at every training step.
- `memory_table`: what PPO's value model costs in parameters and optimizer state, and GRPO saves.
- `response_view` / `plot_advantages`: per-token advantages of one group, outcome vs process.
- `expected_update` / `score_mean`: the baseline lemma E_{o~pi}[grad log pi(o)] = 0, checked exactly
  on a small categorical policy (every group enumerated) and by sampling on the lab's transformer.

Every advantage here comes from `unified_rl.advantages`; nothing re-implements the package.
"""

import dataclasses
import itertools
import math

import matplotlib.pyplot as plt
import torch

from unified_rl import advantages
from unified_rl.course.i18n import t
from unified_rl.course.plots import draw_coefficients
from unified_rl.models import ValueModel
from unified_rl.sampling import sample, token_logp


def zero_signal_exact(correct, group_size):
    """Expected fraction of groups with no signal, by counting: (all right, all wrong).

    correct: (Q, n) 0/1, n samples per question. A group is G of a question's n samples drawn
    without replacement; with c right, P(all right) = C(c, G) / C(n, G) (hypergeometric).
    """
    correct = torch.as_tensor(correct)
    Q, n = correct.shape
    if not 1 <= group_size <= n:
        raise ValueError(f"group_size must be in [1, {n}], got {group_size}")
    total = math.comb(n, group_size)
    c = correct.sum(1).long().tolist()
    right = sum(math.comb(k, group_size) for k in c) / (total * Q)
    wrong = sum(math.comb(n - k, group_size) for k in c) / (total * Q)
    return right, wrong


def zero_signal_sampled(correct, group_size, draws=200, seed=0):
    """The same fractions measured: random groups, scored by `advantages.group_relative`.

    A group has no signal when every advantage in it is 0. Returns (all right, all wrong).
    """
    correct = torch.as_tensor(correct, dtype=torch.float32)
    Q, n = correct.shape
    gen = torch.Generator().manual_seed(seed)
    right = wrong = 0
    for _ in range(draws):
        pick = torch.rand(Q, n, generator=gen).argsort(1)[:, :group_size]  # G of n, no replacement
        r = correct.gather(1, pick)  # (Q, G)
        adv = advantages.group_relative(r.reshape(-1), group_size).view(Q, group_size)
        silent = (adv == 0).all(1)  # (Q,)
        right += (silent & (r[:, 0] == 1)).sum().item()
        wrong += (silent & (r[:, 0] == 0)).sum().item()
    return right / (draws * Q), wrong / (draws * Q)


class GroupSignal:
    """A reward that scores with `base` and records, per call, the fraction of zero-signal groups."""

    def __init__(self, base):
        self.base = base
        self.history = []

    def __call__(self, rollout):
        scores = self.base(rollout)  # (B,)
        G = rollout.group_size
        adv = advantages.group_relative(scores.float().cpu(), G).view(-1, G)
        self.history.append((adv == 0).all(1).float().mean().item())
        return scores


def with_group_signal(method):
    """(the method with its reward wrapped in a GroupSignal, the recorder)."""
    rec = GroupSignal(method.reward)
    return dataclasses.replace(method, reward=rec), rec


def add_history(metrics, name, history):
    """Copy a per-step history into the trainer's per-step metric dicts under `name`."""
    if len(history) != len(metrics):
        raise ValueError(f"{len(history)} recorded values for {len(metrics)} steps")
    for row, v in zip(metrics, history):
        row[name] = v
    return metrics


def _count(module):
    return sum(p.numel() for p in module.parameters())


def memory_table(policy):
    """Rows (model, parameters, PPO floats, GRPO floats) of the models each method keeps in memory.

    A trained model holds its weights, their gradients and AdamW's two moments: 4 floats per
    parameter; a frozen model holds its weights only. Activations are extra and grow with batch.
    """
    n_policy = _count(policy)
    n_value = _count(ValueModel.from_policy(policy))
    rows = [(t("nb.grpo.policy"), n_policy, 4 * n_policy, 4 * n_policy),
            (t("nb.grpo.reference"), n_policy, n_policy, n_policy),
            (t("nb.grpo.value"), n_value, 4 * n_value, 0)]
    total = (t("nb.grpo.total"), n_policy * 2 + n_value, sum(r[2] for r in rows), sum(r[3] for r in rows))
    return rows + [total]


def response_view(rollout):
    """(first, last) columns of the (B, T) per-token tensors that hold any response token."""
    cols = rollout.mask.bool().any(0).nonzero().flatten()
    return int(cols[0]), int(cols[-1]) + 1


def response_chars(tokenizer, rollout, row):
    """The response tokens of one row as strings, in the order of its mask's 1s."""
    lo, hi = response_view(rollout)
    ids = rollout.input_ids[row, 1:][lo:hi][rollout.mask[row, lo:hi].bool()]  # targets on the mask
    return [tokenizer.decode([i]) or "<eos>" for i in ids.tolist()]


def plot_advantages(tokenizer, rollout, panels, rows=None):
    """Heatmaps of per-token advantages, one panel per {title: (B, T) tensor}, responses as labels."""
    rows = list(range(len(rollout))) if rows is None else list(rows)
    lo, hi = response_view(rollout)
    vmax = max(float(v[rows, lo:hi].abs().max()) for v in panels.values()) or 1.0
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 0.32 * len(rows) + 1.4),
                             sharey=True, squeeze=False)
    for ax, (title, v) in zip(axes[0], panels.items()):
        im = draw_coefficients(ax, v[rows, lo:hi], rollout.mask[rows, lo:hi], title, vmax=vmax)
        ax.set(xlabel=t("nb.grpo.response_token"), ylabel="")
    labels = [rollout.texts[i] for i in rows]
    axes[0, 0].set_yticks(range(len(rows)), labels, fontsize=7, family="monospace")
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8)
    return fig


def expected_update(logits, rewards, group_size, advantage=None):
    """E over every group of G i.i.d. draws from softmax(logits) of (1/G) sum_i A_i grad_logits log pi(o_i).

    Exact: all V^G groups are enumerated. rewards: (V,) the reward of each answer. advantage(r, G)
    turns a group's rewards into A (e.g. `advantages.group_centred`); None uses the raw reward
    (REINFORCE), whose expectation is the true gradient of E[r]. Returns (V,).
    """
    z = torch.as_tensor(logits, dtype=torch.float64).detach().requires_grad_()
    r = torch.as_tensor(rewards, dtype=torch.float64)
    V, G = len(z), group_size
    if r.shape != (V,) or G < 1 or V ** G > 200_000:
        raise ValueError(f"need one reward per answer and V^G <= 200000 groups, got {tuple(r.shape)}, V={V}, G={G}")
    logp = z.log_softmax(-1)  # (V,)
    p = logp.detach().exp()
    groups = torch.tensor(list(itertools.product(range(V), repeat=G)))  # (V^G, G): every group
    weight = p[groups].prod(-1)  # (V^G,) probability of each group
    rg = r[groups]  # (V^G, G)
    adv = rg if advantage is None else advantage(rg.reshape(-1), G).view(-1, G).double()
    surrogate = (weight[:, None] * adv * logp[groups]).sum() / G  # weights and A held fixed
    return torch.autograd.grad(surrogate, z)[0]


def score_mean(policy, tokenizer, problem, n=256, singles=8, seed=0):
    """Sample n answers to one question from the policy (temperature 1) and return
    (|| mean_i grad_theta log pi(o_i) ||, mean of || grad_theta log pi(o_i) || over `singles` answers).

    E_{o~pi}[grad log pi(o)] = 0, so the first shrinks like 1/sqrt(n) while each term stays large.
    """
    torch.manual_seed(seed)
    r = sample(policy, tokenizer, [problem], group_size=n, temperature=1.0)
    params = [q for q in policy.parameters() if q.requires_grad]

    def grad_norm(rows):
        seq = (token_logp(policy, r.input_ids[rows], r.attention_mask[rows]) * r.mask[rows]).sum(-1)  # (b,)
        g = torch.autograd.grad(seq.mean(), params)
        return torch.cat([x.flatten() for x in g]).norm().item()

    mean_norm = grad_norm(slice(None))
    single = sum(grad_norm(slice(i, i + 1)) for i in range(singles)) / singles
    return mean_norm, single
