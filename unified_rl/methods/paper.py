"""The six methods of DeepSeekMath A.1 as Method values: data source, reward, coefficient, objective.

| method     | data source            | reward          | GC                                      |
|------------|------------------------|-----------------|-----------------------------------------|
| sft        | FixedDataset           | human selection | 1                                  eq 7 |
| rft        | FrozenPolicySamples    | rule            | I(o)                               eq 10|
| online-rft | PolicySamples          | rule            | I(o)                               eq 11|
| dpo        | PreferencePairs        | rule (pairs)    | +-beta sigma(beta x- - beta x+)    eq 14|
|            |                        |                 | (or TRL's other loss types: DPOConfig)  |
| ppo        | PolicySamples          | rule + KL       | A_t from GAE with a value model    eq 18|
| grpo       | PolicySamples          | rule            | A-hat + beta (pi_ref/pi - 1)       eq 21|
|            |                        |                 | (GRPOConfig: TRL's and verl's options)  |
| grpo-process | PolicySamples        | per-step rule   | process A-hat + KL term (§4.1.3)        |

No method is a branch in the trainer: each is a `paradigm.Method` value in `methods.METHODS`. Each carries
its own objective J (from `objectives`, never from its coefficient), so `verify.model_oracle` can
prove that the coefficient the trainer calls is J's. Adding a method: docs/ARCHITECTURE.md.
"""

from dataclasses import dataclass, field

import torch

from .. import coefficients as C, distributed, objectives as O
from ..coefficients.dpo_losses import LOSS_TYPES, NORMS, check_settings
from ..advantages import gae, group_relative_process
from ..data import FixedDataset, FrozenPolicySamples, PolicySamples, PreferencePairs, pairs
from ..kl import k1
from ..models import ValueModel
from ..paradigm import Method
from ..rewards import RuleReward, process_rewards
from .options import GRPOConfig, gc_options_of, options_of

rule = RuleReward()


def _clip_args(step):
    """Off-policy updates (epochs > 1) use the exact clipped coefficient; on-policy it equals A."""
    return dict(logp_old=step.logp_old, clip_eps=step.cfg.clip_eps)


def sft_gc(step):
    return C.sft(step.batch.mask)


def sft_objective(step):
    return O.sft(step.logp, step.batch.mask)


def rft_gc(step):
    return C.rft(step.scores, step.batch.mask)


def rft_objective(step):
    return O.rft(step.logp, step.scores, step.batch.mask)


def online_rft_objective(step):
    return O.online_rft(step.logp, step.scores, step.batch.mask)


@dataclass(frozen=True)
class DPOConfig:
    """DPO's loss, as TRL's DPOConfig names it (each loss type's GC: coefficients/dpo_losses.py)."""

    dpo_loss: str = field(default="sigmoid", metadata={"choices": LOSS_TYPES})
    """TRL's loss_type: sigmoid is eq 12's log sigmoid; the others replace it (notebook 11's map)"""
    dpo_norm: str = field(default="mean", metadata={"choices": NORMS})
    """mean: per-token mean log-ratios, as eq 12 prints them (TRL's sigmoid_norm and ipo); sum: their
    sums over the response, as the DPO paper and TRL's other loss types take them (a longer response
    gets a GC |o| times larger). sigmoid_norm is always "mean", as in TRL"""
    dpo_label_smoothing: float = 1e-3
    """eps of robust (the probability a label is flipped), exo_pair (its target (1 - eps, eps)) and
    aot: TRL's label_smoothing. 1e-3 is EXO's value; TRL's default 0 is refused by exo_pair and makes
    robust and aot the plain sigmoid loss"""
    dpo_discopop_tau: float = 0.05
    """tau of discopop: the temperature of its blend of the logistic and exponential losses"""

    def __post_init__(self):
        check_settings(self.dpo_loss, self.dpo_norm, 1.0, self.dpo_label_smoothing, self.dpo_discopop_tau)


def _dpo_args(step):
    (lc, lr), (rc, rr), (mc, mr) = pairs(step.logp), pairs(step.logp_ref), pairs(step.batch.mask)
    return lc, rc, mc, lr, rr, mr


def _loss_settings(step):
    hp = step.hp
    return dict(norm=hp.dpo_norm, label_smoothing=hp.dpo_label_smoothing, discopop_tau=hp.dpo_discopop_tau)


def _eq12(hp):
    """Whether the run's loss is eq 12 as printed, the log sigmoid of mean log-ratios (TRL's sigmoid_norm);
    so is a Step given no settings (paradigm.step_from_tensors)."""
    return hp is None or hp.dpo_loss == "sigmoid_norm" or (hp.dpo_loss, hp.dpo_norm) == ("sigmoid", "mean")


def _trl_loss_gc(step):
    """The GC of another of TRL's loss types, or of sums in place of eq 12's means (notebook 11's map)."""
    cc, cr = C.dpo_loss(step.hp.dpo_loss, *_dpo_args(step), step.cfg.dpo_beta, **_loss_settings(step))
    return torch.cat([cc, cr]) * 2  # (2B, T): the x2 of dpo_gc


def dpo_gc(step):
    if not _eq12(step.hp):  # DPOConfig picked another loss: coefficients/dpo_losses.py
        if step.hp.dpo_loss.startswith("aot") and distributed.split():
            raise ValueError(f"dpo_loss={step.hp.dpo_loss!r} ranks the margins over the whole batch, which a rank "
                             "holding a share of it cannot do: run it in one process (without torchrun)")
        return _trl_loss_gc(step)
    (lc, lr), (rc, rr), (mc, mr) = pairs(step.logp), pairs(step.logp_ref), pairs(step.batch.mask)
    cc, cr = C.dpo(lc, rc, mc, lr, rr, mr, step.cfg.dpo_beta)
    # the surrogate averages over 2B rows, eq 12 over B pairs: x2 keeps the gradient exactly eq 13's
    return 2 * torch.cat([cc, cr])  # (2B, T)


def dpo_objective(step):
    if _eq12(step.hp):
        return O.dpo(*_dpo_args(step), step.cfg.dpo_beta)  # eq 12
    return O.dpo_loss(step.hp.dpo_loss, *_dpo_args(step), step.cfg.dpo_beta, **_loss_settings(step))


def ppo_gc(step):
    return C.ppo(step.adv, step.batch.mask, logp=step.logp, **_clip_args(step))


def ppo_objective(step):
    return O.ppo(step.logp, step.logp_old, step.adv, step.batch.mask, step.cfg.clip_eps)


def grpo_gc(step):
    """Eq 21 with GRPO's settings (methods/options.py): at their defaults exactly `coefficients.grpo`."""
    return C.grpo_options(step.scores, step.batch.group_size, step.logp, step.logp_ref, step.batch.mask,
                          step.cfg.beta, logp_old=step.logp_old, clip_eps=step.cfg.clip_eps, **gc_options_of(step))


def grpo_objective(step):
    return O.grpo_options(step.logp, step.logp_old, step.logp_ref, step.scores, step.batch.group_size,
                          step.batch.mask, step.cfg.beta, step.cfg.clip_eps, **options_of(step))


def grpo_process_gc(step):
    # process supervision hands its own per-token advantages (eq 21 with adv)
    return C.grpo(None, step.batch.group_size, step.logp, step.logp_ref, step.batch.mask,
                  step.cfg.beta, adv=step.adv, **_clip_args(step))


def grpo_process_objective(step):
    return O.grpo(step.logp, step.logp_old, step.logp_ref, None, step.batch.group_size, step.batch.mask,
                  step.cfg.beta, step.cfg.clip_eps, adv=step.adv)


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
        # a token mean over the whole batch: in a distributed run, over every rank's tokens
        return 0.5 * (((self.values(step.batch) - step.targets) ** 2) * m).sum() / distributed.total(m.sum())

    def state_dict(self):
        return self.model.state_dict()

    def load_state_dict(self, state):
        self.model.load_state_dict(state)


def ppo_advantage(lab, batch, scores, logp_ref, critic):
    """GAE on the per-token reward of DeepSeekMath eq 2: r_t = R [t = last] - beta KL_t."""
    m = batch.mask
    last = m.cumsum(-1).argmax(-1)  # (B,) index of each response's last token
    rewards = -lab.preset.rl.beta * k1(batch.logp, logp_ref) * m  # (B, T)
    rewards[torch.arange(len(batch)), last] += scores.to(rewards.dtype)
    with torch.no_grad():
        values = critic.values(batch)
    adv, _ = gae(rewards, values, m, lab.preset.rl.gamma, lab.preset.rl.lam)
    return adv  # the critic's target, the returns A + V, is Critic.targets


def process_advantage(lab, batch, scores, logp_ref, critic):
    """§4.1.3: per-step rewards normalised over the group, summed from each token onward."""
    step_rewards, step_mask = process_rewards(lab.tokenizer, batch)
    return group_relative_process(step_rewards, step_mask, batch.group_size, mask=batch.mask)


_CITE = "DeepSeekMath {}, arXiv 2402.03300"
SFT = Method("sft", FixedDataset, None, sft_gc, objective=sft_objective, section="sft", uses_ref=False,
             init="scratch", paper=_CITE.format("eq 6-7"), summary="imitate human-written solutions")
RFT = Method("rft", FrozenPolicySamples, rule, rft_gc, objective=rft_objective, paper=_CITE.format("eq 8-10"),
             summary="imitate the SFT model's correct samples")
ONLINE_RFT = Method("online-rft", PolicySamples, rule, rft_gc,  # eq 11: the very same GC as eq 10
                    objective=online_rft_objective, paper=_CITE.format("eq 11"),
                    summary="imitate the policy's own correct samples")
DPO = Method("dpo", PreferencePairs, rule, dpo_gc, objective=dpo_objective, hparams=DPOConfig(),
             paper=_CITE.format("eq 12-14") + "; Rafailov et al., arXiv 2305.18290",
             summary="raise correct over incorrect SFT samples, relative to pi_ref",
             # nothing but the saturating sigmoid stops DPO pushing rejected answers down, and its
             # pairs never come from the policy it has become: held-out accuracy from SFT's 0.44
             # peaked at 0.61 (lr 3e-5, step 25) then fell to 0.07 by step 150; at lr 1e-5 it was
             # 0.53 at step 25, 0.51 at 50, 0.12 at 150. Short and gentle is DPO's regime here.
             defaults={"lr": 1e-5, "steps": 30})
PPO = Method("ppo", PolicySamples, rule, ppo_gc, objective=ppo_objective, advantage=ppo_advantage,
             extra_loss=Critic, off_policy=True,
             paper=_CITE.format("eq 15-18 (eq 2's KL reward)") + "; GAE: arXiv 1506.02438",
             summary="policy gradient with GAE advantages from a learned value model")
GRPO = Method("grpo", PolicySamples, rule, grpo_gc, objective=grpo_objective, off_policy=True,
              hparams=GRPOConfig(), paper=_CITE.format("eq 19-21"),
              summary="policy gradient with group-relative advantages and a k3 KL penalty")
GRPO_PROCESS = Method("grpo-process", PolicySamples, rule, grpo_process_gc, objective=grpo_process_objective,
                      advantage=process_advantage, off_policy=True,
                      paper=_CITE.format("§4.1.3 with eq 19-21"),
                      summary="GRPO with per-step (process) rewards")

DEEPSEEKMATH = (SFT, RFT, ONLINE_RFT, DPO, PPO, GRPO, GRPO_PROCESS)
