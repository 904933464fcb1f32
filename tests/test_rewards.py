"""Rule, process, learned and noisy rewards."""

import pytest
import torch

from unified_rl.models import ModelConfig, build_policy
from unified_rl.rewards.model import RewardModel
from unified_rl.rewards import _char_ends, ModelReward, NoisyReward, RuleReward, process_rewards, rule_reward
from unified_rl.sampling import rollout_from_texts, sample
from unified_rl.task import TaskConfig, make_problem


P47 = make_problem((47, 85), TaskConfig())  # 12;13;1;=132
P23 = make_problem((23, 45), TaskConfig())  # 8;6;=68


def test_rule_reward():
    problems = [P47] * 7
    texts = ["12;13;1;=132", "=132", "12;13;1;=133", "12;13;1;", "", "=1+131",
             "=__import__('os').getcwd()"]
    assert rule_reward(problems, texts).tolist() == [1, 1, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError):
        rule_reward(problems, texts[:3])


def test_rule_reward_on_rollout(tok):
    texts = [P47.solution, "9;=9", P23.solution, "8;6;=86"]
    r = rollout_from_texts(tok, [P47, P23], texts, group_size=2)
    assert RuleReward()(r).tolist() == [1.0, 0.0, 1.0, 0.0]


def expected_marks(problem, text):
    """Independent reference: walk the characters; reward each closed step, then the answer."""
    marks, piece, k = [], "", 0
    for c, ch in enumerate(text):
        if ch in ";=" and (ch == ";" or piece):
            right = k < len(problem.steps) and piece == problem.steps[k]
            marks.append((c, float(right)))
            k, piece = k + 1, ""
        elif ch == "=":
            pass
        else:
            piece += ch
        if ch == "=":
            break
    answer = text.rsplit("=", 1)[1] if "=" in text else None
    return marks, float(answer == problem.answer)


@pytest.mark.parametrize("text", [
    "12;13;1;=132",  # all right: 3 steps + answer
    "12;14;1;=142",  # second step wrong, answer wrong
    "12;13;=132",  # missing carry step: answer right
    "=132",  # no steps at all
    "12;13;1;0;=132",  # an extra step is wrong
    "12;;1;=132",  # an empty step is wrong
    "12;13=132",  # "=" closes the last step
    "12;13;1",  # truncated: the unclosed "1" is not a step, no answer
])
def test_process_rewards_positions_and_values(tok, text):
    r = rollout_from_texts(tok, [P47], [text])
    rewards, smask = process_rewards(tok, r)
    assert rewards.shape == smask.shape == r.mask.shape
    assert (smask <= r.mask).all() and (rewards[smask == 0] == 0).all()
    marks, answer_right = expected_marks(P47, text)
    P, n = r.prompt_len, len(text)
    expected = torch.zeros_like(rewards)
    for c, v in marks:
        expected[0, P - 1 + c] = v  # character c is response token c, i.e. target P-1+c
    expected_mask = expected.clone()
    for c, _ in marks:
        expected_mask[0, P - 1 + c] = 1.0
    expected[0, P - 1 + n] = answer_right  # the answer step ends on the EOS token
    expected_mask[0, P - 1 + n] = 1.0
    assert torch.equal(rewards, expected) and torch.equal(smask, expected_mask)
    targets = r.input_ids[:, 1:][smask.bool()].tolist()
    assert set(targets) <= set(tok.convert_tokens_to_ids([";", "="])) | {tok.eos_token_id}
    # the answer step is the rule reward
    last = r.mask[0].nonzero().max()
    assert rewards[0, last] == rule_reward([P47], [text])[0]


def test_process_rewards_on_samples(tok):
    torch.manual_seed(0)
    m = build_policy(tok, ModelConfig(n_layer=1, n_embd=32, n_head=2))
    r = sample(m, tok, [P47, P23], group_size=8)  # an untrained model: garbage, specials included
    rewards, smask = process_rewards(tok, r)
    assert (smask <= r.mask).all()
    assert smask.sum(-1).min() >= 1  # every response has at least the answer step
    outcome = rewards[torch.arange(len(r)), r.mask.cumsum(-1).argmax(-1)]  # reward on last token
    assert torch.equal(outcome, rule_reward(r.problems, r.texts))
    for i in range(len(r)):  # the concatenation shortcut agrees with decoding every prefix
        ids = r.input_ids[i, r.prompt_len:r.prompt_len + int(r.mask[i].sum())].tolist()
        fast = _char_ends(tok, ids, r.texts[i], {})
        slow = _char_ends(tok, ids, "forces the prefix path", {})
        assert fast == slow and fast[-1] == len(r.texts[i])


def test_model_reward(tok):
    torch.manual_seed(0)
    rm = RewardModel.from_policy(build_policy(tok, ModelConfig(n_layer=1, n_embd=32, n_head=2)))
    torch.nn.init.normal_(rm.head.weight)
    r = rollout_from_texts(tok, [P47, P23], [P47.solution, "8;6;=86"])
    scores = ModelReward(rm, tok)(r)
    with torch.no_grad():
        assert torch.allclose(scores, torch.sigmoid(rm(r.input_ids, r.attention_mask)))
    assert ((scores > 0) & (scores < 1)).all() and not scores.requires_grad
    assert torch.equal(ModelReward(rm, tok).score([P47, P23], [P47.solution, "8;6;=86"]), scores)


def test_noisy_reward():
    class Fixed:
        def __init__(self, values):
            self.values = torch.tensor(values)

        def __call__(self, rollout):
            return self.values.clone()

    base = Fixed([1.0, 0.0] * 5000)
    assert torch.equal(NoisyReward(base, 0.0)(None), base.values)
    assert torch.equal(NoisyReward(base, 1.0)(None), 1 - base.values)
    noisy = NoisyReward(base, 0.2, seed=7)
    first, second = noisy(None), noisy(None)
    assert 0.18 < (first != base.values).float().mean() < 0.22
    assert not torch.equal(first, second)  # fresh flips each call
    again = NoisyReward(base, 0.2, seed=7)
    assert torch.equal(again(None), first) and torch.equal(again(None), second)
    with pytest.raises(ValueError, match="flip_prob"):
        NoisyReward(base, 1.5)
    with pytest.raises(ValueError, match="0/1"):
        NoisyReward(Fixed([0.5]), 0.1)(None)


def test_noisy_reward_state_resumes_its_flips():
    base = lambda rollout: torch.tensor([1.0, 0.0] * 50)
    noisy = NoisyReward(base, 0.3, seed=1)
    noisy(None)
    state = noisy.get_state()
    expected = noisy(None)
    resumed = NoisyReward(base, 0.3, seed=99)
    resumed.set_state(state)
    assert torch.equal(resumed(None), expected)
