"""The learned reward model: it reads each response's last real token, its whole transformer learns
(also when copied from a frozen reference), it separates right from wrong answers on questions it
never saw, and its AUC is the ranking probability computed by hand."""

import itertools

import pytest
import torch

from unified_rl.models import ModelConfig, build_policy
from unified_rl.rewards.model import RewardModel, auc, train_reward_model
from unified_rl.sampling import rollout_from_texts
from unified_rl.task import TaskConfig, make_splits

SMALL = ModelConfig(n_layer=1, n_embd=32, n_head=2, n_positions=48)


def off_by_one(problems):
    """(problems, texts, scores): each reference solution (right) and the same with its answer's last
    digit off by one (wrong); telling them apart means comparing the answer with the column sums."""
    texts = [p.solution for p in problems] + [p.solution[:-1] + str((int(p.answer[-1]) + 1) % 10) for p in problems]
    return list(problems) * 2, texts, [1.0] * len(problems) + [0.0] * len(problems)


def test_reward_model_reads_last_real_token(tok, batch, tmp_path):
    torch.manual_seed(0)
    rm = RewardModel.from_policy(build_policy(tok, SMALL))
    torch.nn.init.normal_(rm.head.weight)
    with torch.no_grad():
        scores = rm(batch.input_ids, batch.attention_mask)  # (B,)
        assert scores.shape == (len(batch),)
        ref = torch.stack([rm.per_position(*[t[None] for t in (
            batch.input_ids[i][batch.attention_mask[i].bool()],
            torch.ones(int(batch.attention_mask[i].sum()), dtype=torch.long))])[0, -1]
            for i in range(len(batch))])
        assert (scores - ref).abs().max() <= 1e-5
    rm.save_pretrained(tmp_path)
    back = RewardModel.from_pretrained(tmp_path, device="cpu")
    with torch.no_grad():
        assert torch.equal(back(batch.input_ids, batch.attention_mask), scores)


def test_a_reward_model_copied_from_a_frozen_policy_trains_its_whole_transformer(tok):
    """The trainer's reference policy is frozen; a reward model copied from it must still learn in
    full, not only its 1 + hidden-size head numbers."""
    torch.manual_seed(0)
    frozen = build_policy(tok, SMALL).requires_grad_(False)
    rm = RewardModel.from_policy(frozen)
    before = [p.detach().clone() for p in rm.backbone.parameters()]
    problems, texts, scores = off_by_one(make_splits(TaskConfig(digits=1), 8, 0, seed=0)[0])
    train_reward_model(rm, tok, problems, texts, scores, steps=3, device="cpu")
    moved = [not torch.equal(b, p) for b, p in zip(before, rm.backbone.parameters())]
    assert all(moved), f"{moved.count(False)} of {len(moved)} trunk tensors did not move"
    assert not any(p.requires_grad for p in frozen.parameters())  # the policy it came from is untouched


@pytest.mark.slow
def test_train_reward_model_separates_right_from_wrong_on_unseen_questions(tok):
    """70 one-digit sums to train on, 30 it never sees: their right and wrong answers are ranked apart."""
    torch.manual_seed(0)
    train_p, test_p = make_splits(TaskConfig(digits=1), 70, 30, seed=0)
    rm = RewardModel.from_policy(build_policy(tok, SMALL).requires_grad_(False))
    problems, texts, scores = off_by_one(train_p)
    losses = train_reward_model(rm, tok, problems, texts, scores, steps=500, lr=1e-3, device="cpu", seed=0)
    assert len(losses) == 500 and sum(losses[-20:]) / 20 < 0.25 * losses[0]
    problems, texts, truth = off_by_one(test_p)
    data = rollout_from_texts(tok, problems, texts)
    with torch.no_grad():
        p = torch.sigmoid(rm(data.input_ids, data.attention_mask))  # (B,)
    assert auc(p, torch.tensor(truth)) >= 0.9
    assert ((p > 0.5).float() == torch.tensor(truth)).float().mean() >= 0.85


def test_train_reward_model_rejects_bad_input(tok):
    problems, texts, scores = off_by_one(make_splits(TaskConfig(digits=1), 4, 0, seed=0)[0])
    rm = RewardModel.from_policy(build_policy(tok, SMALL))
    with pytest.raises(ValueError, match="scores"):
        train_reward_model(rm, tok, problems, texts, [0.5] * len(texts), steps=1)
    with pytest.raises(ValueError, match="equally long"):
        train_reward_model(rm, tok, problems[:4], texts, scores, steps=1)
    with pytest.raises(ValueError, match="steps"):
        train_reward_model(rm, tok, problems, texts, scores, steps=0)


def test_auc_is_the_probability_that_a_right_answer_outscores_a_wrong_one():
    scores = [0.9, 0.2, 0.7, 0.7, 0.1, 0.5]
    truth = [1, 0, 1, 0, 0, 1]
    pairs = [(s, t) for (s, a), (t, b) in itertools.product(zip(scores, truth), repeat=2) if a == 1 and b == 0]
    by_hand = sum(1.0 if s > t else 0.5 if s == t else 0.0 for s, t in pairs) / len(pairs)
    assert auc(torch.tensor(scores), torch.tensor(truth)) == pytest.approx(by_hand)
    assert auc(torch.tensor([0.3, 0.3]), torch.tensor([1, 0])) == 0.5  # a constant reward knows nothing
    with pytest.raises(ValueError, match="right and wrong"):
        auc(torch.tensor([0.3, 0.4]), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="labels"):
        auc(torch.tensor([0.3, 0.4]), torch.tensor([0, 1, 1]))
