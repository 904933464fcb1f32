"""The 2026 field's experiments (teachers, stale-samples on the lab; sampler-precision, real-model-opd on SmolLM2):
their tiny budgets run end to end and write NAME.json with provenance and NAME.png; the shipped results carry
provenance and everything they say (headline, comparisons, verdicts, ratio statistics) is what their stored
per-seed numbers give now, so a planted change to a measured number, or a typed verdict, is caught; the ratio
statistics count what the tis and mis parts themselves would truncate and mask; verdicts only where the rule allows."""

import copy
import json
import os

import numpy as np
import pytest
import torch
from _tiny_llm import save_tiny

from unified_rl import words
from unified_rl.experiments import EXPERIMENTS, field_arms, paired, real_model_opd, sampler_precision, stale_samples
from unified_rl.experiments import teachers, verdicts
from unified_rl.experiments.records import SHIPPED
from unified_rl.parts.sampler_corrections import in_band, truncated

MODULES = {"teachers": teachers, "stale-samples": stale_samples, "sampler-precision": sampler_precision,
           "real-model-opd": real_model_opd}
LAB = ("teachers", "stale-samples")


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return str(save_tiny("llama", tmp_path_factory.mktemp("tiny") / "llama"))


@pytest.fixture
def coin_parser(monkeypatch):
    """A random model's replies are never right: call about half of them right by their length's parity."""
    monkeypatch.setattr(words.WordProblem, "parse", lambda self, text: self.answer if len(text) % 2 else None)


def _tiny(name, out, tiny_folder):
    kw = {} if name in LAB else {"model": tiny_folder}
    return MODULES[name].run("tiny", str(out), seeds=3, progress=False, **kw)


@pytest.mark.parametrize("name", list(MODULES))
def test_tiny_budget_runs_end_to_end_with_provenance_and_a_figure(name, tmp_path, tiny_folder, coin_parser):
    result = _tiny(name, tmp_path, tiny_folder)
    with open(tmp_path / f"{name}.json") as f:
        on_disk = json.load(f)
    assert EXPERIMENTS[name] is MODULES[name].run and os.path.exists(tmp_path / f"{name}.png")
    assert {"commit", "torch", "machine", "command", "date"} <= set(on_disk["provenance"])
    assert on_disk["seeds"] == 3 and len(on_disk["per_seed"]) == 3 and on_disk["headline"] == json.loads(
        json.dumps(result["headline"]))
    for s in on_disk["per_seed"]:  # every model answered every held-out question, right (1) or wrong (0)
        assert set(s["right"]) == set(on_disk["arms"])
        assert len({len(v) for v in s["right"].values()}) == 1 and all(x in (0, 1) for v in s["right"].values() for x in v)
    assert field_arms.agrees(on_disk, MODULES[name].derive) == (True, [])


def shipped(name):
    path = os.path.join(SHIPPED, f"{name}-cpu.json")
    with open(path) as f:
        return json.load(f)


@pytest.mark.parametrize("name", list(MODULES))
def test_the_shipped_result_carries_provenance_and_says_what_its_per_seed_numbers_give(name):
    r = shipped(name)
    p = r["provenance"]
    assert p["commit"] and p["command"].startswith(f"python -m unified_rl reproduce {name} ") and "CPUs" in p["machine"]
    assert r["seeds"] >= (3 if name in LAB else 2)
    assert field_arms.agrees(r, MODULES[name].derive) == (True, [])
    # a second computation of each comparison: the stored answers' differences, by hand
    for label, c in r["changes"].items():
        a = np.array([s["right"][c["arm"]] for s in r["per_seed"]], float)
        b = np.array([s["right"][c["base"]] for s in r["per_seed"]], float)
        assert c["per_seed"] == pytest.approx((a - b).mean(1).tolist(), abs=1e-12)
        assert c["seeds_ci"][0] <= c["mean"] <= c["seeds_ci"][1]
    for label, v in r["verdicts"].items():  # the verdict's words follow from its own interval
        lo, hi = v["interval"]
        want = ("raised" if lo > 0 else "lowered" if hi < 0 else
                "no change" if -0.05 < lo and hi < 0.05 and min(v["start"], 1 - v["start"]) > 0.05 else "no clear change")
        assert v["verdict"] == (want if r["seeds"] >= 3 else v["verdict"]) and v["family"] == len(r["verdicts"])
        assert f"verdict, {label}" in r["headline"] and v["verdict"] in r["headline"][f"verdict, {label}"]


@pytest.mark.parametrize("name", list(MODULES))
def test_a_planted_change_to_a_measured_number_or_a_typed_verdict_is_caught(name):
    r = shipped(name)
    arm = [a for a in r["arms"] if a not in ("start", "base")][-1]
    planted = copy.deepcopy(r)
    row = planted["per_seed"][0]["right"][arm]
    row[0] = 1 - row[0]  # one held-out answer of one arm on one seed
    ok, keys = field_arms.agrees(planted, MODULES[name].derive)
    assert not ok and "headline" in keys and "accuracy" in keys
    typed = copy.deepcopy(r)
    label = next(iter(typed["verdicts"]))
    word = "raised" if r["verdicts"][label]["verdict"] != "raised" else "lowered"  # a word the numbers do not give
    typed["headline"][f"verdict, {label}"] = typed["headline"][f"verdict, {label}"].rsplit(")", 1)[0] + f") {word}"
    typed["verdicts"][label]["verdict"] = word
    ok, keys = field_arms.agrees(typed, MODULES[name].derive)
    assert not ok and {"headline", "verdicts"} <= set(keys)


def test_the_shipped_ratios_are_recounted_by_the_tis_and_mis_parts_themselves():
    r = shipped("sampler-precision")
    for dtype, draw in r["ratio_draws"].items():
        s = r["ratios"][dtype]
        tok = torch.tensor([x for row in draw["log_rho"] for x in row], dtype=torch.float64)
        seq = torch.tensor([sum(row) for row in draw["log_rho"]], dtype=torch.float64)
        for level, x in (("token", tok), ("sequence", seq)):
            rho = x.exp()
            assert s[level]["tis_truncated"] == int((truncated(rho, cap=2.0) != rho).sum())
            assert s[level]["mis_masked"] == int((in_band(rho, 0.5, 5.0) == 0).sum())
        assert s["tokens"] == len(tok) and s["token"]["std"] == pytest.approx(tok.numpy().std())
    planted = copy.deepcopy(r)
    planted["ratio_draws"]["q4_1"]["log_rho"][0][0] = 3.0  # one token's ratio e^3, above TIS's cap and MIS's band
    ok, keys = field_arms.agrees(planted, sampler_precision.derive)
    assert not ok and {"ratios", "headline"} <= set(keys)


def test_ratio_stats_count_the_bounds_on_a_hand_example():
    draw = {"log_rho": [[np.log(3.0), 0.0], [np.log(0.4), np.log(1.5)], [np.log(6.0)]], "right": [1, 0, 1]}
    s = sampler_precision.ratio_stats(draw)
    assert (s["tokens"], s["replies"], s["sampled_accuracy"]) == (5, 3, pytest.approx(2 / 3))
    assert s["token"]["tis_truncated"] == 2 and s["token"]["mis_masked"] == 2  # 3 and 6 above 2; 0.4 and 6 off the band
    # per reply: 3, 0.6, 6: two above 2, one (6) off the band
    assert s["sequence"]["tis_truncated"] == 2 and s["sequence"]["mis_masked"] == 1


def test_comparisons_get_paired_intervals_and_verdicts_only_where_decided():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, (4, 50))
    better = np.where(rng.random((4, 50)) < 0.4, 1, base)  # about 0.2 more right on every seed
    per_seed = [{"right": {"a": base[s].tolist(), "b": better[s].tolist()}} for s in range(4)]
    changes, decided = field_arms.compare_arms(per_seed, [("b - a", "a", "b"), ("a - b", "b", "a")], ["b - a"], 100)
    want = paired.compare(base, better, 100)
    assert changes["b - a"]["per_seed"] == pytest.approx(want["per_seed"]) and list(decided) == ["b - a"]
    assert decided["b - a"]["verdict"] == "raised" and decided["b - a"]["family"] == 1
    assert decided["b - a"]["interval"] == pytest.approx(list(verdicts.t_interval(want["per_seed"], 0.95)))
    two = field_arms.compare_arms(per_seed[:2], [("b - a", "a", "b")], ["b - a"], 100)[1]
    assert two["b - a"]["verdict"].startswith("no verdict from 2 seed(s)")


def test_stale_samples_decides_only_the_primary_lag():
    b = {"lags": [0, 1, 8], "corrections": ["none", "tis", "mis"], "primary_lag": 8}
    comps, decided = stale_samples.comparisons(b)
    assert decided == ["none lag 8 - none lag 0", "tis - none, lag 8", "mis - none, lag 8"]
    assert ("tis - none, lag 1", "none lag 1", "tis lag 1") in comps  # described, not decided


@pytest.mark.parametrize("name, kw, text", [
    ("stale-samples", {"primary_lag": 3}, "primary_lag must be one of lags"),
    ("stale-samples", {"corrections": ("none", "icepop")}, "corrections some of"),
    ("sampler-precision", {"arms": ("none", "clip")}, "arms must be some of"),
    ("real-model-opd", {"steps": 4, "teacher_steps": 4}, "steps < teacher_steps"),
    ("teachers", {"rl_steps": 0}, "must be >= 1"),
])
def test_bad_budgets_fail_in_one_line_before_anything_trains(name, kw, text, tmp_path):
    with pytest.raises(ValueError, match=text):
        MODULES[name].run("tiny", str(tmp_path), seeds=1, progress=False, **kw)


def test_the_ratio_is_the_learners_log_prob_minus_the_samplers_on_the_samplers_tokens(tiny_folder, monkeypatch):
    from dataclasses import replace

    from unified_rl.data import samplers
    from unified_rl.lab import make_lab
    b = sampler_precision.BUDGETS["tiny"]
    lab = make_lab(sampler_precision.world(replace(b, model=tiny_folder)), 0)
    real = samplers.source_of

    class Shifted:  # the learner's own draw, its recorded log-probs 0.75 below the learner's on the response
        def __init__(self, source):
            self.source = source

        def next_batch(self):
            batch = self.source.next_batch()
            return replace(batch, logp=batch.logp - 0.75 * batch.mask)

    monkeypatch.setattr(samplers, "source_of", lambda m, lab: Shifted(real(m, lab)))
    draw = sampler_precision.ratio_draw(lab, b, "same")
    tokens = [x for row in draw["log_rho"] for x in row]
    assert tokens and np.allclose(tokens, 0.75, atol=1e-4)  # learner - sampler: positive where the sampler is lower
    assert len(draw["log_rho"]) == b.ratio_questions * b.ratio_replies == len(draw["right"])
