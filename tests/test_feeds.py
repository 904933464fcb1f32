"""What feeds a step: which model each data source samples, PPO's returns and critic targets on a
case worked by hand, the learning rate of every step and the gradient clipping the loop applies."""

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from unified_rl.data import PreferencePairs
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.trainer import train
from unified_rl.wiring import policy_logp

FROZEN = {"rft", "dpo", "ipo", "simpo", "orpo", "kto"}  # samples of pi_sft, the frozen copy
HUMAN = {"sft"}  # the human-written solutions
ONLINE = set(METHODS) - FROZEN - HUMAN  # samples of the current policy pi_theta


@pytest.fixture(scope="module")
def apart():
    """A lab whose policy and frozen reference are far apart, so whose samples they are shows."""
    torch.manual_seed(0)
    lab = make_lab("tiny")
    with torch.no_grad():
        for p in lab.policy.parameters():
            p.add_(0.5 * torch.randn_like(p))
    return lab


def source_of(name, lab):
    m = METHODS[name]
    if m.data_source is PreferencePairs:  # an untrained model answers nothing right: pair on coin flips
        g = torch.Generator().manual_seed(0)
        return PreferencePairs(lab, lambda r: torch.randint(0, 2, (len(r),), generator=g).float())
    return m.data_source(lab)


def test_every_method_is_classified():
    assert FROZEN | HUMAN | ONLINE == set(METHODS) and not (FROZEN & HUMAN)


@pytest.mark.parametrize("name", list(METHODS))
def test_each_source_samples_the_model_its_paper_names(name, apart, monkeypatch):
    source = source_of(name, apart)
    sampler = type(source).next_batch.__globals__
    calls = []
    if "sample" in sampler:
        real = sampler["sample"]

        def spy(model, *args, **kwargs):
            calls.append(model)
            return real(model, *args, **kwargs)
        monkeypatch.setitem(sampler, "sample", spy)
    torch.manual_seed(0)
    batch = source.next_batch()
    if name in HUMAN:
        assert calls == []
        assert batch.texts == [p.solution for p in batch.problems]
        return
    want = apart.ref if name in FROZEN else apart.policy
    assert calls and all(model is want for model in calls), name
    if batch.logp.abs().sum() > 0:  # a sampled rollout carries its sampler's log-probs: whose are they?
        other = apart.policy if name in FROZEN else apart.ref
        with torch.no_grad():
            own, theirs = policy_logp(want, batch), policy_logp(other, batch)
        assert (batch.logp - own).abs().max() < 1e-4
        assert (batch.logp - theirs).abs().max() > 1e-2


# PPO's returns on two responses worked by hand (DeepSeekMath eq 2's reward, GAE with gamma 0.9, lam 0.7):
# row 0: mask 0 1 1 1, V = (9, 0.5, 0.2, 0.4), log pi_old - log pi_ref = (0, 0.2, -0.1, 0.3), R = 1, beta 0.1
#   r = (0, -0.02, 0.01, -0.03 + 1)
#   t=3: delta = 0.97 - 0.4 = 0.57                          A = 0.57
#   t=2: delta = 0.01 + 0.9 * 0.4 - 0.2 = 0.17              A = 0.17 + 0.63 * 0.57 = 0.5291
#   t=1: delta = -0.02 + 0.9 * 0.2 - 0.5 = -0.34            A = -0.34 + 0.63 * 0.5291 = -0.006667
# row 1: mask 0 1 1 0, V = (0, 0.3, -0.1, 5), log-ratio (0, 0, -0.3, 0), R = 0: r = (0, 0, 0.03, 0)
#   t=2: delta = 0.03 + 0.1 = 0.13                          A = 0.13
#   t=1: delta = 0 + 0.9 * -0.1 - 0.3 = -0.39               A = -0.39 + 0.63 * 0.13 = -0.3081
HAND_ADV = [[0.0, -0.006667, 0.5291, 0.57], [0.0, -0.3081, 0.13, 0.0]]
HAND_RETURNS = [[0.0, 0.493333, 0.7291, 0.97], [0.0, -0.0081, 0.03, 0.0]]


class Rows(SimpleNamespace):
    """The least of a rollout PPO's advantage reads: mask, the sampler's logp, len()."""

    def __len__(self):
        return self.mask.shape[0]


def test_ppo_returns_and_critic_targets_by_hand():
    d = torch.float64
    mask = torch.tensor([[0, 1, 1, 1], [0, 1, 1, 0]], dtype=d)
    values = torch.tensor([[9.0, 0.5, 0.2, 0.4], [0.0, 0.3, -0.1, 5.0]], dtype=d)
    logp = torch.tensor([[0.0, -1.0, -2.0, -0.5], [0.0, -0.5, -1.0, 0.0]], dtype=d)
    logp_ref = torch.tensor([[0.0, -1.2, -1.9, -0.8], [0.0, -0.5, -0.7, 0.0]], dtype=d)
    lab = SimpleNamespace(preset=SimpleNamespace(rl=dataclasses.replace(make_lab("tiny").preset.rl, beta=0.1,
                                                                          gamma=0.9, lam=0.7)))
    critic = SimpleNamespace(values=lambda b: values)
    scores = torch.tensor([1.0, 0.0], dtype=d)
    batch = Rows(mask=mask, logp=logp, group_size=1)
    adv = METHODS["ppo"].advantage(lab, batch, scores, logp_ref, critic)
    assert torch.allclose(adv, torch.tensor(HAND_ADV, dtype=d), atol=1e-12), adv
    targets = METHODS["ppo"].extra_loss.targets(critic, lab, batch, scores, logp_ref, adv)
    assert torch.allclose(targets, torch.tensor(HAND_RETURNS, dtype=d), atol=1e-12), targets


@pytest.fixture
def steps_seen(monkeypatch):
    """Each optimizer step's learning rates and the policy's gradient norm as the step sees it."""
    seen = []
    step = torch.optim.AdamW.step

    def spy(self, *args, **kwargs):
        policy = self.param_groups[0]["params"]
        norm = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in policy if p.grad is not None)).item()
        seen.append(([g["lr"] for g in self.param_groups], norm))
        return step(self, *args, **kwargs)
    monkeypatch.setattr(torch.optim.AdamW, "step", spy)
    return seen


def warmup(k, total):
    """The schedule as documented: linear over the first total // 10 steps (k = 0, 1, ...), then constant."""
    n = max(1, total // 10)
    return min(1.0, (k + 1) / n)


def test_learning_rate_of_every_step_and_clipping(steps_seen):
    total = 30
    run = train("sft", preset="tiny", steps=total, progress=False, eval_every=0)
    base = run.lab.preset.sft.lr
    lrs = [lr[0] for lr, _ in steps_seen]
    assert len(lrs) == total
    assert lrs[0] == pytest.approx(base / 3, rel=1e-12)  # the first step already moves: base / (total // 10)
    assert lrs == pytest.approx([base * warmup(k, total) for k in range(total)], rel=1e-12)
    norms = [n for _, n in steps_seen]
    assert max(norms) <= 1 + 1e-6, norms  # clipped at grad-norm 1 ...
    assert sum(abs(n - 1) < 1e-6 for n in norms) >= 1, norms  # ... and the clip did bind


def test_every_parameter_group_follows_the_schedule(steps_seen):
    """PPO's critic has its own learning rate; the warm-up scales both."""
    total = 20
    lab = make_lab("tiny")
    run = train("ppo", lab=lab, steps=total, progress=False, eval_every=0)
    bases = [run.lab.preset.rl.lr, run.lab.preset.rl.value_lr]
    assert len(steps_seen) == total
    for k, (lrs, _) in enumerate(steps_seen):
        assert lrs == pytest.approx([b * warmup(k, total) for b in bases], rel=1e-12), (k, lrs)
