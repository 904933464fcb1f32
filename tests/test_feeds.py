"""What feeds a step: which model each data source samples, PPO's returns and critic targets on a
case worked by hand, the learning rate of every step and the gradient clipping the loop applies."""

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from unified_rl.data import PreferencePairs
from unified_rl.data.core import SAMPLES as SAMPLES_CHOICES
from unified_rl.data.core import _Source
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS
from unified_rl.trainer import train
from unified_rl.wiring import policy_logp

# whose responses each method trains on, as its data source declares (`samples`); the tests below check
# the declaration against whom the source actually samples
SAMPLES = {n: getattr(m.data_source, "samples", None) for n, m in METHODS.items()}
FROZEN = {n for n, s in SAMPLES.items() if s == "reference"}  # samples of pi_sft, the frozen copy
HUMAN = {n for n, s in SAMPLES.items() if s == "human"}  # the human-written solutions
ONLINE = {n for n, s in SAMPLES.items() if s == "policy"}  # samples of the current policy pi_theta


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
    """Every source says whose responses it gives (data.SAMPLES), and the paper's six say what the paper does."""
    undeclared = {n: s for n, s in SAMPLES.items() if s not in SAMPLES_CHOICES}
    assert not undeclared, f"data sources without `samples` in {SAMPLES_CHOICES}: {undeclared}"
    assert "sft" in HUMAN and {"rft", "dpo"} <= FROZEN and {"online-rft", "ppo", "grpo"} <= ONLINE


def wrong_sampler(name, lab, monkeypatch, source_lab=None):
    """What is wrong with whose samples `name`'s data source draws, as a list of complaints (empty: right).

    source_lab: the lab the source is built on, when a test gives it a lab with two models swapped."""
    source = source_of(name, lab if source_lab is None else source_lab)
    calls = []
    # `sample` as the source's module sees it, and as _Source.draw (which most sources call) sees it
    for sampler in (type(source).next_batch.__globals__, _Source.draw.__globals__):
        if "sample" in sampler and not hasattr(sampler["sample"], "spied"):
            real = sampler["sample"]

            def spy(model, *args, real=real, **kwargs):
                calls.append(model)
                return real(model, *args, **kwargs)
            spy.spied = True
            monkeypatch.setitem(sampler, "sample", spy)
    torch.manual_seed(0)
    batch = source.next_batch()
    if name in HUMAN:
        return ([] if not calls else ["it sampled a model"]) + \
            ([] if batch.texts == [p.solution for p in batch.problems] else ["not the human solutions"])
    want, other = (lab.ref, lab.policy) if name in FROZEN else (lab.policy, lab.ref)
    wrong = [] if calls and all(model is want for model in calls) else ["it sampled another model"]
    if batch.logp.abs().sum() > 0:  # a sampled rollout carries its sampler's log-probs: whose are they?
        with torch.no_grad():
            own, theirs = policy_logp(want, batch), policy_logp(other, batch)
        if not ((batch.logp - own).abs().max() < 1e-4 and (batch.logp - theirs).abs().max() > 1e-2):
            wrong.append("its log-probs are another model's")
    return wrong


@pytest.mark.parametrize("name", list(METHODS))
def test_each_source_samples_the_model_its_paper_names(name, apart, monkeypatch):
    assert wrong_sampler(name, apart, monkeypatch) == []


@pytest.mark.parametrize("name", ["rft", "dpo", "kto", "online-rft", "grpo"])
def test_a_source_that_samples_the_wrong_model_is_caught(name, apart, monkeypatch):
    """Negative controls: a frozen source that samples the current policy (RFT, DPO's pairs, KTO), an
    online one that samples pi_sft. The source sees a lab with the two models swapped."""
    swapped = dataclasses.replace(apart, policy=apart.ref, ref=apart.policy)
    assert wrong_sampler(name, apart, monkeypatch, source_lab=swapped)


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


def test_preference_pairs_put_a_right_answer_first_and_a_wrong_one_second(apart):
    """Whatever the reward calls right is chosen, what it calls wrong rejected, question by question."""
    right = lambda text: len(text) % 2 == 0  # noqa: E731  (a reward the test can apply itself)
    source = PreferencePairs(apart, lambda r: torch.tensor([float(right(t)) for t in r.texts]))
    torch.manual_seed(0)
    batch = source.next_batch()
    n = len(batch) // 2
    assert n == apart.preset.rl.prompts_per_step
    assert batch.problems[:n] == batch.problems[n:]  # pair i: row i and row n + i answer one question
    assert all(right(t) for t in batch.texts[:n]) and not any(right(t) for t in batch.texts[n:])


def test_sampling_draws_from_the_tempered_distribution(apart, monkeypatch):
    """sample() draws each token from softmax(logits / T), and records the untempered log-prob."""
    from unified_rl import sampling
    from unified_rl.models import position_ids_of
    from unified_rl.tokenizer import encode_prompts
    seen = []
    multinomial = torch.multinomial

    def spy(probs, *args, **kwargs):
        seen.append(probs.clone())
        return multinomial(probs, *args, **kwargs)
    monkeypatch.setattr(torch, "multinomial", spy)
    problem = apart.rl_problems[0]
    batch = sampling.sample(apart.policy, apart.tokenizer, [problem], temperature=0.5)
    ids = torch.tensor([encode_prompts(apart.tokenizer, [problem.prompt])[0]])
    att = torch.ones_like(ids)
    with torch.no_grad():
        logits = apart.policy(input_ids=ids, attention_mask=att, position_ids=position_ids_of(att)).logits[0, -1]
    assert torch.allclose(seen[0][0], torch.softmax(logits.double() / 0.5, -1).float(), atol=1e-6)
    first = batch.input_ids[0, ids.shape[1]]
    assert abs(batch.logp[0, ids.shape[1] - 1].item() - torch.log_softmax(logits.double(), -1)[first].item()) < 1e-5


def test_evaluation_reads_the_questions_it_is_given_and_decodes_greedily(apart, monkeypatch):
    from unified_rl import evaluation
    calls = []
    real = evaluation.sample_answers
    monkeypatch.setattr(evaluation, "sample_answers", lambda policy, tok, problems, *a, **k:
                        calls.append(list(problems)) or real(policy, tok, problems, *a, **k))
    problems = apart.test_problems[:6]
    evaluation.evaluate(apart.policy, apart.tokenizer, problems, k_problems=2, samples=2, ks=(1, 2))
    assert calls == [problems[:2]]  # Pass@K / Maj@K on the first k_problems
    sample = evaluation.sample
    kinds = []
    monkeypatch.setattr(evaluation, "sample", lambda *a, **k: kinds.append(k.get("greedy")) or sample(*a, **k))
    evaluation.greedy_accuracy(apart.policy, apart.tokenizer, problems)
    assert kinds and all(kinds)


def test_the_loop_evaluates_on_held_out_questions(monkeypatch):
    from unified_rl import evaluation
    lab = make_lab("tiny")
    seen = []
    monkeypatch.setattr(evaluation, "greedy_accuracy", lambda policy, tok, problems: seen.append(problems) or 0.0)
    train("grpo", lab=lab, steps=2, eval_every=1, progress=False)
    held_out = lab.test_problems[: lab.preset.eval_problems]
    assert seen == [held_out, held_out] and not set(held_out) & set(lab.rl_problems)
