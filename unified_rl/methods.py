"""The six methods of DeepSeekMath A.1 as (data source, reward, coefficient) triples.

| method     | data source            | reward          | GC                                      |
|------------|------------------------|-----------------|-----------------------------------------|
| sft        | FixedDataset           | human selection | 1                                  eq 7 |
| rft        | FrozenPolicySamples    | rule            | I(o)                               eq 10|
| online-rft | PolicySamples          | rule            | I(o)                               eq 11|
| dpo        | PreferencePairs        | rule (pairs)    | +-beta sigma(beta x- - beta x+)    eq 14|
| ppo        | PolicySamples          | rule + KL       | A_t from GAE with a value model    eq 18|
| grpo       | PolicySamples          | rule            | A-hat + beta (pi_ref/pi - 1)       eq 21|
| grpo-process | PolicySamples        | per-step rule   | process A-hat + KL term (§4.1.3)        |

No method is a branch in the trainer: each is a `paradigm.Method` value in `METHODS`.
"""

import torch

from . import coefficients as C
from .advantages import gae, group_relative_process
from .data import FixedDataset, FrozenPolicySamples, PolicySamples, PreferencePairs
from .kl import k1
from .models import ValueModel
from .paradigm import Method
from .rewards import RuleReward, process_rewards

rule = RuleReward()


def _clip_args(step):
    """Off-policy updates (epochs > 1) use the exact clipped coefficient; on-policy it equals A."""
    return dict(logp_old=step.logp_old, clip_eps=step.cfg.clip_eps)


def sft_gc(step):
    return C.sft(step.batch.mask)


def rft_gc(step):
    return C.rft(step.scores, step.batch.mask)


def dpo_gc(step):
    B = len(step.batch) // 2  # rows: B chosen, then their B rejected partners
    lp, ref, m = step.logp, step.logp_ref, step.batch.mask
    cc, cr = C.dpo(lp[:B], ref[:B], m[:B], lp[B:], ref[B:], m[B:], step.cfg.dpo_beta)
    # the surrogate averages over 2B rows, eq 12 over B pairs: x2 keeps the gradient exactly eq 13's
    return 2 * torch.cat([cc, cr])  # (2B, T)


def ppo_gc(step):
    return C.ppo(step.adv, step.batch.mask, logp=step.logp, **_clip_args(step))


def grpo_gc(step):
    # process supervision hands its own per-token advantages; outcome supervision the scores
    scores = None if step.adv is not None else step.scores
    return C.grpo(scores, step.batch.group_size, step.logp, step.logp_ref, step.batch.mask,
                  step.cfg.beta, adv=step.adv, **_clip_args(step))


class Critic:
    """PPO's value model V_psi (a copy of the policy's trunk with a scalar head) and its loss."""

    def __init__(self, lab):
        self.model = ValueModel.from_policy(lab.policy).to(lab.device)

    def parameters(self):
        return self.model.parameters()

    def values(self, batch):
        """(B, T): V of the state before each target token."""
        return self.model(batch.input_ids, batch.attention_mask)[:, :-1]

    def loss(self, batch, returns):
        m = batch.mask
        return 0.5 * (((self.values(batch) - returns) ** 2) * m).sum() / m.sum()


def ppo_advantage(lab, batch, scores, logp_ref, critic):
    """GAE on the per-token reward of DeepSeekMath eq 2: r_t = R [t = last] - beta KL_t."""
    m = batch.mask
    last = m.cumsum(-1).argmax(-1)  # (B,) index of each response's last token
    rewards = -lab.preset.rl.beta * k1(batch.logp, logp_ref) * m  # (B, T)
    rewards[torch.arange(len(batch)), last] += scores.to(rewards.dtype)
    with torch.no_grad():
        values = critic.values(batch)
    adv, returns = gae(rewards, values, m, lab.preset.rl.gamma, lab.preset.rl.lam)
    batch.returns = returns  # the critic's regression target, read by the trainer
    return adv


def process_advantage(lab, batch, scores, logp_ref, critic):
    """§4.1.3: per-step rewards normalised over the group, summed from each token onward."""
    step_rewards, step_mask = process_rewards(lab.tokenizer, batch)
    return group_relative_process(step_rewards, step_mask, batch.group_size, mask=batch.mask)


SFT = Method("sft", FixedDataset, None, sft_gc, summary="imitate human-written solutions")
RFT = Method("rft", FrozenPolicySamples, rule, rft_gc, summary="imitate the SFT model's correct samples")
ONLINE_RFT = Method("online-rft", PolicySamples, rule, rft_gc,  # eq 11: the very same GC as eq 10
                    summary="imitate the policy's own correct samples")
DPO = Method("dpo", PreferencePairs, rule, dpo_gc,
             summary="raise correct over incorrect SFT samples, relative to pi_ref",
             # nothing but the saturating sigmoid stops DPO pushing rejected answers down, and its
             # pairs never come from the policy it has become: held-out accuracy from SFT's 0.44
             # peaked at 0.61 (lr 3e-5, step 25) then fell to 0.07 by step 150; at lr 1e-5 it was
             # 0.53 at step 25, 0.51 at 50, 0.12 at 150. Short and gentle is DPO's regime here.
             defaults={"lr": 1e-5, "steps": 30})
PPO = Method("ppo", PolicySamples, rule, ppo_gc, advantage=ppo_advantage, critic=Critic,
             summary="policy gradient with GAE advantages from a learned value model")
GRPO = Method("grpo", PolicySamples, rule, grpo_gc,
              summary="policy gradient with group-relative advantages and a k3 KL penalty")
GRPO_PROCESS = Method("grpo-process", PolicySamples, rule, grpo_gc, advantage=process_advantage,
                      summary="GRPO with per-step (process) rewards")

METHODS = {m.name: m for m in (SFT, RFT, ONLINE_RFT, DPO, PPO, GRPO, GRPO_PROCESS)}


def get_method(name):
    """A method by name (or a Method passed through)."""
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    return METHODS[name]
