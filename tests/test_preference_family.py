"""The preference-family experiment: end to end at the tiny preset (its JSON, PNG and CLI), its
first-order measure of what a DPO step does to the chosen answer, and bad input. No training outcome
is asserted at the tiny preset: it learns nothing."""

import json
import math
import os

import matplotlib.pyplot as plt
import pytest
import torch

from unified_rl import cli
from unified_rl.experiments import EXPERIMENTS, preference_family as PF
from unified_rl.sampling import cat_rollouts
from unified_rl.trainer import make_lab


@pytest.mark.slow  # an end-to-end run of every arm at the tiny preset
def test_tiny_run_writes_every_arm(tmp_path):
    result = PF.run("tiny", str(tmp_path), seeds=1, progress=False)
    with open(tmp_path / "preference-family.json") as f:
        on_disk = json.load(f)
    assert os.path.getsize(tmp_path / "preference-family.png") > 1000
    assert list(on_disk["arms"]) == list(PF.ARMS) == list(result["arms"])
    assert on_disk["arms"]["sft-on-chosen"] == {"method": "orpo", "settings": {"orpo_lambda": 0.0},
                                                "lr": 1e-4, "hparams": {"orpo_lambda": 0.0}}
    steps = on_disk["budget"]["steps"]
    for arm in PF.ARMS:
        run = on_disk["per_seed"][0]["arms"][arm]
        assert run["probe"]["step"] == list(range(steps + 1))  # before every step, and after the last
        assert all(math.isfinite(v) for k in PF.PROBED for v in run["probe"][k])
        assert 0 <= run["accuracy"] <= 1 and [c[0] for c in run["curve"]] == list(range(1, steps + 1))
        assert set(run["alignment"]) == {"cos_mean", "cos_median", "x_plus_lowered"}
        assert set(on_disk["end"][arm]) == set(PF.PROBED) and "accuracy" in on_disk["headline"][arm]


@pytest.mark.slow
def test_the_cli_runs_it(tmp_path, capsys):
    assert "preference-family" in EXPERIMENTS
    cli.main(["reproduce", "preference-family", "--preset", "tiny", "--seeds", "1", "--out", str(tmp_path),
              "--quiet"])
    assert "SFT held-out accuracy" in capsys.readouterr().out


def test_alignment_of_identical_answers_is_one():
    """A pair whose chosen and rejected answers are the same text: their gradients coincide, and the
    DPO step (c (g+ - g-) = 0) moves no chosen log-prob."""
    lab = make_lab("tiny")
    pairs = PF.probe_pairs(lab, 3, lambda r: torch.arange(len(r)).remainder(2).float(), seed=0)
    B = len(pairs) // 2
    same = cat_rollouts([pairs.select(range(B)), pairs.select(range(B))], pad_token_id=lab.tokenizer.pad_token_id)
    a = PF.gradient_alignment(lab.policy, lab.ref, same, beta=0.5)
    assert a["cos_mean"] == pytest.approx(1.0, abs=1e-5) and a["x_plus_lowered"] == 0.0
    b = PF.gradient_alignment(lab.policy, lab.ref, pairs, beta=0.5)
    assert -1 <= b["cos_mean"] < 0.999


def test_bad_input_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="unknown arm 'rlhf'"):
        PF.run("tiny", str(tmp_path), seeds=1, progress=False, arms=("dpo", "rlhf"))
    with pytest.raises(ValueError, match="unknown budget field"):
        PF.run("tiny", str(tmp_path), seeds=1, progress=False, epochs=3)
    with pytest.raises(ValueError, match="seeds"):
        PF.run("tiny", str(tmp_path), seeds=0, progress=False)


def test_probe_pairs_are_the_same_whatever_ran_before():
    lab = make_lab("tiny")
    coin = lambda r: torch.randint(0, 2, (len(r),)).float()  # noqa: E731 - drawn from the global generator
    first = PF.probe_pairs(lab, 3, coin, seed=1)
    torch.rand(7)
    again = PF.probe_pairs(lab, 3, coin, seed=1)
    assert first.texts == again.texts and torch.equal(first.input_ids, again.input_ids)


def _f(s, d=3, sign=""):
    return f"{s['mean']:{sign}.{d}f} ± {s['std']:.{d}f}"


def test_the_shipped_run_backs_what_notebook_11_says():
    """The full cpu run shipped with the course, and every number and claim notebook 11 takes from it."""
    from unified_rl.experiments.common import load_shipped

    r = load_shipped("preference-family")
    assert r["preset"] == "cpu" and r["seeds"] == 3 and len(r["per_seed"]) == 3 and list(r["arms"]) == list(PF.ARMS)
    assert r["provenance"]["uncommitted_changes"] is False and r["provenance"]["commit"]
    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "course", "11_preference_family.ipynb")) as f:
        text = "".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "markdown")
    acc, end, al = r["accuracy"], r["end"], r["alignment"]
    quoted = [_f(acc[a]) for a in PF.ARMS if a != "dpo-fast"] + [_f(acc["dpo-fast"])]
    quoted += [f"{row['sft']:.3f}" for row in r["per_seed"]]
    quoted += [_f(r["alignment_sft"]["cos_mean"], 2, "+"), _f(al["dpo-fast"]["cos_mean"], 2, "+"),
               _f(al["dpo-fast"]["cos_median"], 2, "+"), _f(al["dpo"]["cos_mean"], 2, "+"),
               _f(r["alignment_sft"]["x_plus_lowered"], 2), _f(al["dpo-fast"]["x_plus_lowered"], 2),
               _f(end["dpo-fast"]["x_chosen"], 3, "+"), _f(end["dpo-fast"]["x_rejected"], 3, "+"),
               _f(end["dpo-fast"]["chosen_fell"], 2), _f(end["dpo"]["chosen_fell"], 2), _f(end["dpo"]["x_chosen"], 3, "+"),
               _f(end["orpo"]["x_chosen"], 3, "+"), _f(end["sft-on-chosen"]["x_chosen"], 3, "+"),
               _f(end["ipo"]["x_chosen"], 3, "+")]
    from unified_rl.course.nb_preference import alignment_findings, findings
    said = "\n".join(findings(r) + alignment_findings(r))  # what the notebook prints, computed from the result
    missing = [q for q in quoted if q not in said]
    assert not missing, f"notebook 11's findings do not state {missing} from the shipped run"
    typed = [q for q in quoted if q in text]
    assert not typed, f"notebook 11's markdown types shipped numbers by hand: {typed}"
    # the claims the prose makes in words
    seeds = r["per_seed"]
    assert max(acc, key=lambda a: acc[a]["mean"]) == "orpo"
    for row in seeds:
        arms = row["arms"]
        assert arms["dpo-fast"]["accuracy"] < arms["dpo"]["accuracy"]  # twice the rate ends lower, every seed
        assert arms["dpo-fast"]["probe"]["x_chosen"][-1] < 0 < arms["orpo"]["probe"]["x_chosen"][-1]
        assert arms["sft-on-chosen"]["probe"]["x_chosen"][-1] > 0
        assert all(arms["orpo"]["probe"]["x_chosen"][-1] > arms[a]["probe"]["x_chosen"][-1]
                   for a in ("dpo", "ipo", "simpo", "kto"))  # notebook 11, Q5
        x = arms["dpo"]["probe"]["x_chosen"]
        assert x[-1] < max(x)  # at DPO's own rate x+ rose, then fell
        margin = arms["dpo-fast"]["probe"]["margin"]
        assert all(b > a for a, b in zip(margin, margin[1:]))  # while the margin kept growing
        assert arms["sft-on-chosen"]["accuracy"] > max(arms[a]["accuracy"] for a in ("dpo", "ipo", "simpo", "kto"))
    strong = max(seeds, key=lambda row: row["sft"])
    assert all(strong["arms"][a]["accuracy"] <= strong["sft"] for a in ("dpo", "ipo", "simpo", "kto"))
    assert strong["arms"]["orpo"]["accuracy"] > strong["sft"]
    fig = PF.plot(r)
    assert len(fig.axes) == 3
    plt.close(fig)
