"""The real-model Figure 7 experiment end to end on a tiny random Llama chat model (seconds): its result,
its parts (a killed run continues; another budget's part is refused), its sampler of many replies
against a teacher-forced reference, its intervals and verdicts, the mixed question pool, and
on-policy DPO's pair source (pairs of the current policy, not of the frozen start)."""

import dataclasses
import json
import os

import numpy as np
import pytest
import torch
from _tiny_llm import save_tiny

from unified_rl import words
from unified_rl.data import PolicyPairs, PreferencePairs, core
from unified_rl.experiments import EXPERIMENTS, answers, paired, real_model as RM, verdicts
from unified_rl.lab import make_lab
from unified_rl.llm import load_pretrained
from unified_rl.metrics import maj_at_k, pass_at_k
from unified_rl.sampling import sample, stop_ids
from unified_rl.tokenizer import encode_problems


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return str(save_tiny("llama", tmp_path_factory.mktemp("tiny") / "llama"))


@pytest.fixture
def coin_parser(monkeypatch):
    """A random model's replies are never right: call about half of them right by their length's
    parity, so on-policy DPO finds pairs and GRPO a signal (the rule is not under test here)."""
    monkeypatch.setattr(words.WordProblem, "parse", lambda self, text: self.answer if len(text) % 2 else None)


def test_tiny_run_writes_every_model_per_seed_and_a_comparison_per_k(tmp_path, tiny_folder, coin_parser):
    result = RM.run("tiny", str(tmp_path), seeds=3, progress=False, model=tiny_folder)
    with open(os.path.join(tmp_path, "real-model.json")) as f:
        on_disk = json.load(f)
    assert EXPERIMENTS["real-model"] is RM.run and "provenance" in on_disk
    assert os.path.exists(os.path.join(tmp_path, "real-model.png"))
    assert on_disk["arms"] == result["arms"] == ["grpo", "dpo-on-policy"] and on_disk["k"] == [1, 2]
    assert set(on_disk["budgets_considered"]) == {"4", "6"} and len(on_disk["questions"]) == 4
    for seed in on_disk["per_seed"]:
        for m in RM.MODELS:
            x = seed[m]
            assert 0 <= x["greedy"] <= 1 and 0 <= x["greedy_cut"] <= 1 and 0 <= x["sampled_cut"] <= 1
            assert len(x["tallies"]) == 4 and all(sum(c for _, c in t) == 2 for t in x["tallies"])
            # the stored means are the exact estimators of the stored tallies
            q = on_disk["questions"]
            want = [np.mean([RM.question_curves(t, p["answer"], [1, 2])[i][j] for t, p in zip(x["tallies"], q)])
                    for i in (0, 1) for j in (0, 1)]
            assert [*x["pass_at_k"], *x["maj_at_k"]] == pytest.approx(want)
    for arm in RM.ARMS:
        for key in ("pass_at_k", "maj_at_k"):
            for i, c in enumerate(on_disk["change"][arm][key]):
                per_seed = [s[arm][key][i] - s["base"][key][i] for s in on_disk["per_seed"]]
                assert c["per_seed"] == pytest.approx(per_seed) and c["mean"] == pytest.approx(np.mean(per_seed))
                assert c["seeds_ci"][0] <= c["mean"] <= c["seeds_ci"][1] and "verdict" not in c  # descriptive
            v = on_disk["verdicts"]["arms"][arm][key]  # the rule's verdict at the primary K (here the largest, 2)
            assert on_disk["verdicts"]["k"] == 2 and v["per_seed"] == pytest.approx(on_disk["change"][arm][key][1]["per_seed"])
            assert v["family"] == 4 and v["level"] == pytest.approx(1 - 0.05 / 4) and v["verdict"] in verdicts.WORDS
            assert v["interval"][0] <= on_disk["change"][arm][key][1]["seeds_ci"][0]  # simultaneous: wider
        assert on_disk["verdicts"]["arms"][arm]["sentence"].startswith("Maj@2 ")
    assert on_disk["headroom"]["k"] == [1, 2] and on_disk["headroom"]["questions"] == 4


def test_a_killed_run_continues_from_its_parts_and_refuses_another_budgets(tmp_path, tiny_folder, coin_parser,
                                                                          monkeypatch):
    RM.run("tiny", str(tmp_path / "a"), seeds=1, progress=False, model=tiny_folder)
    parts = sorted(os.listdir(tmp_path / "a" / "real-model.parts"))
    assert parts == ["base-budgets.json", "seed0-base.json", "seed0-dpo-on-policy.json", "seed0-grpo.json"]
    os.remove(tmp_path / "a" / "real-model.json")  # as if killed before the end
    monkeypatch.setattr(RM, "train", lambda *a, **k: pytest.fail("a finished part was computed again"))
    again = RM.run("tiny", str(tmp_path / "a"), seeds=1, progress=False, model=tiny_folder)
    assert again["per_seed"][0]["grpo"]["tallies"]  # read back from its part
    with pytest.raises(ValueError, match="base-budgets.json was made with another budget"):
        RM.run("tiny", str(tmp_path / "a"), seeds=1, progress=False, model=tiny_folder, samples=4)
    # the base model's parts do not depend on the training budget; a trained model's part does
    with pytest.raises(ValueError, match="seed0-grpo.json was made with another budget"):
        RM.run("tiny", str(tmp_path / "a"), seeds=1, progress=False, model=tiny_folder, grpo_steps=2)


@pytest.mark.parametrize("kw, text", [(dict(grpo_steps=0), "grpo_steps"), (dict(samples=1), "samples"),
                                      (dict(max_new_tokens=5), "budgets_considered"),
                                      (dict(colour="red"), "unknown budget field")])
def test_bad_budgets_fail_before_any_model_loads(tmp_path, kw, text):
    with pytest.raises(ValueError, match=text):
        RM.run("tiny", str(tmp_path), seeds=1, progress=False, model="/no/such/model", **kw)


def test_parse_shares_tell_strict_from_lenient_from_none():
    s = RM.parse_shares(["so #### 7", "it is \\boxed{3}", "the answer is 12", "no idea"])
    assert s == {"strict_share": 0.5, "lenient_only_share": 0.25, "unparsed_share": 0.25}
    with pytest.raises(ValueError):
        RM.parse_shares([])


def test_question_curves_are_the_estimators_on_the_expanded_answers():
    t = RM.tally(["7", "7", None, "8", "7", "9"])
    assert t == [["7", 3], ["8", 1], ["9", 1], [None, 1]]
    p, m = RM.question_curves(t, "7", [1, 2, 4])
    answers = ["7", "7", "7", None, "8", "9"]
    assert p == [pass_at_k(6, 3, k) for k in (1, 2, 4)] and m == [maj_at_k(answers, "7", k) for k in (1, 2, 4)]


# the sampler of many replies: the trainer's sampler's distribution, at a fraction of its cost

@pytest.fixture(scope="module")
def tiny(tiny_folder):
    return load_pretrained(tiny_folder, "float64")


def test_greedy_replies_equal_the_trainers_sampler(tiny):
    tokenizer, model = tiny
    problems = words.WordsTask(digits=2).splits(0, 3, seed=0)[1]
    r = sample(model, tokenizer, problems, greedy=True, max_new_tokens=7)
    for i, p in enumerate(problems):
        x = answers.replies(model, tokenizer, p, 3, 7, greedy=True)
        assert x.texts == [r.texts[i]] * 3 and x.tokens == [int(r.response_lengths[i])] * 3


def test_rows_that_end_leave_the_batch_without_disturbing_the_others(tiny, monkeypatch):
    """Row r picks its (r mod 3)-th most likely token that is not the end (so the rows' prefixes, and
    their caches, differ) and ends at step r: after each drop the remaining rows must still decode
    what a full forward pass over their own prefix (no cache) gives, token and distribution alike."""
    tokenizer, model = tiny
    stops = stop_ids(model, tokenizer)
    eos, n = stops[0], 5
    calls, seen = {"step": 0}, {}

    def ranked(logits, r):
        order = logits.argsort(descending=True).tolist()
        return [t for t in order if t not in stops][r % 3]

    def scripted(probs, num_samples):
        s = calls["step"]
        calls["step"] += 1
        rows = range(s, n)  # row r has ended at step r, so the rows alive at step s are s .. n-1
        seen.update({(r, s): probs[j] for j, r in enumerate(rows)})
        return torch.tensor([[eos if r == s else ranked(probs[j].log(), r)] for j, r in enumerate(rows)])

    monkeypatch.setattr(torch, "multinomial", scripted)
    problem = words.WordsTask(digits=1).splits(0, 1, seed=0)[1][0]
    got = answers.replies(model, tokenizer, problem, n, max_new_tokens=8, temperature=1.0)
    prompt = torch.tensor(encode_problems(tokenizer, [problem]))  # (1, P)
    for r in range(n):
        ids = prompt
        for step in range(r + 1):  # the reference: one full forward pass per token, no cache
            with torch.no_grad():
                logits = model(input_ids=ids).logits[0, -1]  # (V,)
            assert (seen[r, step] - logits.softmax(-1)).abs().max() < 1e-9  # float64: the same distribution
            if step < r:
                ids = torch.cat([ids, torch.tensor([[ranked(logits, r)]])], 1)
        want = tokenizer.decode(ids[0, prompt.shape[1]:].tolist(), skip_special_tokens=True)
        assert got.texts[r] == want and got.tokens[r] == r + 1 and not got.cut[r]


def test_replies_cut_by_the_budget_are_marked(tiny):
    tokenizer, model = tiny
    problem = words.WordsTask(digits=1).splits(0, 1, seed=0)[1][0]
    x = answers.replies(model, tokenizer, problem, 4, max_new_tokens=2, temperature=1.0)
    assert all(t == 2 for c, t in zip(x.cut, x.tokens) if c) and all(t <= 2 for t in x.tokens)
    with pytest.raises(ValueError):
        answers.replies(model, tokenizer, problem, 0, 2)


# intervals (descriptive) and the rule's verdicts on a result read back

def test_intervals_follow_the_data():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 0.5, (3, 40))
    up = paired.compare(base, base + 0.2 + rng.normal(0, 0.01, (3, 40)))
    assert up["questions_ci"][0] > 0 and up["seeds_ci"][0] > 0 and "verdict" not in up
    d = np.array(up["per_seed"])
    half = 4.302653 * d.std(ddof=1) / np.sqrt(3)  # t(0.975, 2)
    assert up["seeds_ci"] == pytest.approx([d.mean() - half, d.mean() + half])
    noise = paired.compare(base, base + rng.normal(0, 0.2, (3, 40)))
    assert noise["seeds_ci"][0] < 0 < noise["seeds_ci"][1]
    with pytest.raises(ValueError):
        paired.compare(base, base[:, :3])


def _result_with(per_seed_diffs):
    """The shipped real-model result with GRPO's per-seed differences at every K replaced."""
    from unified_rl.experiments import common
    r = common.load_shipped("real-model")
    for key in ("pass_at_k", "maj_at_k"):
        for x in r["change"]["grpo"][key]:
            x["per_seed"] = list(per_seed_diffs)
    return RM.revive(r)


def test_revived_verdicts_follow_the_stored_per_seed_numbers():
    """The verdicts a loaded result shows are computed from its per-seed numbers when it is read, by the rule
    of today: the same differences read with the other arm's two (m = 4) and alone give different words."""
    steady = _result_with([0.30, 0.31, 0.29])["verdicts"]["arms"]["grpo"]
    assert steady["maj_at_k"]["verdict"] == steady["pass_at_k"]["verdict"] == "raised"
    assert "unlike the paper's Figure 7" in steady["sentence"]
    spread = _result_with([0.15, 0.30, 0.20])["verdicts"]["arms"]["grpo"]
    assert spread["maj_at_k"]["verdict"] == "no clear change"  # raised at m = 1 (verdicts' own test)
    assert spread["maj_at_k"]["family"] == 4


def test_the_shipped_verdict_is_the_rules_reading_of_its_seeds():
    from unified_rl.experiments import common
    r = common.load_shipped("real-model")
    i = r["k"].index(verdicts.PRIMARY_K)
    for arm in r["arms"]:
        for key, _ in verdicts.METRICS:
            v = r["verdicts"]["arms"][arm][key]
            d = np.array(r["change"][arm][key][i]["per_seed"])
            half = verdicts.t_quantile(1 - 0.05 / 8, 2) * d.std(ddof=1) / np.sqrt(3)
            assert v["interval"] == pytest.approx([d.mean() - half, d.mean() + half])
            assert v["verdict"] == ("raised" if d.mean() > half else "no clear change")


def test_mixed_task_takes_equal_shares_of_disjoint_splits():
    t = words.MixedTask((words.WordsTask(digits=1), words.WordsTask(digits=2)))
    train, test = t.splits(10, 7, seed=3)
    assert len(train) == 10 and len(test) == 7 and (train, test) == t.splits(10, 7, seed=3)
    digits = [max(len(x) for x in p.prompt[8:-1].split(" + ")) for p in test]
    assert sorted(digits) == [1, 1, 1, 1, 2, 2, 2]
    assert not {p.prompt for p in train} & {p.prompt for p in test}
    with pytest.raises(ValueError):
        words.MixedTask(())


# on-policy DPO's pairs

def _lab(folder):
    p = RM.world(dataclasses.replace(RM.BUDGETS["tiny"], model=folder))
    return make_lab(p.with_(rl={"frozen_samples": 3}), seed=0)


@pytest.mark.parametrize("source, model, samples", [(PolicyPairs, "policy", "group_size"),
                                                    (PreferencePairs, "ref", "frozen_samples")])
def test_pairs_come_from_the_policy_on_policy_and_from_the_start_offline(source, model, samples, tiny_folder,
                                                                         coin_parser, monkeypatch):
    lab = _lab(tiny_folder)
    with torch.no_grad():  # the policy has moved away from its reference
        for p in lab.policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    seen = []
    real = core.sample

    def spy(m, tokenizer, problems, group_size=1, **kw):
        seen.append((m, group_size))
        return real(m, tokenizer, problems, group_size=group_size, **kw)

    monkeypatch.setattr(core, "sample", spy)
    batch = source(lab).next_batch()
    assert seen and all(m is getattr(lab, model) for m, _ in seen)
    assert all(g == getattr(lab.preset.rl, samples) for _, g in seen)
    B = len(batch) // 2  # B chosen rows, then their B rejected partners: right, then wrong
    assert B >= 1 and all(p.parse(t) == p.answer for p, t in zip(batch.problems[:B], batch.texts[:B]))
    assert all(p.parse(t) != p.answer for p, t in zip(batch.problems[B:], batch.texts[B:]))
    assert [p.prompt for p in batch.problems[:B]] == [p.prompt for p in batch.problems[B:]]
