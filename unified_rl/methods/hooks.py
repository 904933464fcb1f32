"""What a composition needs from the lab once per batch: PPO's value model and GAE, process supervision.

An advantage part marked `per_batch` (parts/advantages/per_batch.py) is computed here, before the batch's updates,
into `Step.adv`: GAE needs a learned value model (its loss is the run's extra loss), process supervision the
tokenizer to find each step's end. Both read the run through `lab` and never a process group: a distributed run's
reductions reach the critic's loss through `step.across`.
"""

import torch

from .. import advantages
from ..models import ValueModel
from ..parts import KL_TERMS
from ..rewards import process_rewards


class Critic:
    """PPO's value model V_psi (a copy of the policy's trunk with a scalar head) and its loss."""

    metric = "value_loss"

    def __init__(self, lab):
        dtype = next(lab.policy.parameters()).dtype  # the policy's precision (float64 in the oracle)
        self.model = ValueModel.from_policy(lab.policy).to(lab.device, dtype)
        self.lr = lab.preset.rl.value_lr

    def parameters(self):
        return self.model.parameters()

    def values(self, batch):
        """(B, T): V of the state before each target token."""
        return self.model(batch.input_ids, batch.attention_mask)[:, :-1]

    def targets(self, lab, batch, scores, logp_ref, adv):
        """The regression target: GAE's returns A + V, with V as it was before this batch's updates."""
        with torch.no_grad():
            return (adv + self.values(batch)) * batch.mask  # (B, T)

    def loss(self, step):
        m = step.batch.mask
        n = m.sum()
        n = n if getattr(step, "across", None) is None else step.across.sum(n)  # every rank's tokens
        return 0.5 * (((self.values(step.batch) - step.targets) ** 2) * m).sum() / n

    def state_dict(self):
        return self.model.state_dict()

    def load_state_dict(self, state):
        self.model.load_state_dict(state)


def gae_hook(kl=None):
    """GAE on the per-token reward of DeepSeekMath eq 2: r_t = R [t = last] - beta k_t, k the KL term's estimate of
    the sampler's tokens (none without a KL in the reward)."""
    estimate = None if kl is None else KL_TERMS.get(kl).extra["reward"]

    def gae_advantage(lab, batch, scores, logp_ref, critic):
        m = batch.mask
        last = m.cumsum(-1).argmax(-1)  # (B,) index of each response's last token
        if estimate is None:
            rewards = torch.zeros_like(m)
        else:
            from ..parts.view import View  # the estimate reads the sampler's and pi_ref's log-probs
            v = View(mask=m, full=m, logp=batch.logp, logp_old=batch.logp, logp_ref=logp_ref, scores=scores,
                     group_size=batch.group_size, hp=None, cfg=lab.preset.rl, sampler_logp=batch.logp)
            rewards = -lab.preset.rl.beta * estimate(v)  # (B, T)
        rewards[torch.arange(len(batch)), last] += scores.to(rewards.dtype)
        with torch.no_grad():
            values = critic.values(batch)
        adv, _ = advantages.gae(rewards, values, m, lab.preset.rl.gamma, lab.preset.rl.lam)
        return adv  # the critic's target, the returns A + V, is Critic.targets
    return gae_advantage


def process_advantage(lab, batch, scores, logp_ref, critic):
    """§4.1.3: per-step rewards normalised over the group, summed from each token onward."""
    step_rewards, step_mask = process_rewards(lab.tokenizer, batch)
    return advantages.group_relative_process(step_rewards, step_mask, batch.group_size, mask=batch.mask)
