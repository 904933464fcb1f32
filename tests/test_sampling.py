"""Sampling and rollouts: log-probs, masks, padding, KV cache against a fresh forward pass."""

import pytest
import torch

from unified_rl.models import ModelConfig, build_policy
from unified_rl import sampling
from unified_rl.sampling import cat_rollouts, rollout_from_texts, sample, token_logp
from unified_rl.task import TaskConfig, make_problem, make_splits


@pytest.fixture(scope="module")
def model(tok):
    torch.manual_seed(0)
    return build_policy(tok, ModelConfig(n_layer=2, n_embd=32, n_head=2))


@pytest.fixture(scope="module")
def mixed():
    """Problems whose prompts have different lengths, so left padding is exercised."""
    return [make_problem((3, 4), TaskConfig(1)), make_problem((123, 456), TaskConfig(3)),
            make_problem((1, 2, 3), TaskConfig(1, 3))]


@pytest.fixture(scope="module")
def trained(tok):
    """A policy fitted with plain SFT on 8 solutions, so it ends responses with EOS."""
    torch.manual_seed(0)
    m = build_policy(tok, ModelConfig(n_layer=2, n_embd=32, n_head=2))
    probs, _ = make_splits(TaskConfig(digits=2), 8, 0, seed=0)
    data = rollout_from_texts(tok, probs, [p.solution for p in probs])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    for _ in range(150):
        logp = token_logp(m, data.input_ids, data.attention_mask)  # (B, T)
        loss = -(logp * data.mask).sum() / data.mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return m, probs


def check_layout(r, tok):
    """Masks, attention and tokens agree with the per-row response lengths."""
    B, L = r.input_ids.shape
    assert r.mask.shape == r.logp.shape == (B, L - 1)
    assert r.attention_mask.shape == (B, L)
    for i in range(B):
        n = int(r.mask[i].sum())
        assert n >= 1
        on = r.mask[i].nonzero().squeeze(-1)
        # the response targets are one contiguous run starting right after the prompt block
        assert on.tolist() == list(range(r.prompt_len - 1, r.prompt_len - 1 + n))
        resp = r.input_ids[i, r.prompt_len:r.prompt_len + n].tolist()
        assert tok.eos_token_id not in resp[:-1]  # EOS only ever closes a response
        assert r.attention_mask[i, r.prompt_len:].tolist() == [1] * n + [0] * (L - r.prompt_len - n)
        assert (r.logp[i][r.mask[i] == 0] == 0).all()


def test_logp_matches_fresh_forward(tok, model, mixed):
    torch.manual_seed(1)
    r = sample(model, tok, mixed, group_size=4)
    check_layout(r, tok)
    assert r.problems == [p for p in mixed for _ in range(4)] and r.group_size == 4
    fresh = token_logp(model, r.input_ids, r.attention_mask)  # (B, T)
    assert torch.isfinite(fresh).all()
    assert (fresh * r.mask - r.logp).abs().max() <= 1e-5
    assert not r.logp.requires_grad and fresh.requires_grad


def test_padding_does_not_change_logp(tok, model, mixed):
    torch.manual_seed(2)
    r = sample(model, tok, mixed, group_size=2)
    batched = token_logp(model, r.input_ids, r.attention_mask)  # (B, T)
    for i in range(len(r)):
        keep = r.attention_mask[i].bool()
        alone = r.input_ids[i][keep][None]  # the row with no padding at all
        single = token_logp(model, alone, torch.ones_like(alone))[0]
        n = int(keep.sum())
        row = batched[i][keep[:-1] & keep[1:]]
        assert row.shape[0] == n - 1
        assert (row - single).abs().max() <= 1e-5


def test_greedy_equals_generate(tok, model, mixed):
    g = sample(model, tok, mixed, greedy=True, max_new_tokens=12)
    P = g.prompt_len
    ref = model.generate(input_ids=g.input_ids[:, :P], attention_mask=g.attention_mask[:, :P],
                         do_sample=False, max_new_tokens=12, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.eos_token_id)
    for i in range(len(g)):
        n = int(g.mask[i].sum())
        assert g.input_ids[i, P:P + n].tolist() == ref[i, P:P + n].tolist()


def test_trained_policy_stops_at_eos(tok, trained):
    m, probs = trained
    r = sample(m, tok, probs, group_size=3, greedy=True, max_new_tokens=30)
    check_layout(r, tok)
    assert r.texts == [p.solution for p in probs for _ in range(3)]
    assert r.input_ids.shape[1] - r.prompt_len == max(len(p.solution) for p in probs) + 1
    ends = [r.input_ids[i, r.prompt_len + int(r.mask[i].sum()) - 1].item() for i in range(len(r))]
    assert ends == [tok.eos_token_id] * len(r)
    m.train()
    s = sample(m, tok, probs, group_size=2, temperature=0.7)
    assert m.training  # sampling runs in eval mode and restores the caller's mode
    check_layout(s, tok)
    assert (token_logp(m, s.input_ids, s.attention_mask) * s.mask - s.logp).abs().max() <= 1e-5


def test_rollout_from_texts(tok, model, mixed):
    texts = [p.solution for p in mixed for _ in range(2)]
    texts[1] = "9<eos>"  # a trailing EOS string is not doubled
    r = rollout_from_texts(tok, mixed, texts, group_size=2)
    check_layout(r, tok)
    assert r.mask.sum(-1).tolist() == [len(t) + 1 for t in r.texts]
    assert r.texts[1] == "9" and (r.logp == 0).all()
    for i, t in enumerate(r.texts):
        n = len(t) + 1
        ids = r.input_ids[i, r.prompt_len:r.prompt_len + n].tolist()
        assert tok.decode(ids[:-1]) == t and ids[-1] == tok.eos_token_id
        assert tok.decode(r.input_ids[i][r.attention_mask[i].bool()], skip_special_tokens=True) \
            == r.problems[i].prompt + t
    with pytest.raises(ValueError, match="texts"):
        rollout_from_texts(tok, mixed, texts[:5], group_size=2)


def test_select_and_cat_keep_each_row(tok, model, mixed):
    torch.manual_seed(3)
    a = sample(model, tok, mixed[:1], group_size=2)  # short prompts
    b = sample(model, tok, mixed[1:], group_size=2)  # longer prompts
    both = cat_rollouts([a, b], pad_token_id=tok.pad_token_id)
    check_layout(both, tok)
    assert both.texts == a.texts + b.texts and len(both) == 6
    fresh = token_logp(model, both.input_ids, both.attention_mask) * both.mask
    assert (fresh - both.logp).abs().max() <= 1e-5
    for src, rows in [(a, [0, 1]), (b, [2, 3, 4, 5])]:
        for j, i in enumerate(rows):
            assert both.logp[i][both.mask[i].bool()].tolist() == src.logp[j][src.mask[j].bool()].tolist()
    sub = both.select([4, 5], group_size=2)
    assert sub.problems == [mixed[2]] * 2 and sub.texts == both.texts[4:]
    with pytest.raises(ValueError):
        both.select([0, 1, 2], group_size=2)


def test_bad_arguments(tok, model, mixed):
    with pytest.raises(ValueError):
        sample(model, tok, mixed, temperature=0.0)
    with pytest.raises(ValueError):
        sample(model, tok, mixed, group_size=0)
    with pytest.raises(ValueError):
        sample(model, tok, [])
    with pytest.raises(ValueError, match="positions"):
        sample(model, tok, mixed, max_new_tokens=model.config.n_positions)


@pytest.mark.parametrize("greedy", [False, True])
def test_checking_done_every_few_tokens_changes_nothing(tok, trained, monkeypatch, greedy):
    """The GPU's sync-saving loop (ask "all ended?" every 5 tokens) returns the per-token loop's rollout."""
    m, probs = trained
    runs = []
    for every in (1, 5):
        monkeypatch.setattr(sampling, "done_check_every", lambda device, every=every: every)
        torch.manual_seed(4)
        runs.append(sample(m, tok, probs, group_size=4, greedy=greedy, max_new_tokens=30))
    a, b = runs
    assert a.input_ids.shape[1] - a.prompt_len < 30  # every row ended before the budget
    assert torch.equal(a.input_ids, b.input_ids) and torch.equal(a.attention_mask, b.attention_mask)
    assert torch.equal(a.mask, b.mask) and torch.equal(a.logp, b.logp) and a.texts == b.texts


def test_autocast_is_off_on_the_cpu():
    assert not isinstance(sampling.autocast("cpu"), torch.autocast)
