"""The §5.2 experiments end to end at the tiny preset with one seed (seconds each): each writes its
JSON with the documented keys and its PNG; the CLI dispatches to them; bad input is a ValueError.
No training outcome is asserted: the tiny preset learns nothing."""

import json
import math
import os
import subprocess
import sys

import pytest

from unified_rl.experiments import EXPERIMENTS, common, data_source, figure7, noisy_reward, reward_function


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def _read(out, name):
    with open(os.path.join(out, f"{name}.json")) as f:
        result = json.load(f)
    assert os.path.getsize(os.path.join(out, f"{name}.png")) > 1000
    return result


def _finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def test_registry_names_every_experiment():
    assert set(EXPERIMENTS) == {"figure7", "data-source", "noisy-reward", "reward-function", "policy-family",
                                "preference-family"}


@pytest.mark.slow  # an end-to-end run of the experiment at the tiny preset
def test_figure7(tmp_path):
    result = figure7.run("tiny", str(tmp_path), seeds=1, progress=False)
    on_disk = _read(tmp_path, "figure7")
    assert on_disk["k"] == result["k"] == [1, 2, 4]  # the tiny budget samples 4 answers per question
    for model in ("sft", "rl"):
        for key in ("pass_at_k", "maj_at_k"):
            assert len(on_disk[model][key]) == 3 and all(0 <= v <= 1 for v in on_disk[model][key])
            assert len(on_disk["spread"][model][key]) == 3
        # Maj@1 and Pass@1 are the same number: one sample, right or wrong
        assert on_disk[model]["pass_at_k"][0] == pytest.approx(on_disk[model]["maj_at_k"][0])
    assert len(on_disk["per_seed"]) == 1 and {"sft", "rl", "seed"} <= set(on_disk["per_seed"][0])
    assert len(on_disk["per_seed"][0]["sft"]["hits"]) == on_disk["budget"]["k_problems"]
    v = on_disk["verdict"]
    assert v["k"] == 4 and v["maj_at_k"]["change"].startswith("no verdict from 1 seed")  # one seed decides nothing
    assert v["sentence"].startswith("no verdict from 1 seed(s), a verdict needs 3; RL - SFT at K = 4")
    assert on_disk["headline"]["verdict"] == v["sentence"] and _finite(on_disk["seconds"]["wall_s"])
    q = figure7.per_question(on_disk, 0)
    assert q["questions"] == 4 and 0 <= q["lost"] <= 4


@pytest.mark.parametrize("diffs, word", [
    ([0.10, 0.20, 0.15], "raised"), ([-0.1, -0.2, -0.15], "lowered"),
    ([0.10, 0.20, -0.01], "no clear change"),  # one seed disagrees
    ([0.01, 0.30, 0.01], "no clear change"),  # every seed agrees, but the mean is within the spread
    ([0.2, 0.1], "no verdict from 2 seed(s) (needs 3)")])
def test_figure7_verdict_needs_every_seed_and_a_mean_beyond_the_spread(diffs, word):
    assert figure7.change(diffs) == word


def test_figure7_verdict_sentence():
    b = figure7.Budget(headline_k=2, samples=4)
    seed = lambda sft_maj, rl_maj, sft_pass, rl_pass: {  # noqa: E731
        "sft": {"maj_at_k": [0, sft_maj, 0], "pass_at_k": [0, sft_pass, 0]},
        "rl": {"maj_at_k": [0, rl_maj, 0], "pass_at_k": [0, rl_pass, 0]}}
    ks = [1, 2, 4]
    sharpened = [seed(0.4, 0.6, 0.8, 0.80), seed(0.5, 0.7, 0.9, 0.89), seed(0.45, 0.66, 0.85, 0.86)]
    v = figure7.verdict(ks, sharpened, b)
    assert v["mid_range_start"] and v["maj_at_k"]["change"] == "raised" and v["pass_at_k"]["change"] != "raised"
    assert "as in the paper's Figure 7" in v["sentence"]
    both = [seed(0.4, 0.6, 0.8, 0.9), seed(0.5, 0.7, 0.8, 0.88), seed(0.45, 0.66, 0.8, 0.87)]
    assert "unlike the paper's Figure 7" in figure7.verdict(ks, both, b)["sentence"]
    ceiling = [seed(0.98, 0.97, 0.99, 0.99)] * 3
    v = figure7.verdict(ks, ceiling, b)
    assert not v["mid_range_start"] and "pick another sft_steps" in v["sentence"]


@pytest.mark.slow  # an end-to-end run of the experiment at the tiny preset
def test_data_source(tmp_path):
    data_source.run("tiny", str(tmp_path), seeds=1, progress=False)
    r = _read(tmp_path, "data-source")
    assert r["arms"] == list(data_source.ARMS)
    for model in ("sft", *data_source.ARMS):
        for test in data_source.TESTS:
            curves = r["mean"][model][test]
            assert _finite(curves["greedy"]) and len(curves["pass_at_k"]) == len(r["k"])
    assert "headline" in r


@pytest.mark.slow  # an end-to-end run of the experiment at the tiny preset
def test_noisy_reward(tmp_path):
    noisy_reward.run("tiny", str(tmp_path), seeds=1, progress=False)
    r = _read(tmp_path, "noisy-reward")
    assert r["methods"] == ["rft", "online-rft", "dpo", "grpo"]
    for name in r["methods"]:
        assert len(r["accuracy"][name]) == len(r["flip_probs"])
        assert all(_finite(s["mean"]) for s in r["accuracy"][name])
    runs = r["per_seed"][0]["runs"]
    assert len(runs) == len(r["methods"]) * len(r["flip_probs"])
    assert "headline" in r


@pytest.mark.slow  # an end-to-end run of the experiment at the tiny preset
def test_reward_function(tmp_path):
    reward_function.run("tiny", str(tmp_path), seeds=1, progress=False)
    r = _read(tmp_path, "reward-function")
    assert r["arms"] == ["outcome", "process", "learned"]
    for arm in r["arms"]:
        curve = r["curve"][arm]
        assert len(curve["samples"]) == len(curve["accuracy"]) == len(curve["wall_s"])
        assert curve["samples"] == sorted(curve["samples"])
    # the learned reward's curve starts after the samples that trained its reward model
    assert r["curve"]["learned"]["samples"][0] > 0 == r["curve"]["outcome"]["samples"][0]
    assert 0 <= r["reward_model"]["val_accuracy"]["mean"] <= 1
    assert len(r["per_seed"][0]["arms"]["learned"]["examples"][0]) == 3  # prompt, reference, response
    assert "headline" in r


def test_noisy_method_flips_dpo_pairs_too():
    m = noisy_reward.noisy_method("dpo", 0.2, seed=0)
    assert m.reward.flip_prob == 0.2
    with pytest.raises(ValueError, match="use a reward"):
        noisy_reward.noisy_method("sft", 0.2, seed=0)


@pytest.mark.parametrize("call, match", [
    (lambda out: figure7.run("tiny", out, seeds=0), "seeds"),
    (lambda out: figure7.run("tiny", out, seeds=1, rl_questions=10_000), "rl_questions"),
    (lambda out: figure7.run("tiny", out, seeds=1, no_such_field=1), "unknown budget field"),
    (lambda out: figure7.run("tiny", out, seeds=1, headline_k=3), "headline_k"),
    (lambda out: figure7.run("tiny", out, seeds=1, mid_range=(0.7, 0.3)), "mid_range"),
    (lambda out: noisy_reward.run("tiny", out, seeds=1, flip_probs=(0.4, 0.1)), "flip_probs"),
    (lambda out: noisy_reward.run("tiny", out, seeds=1, methods=("ppo-ish",)), "use a reward"),
    (lambda out: figure7.run("nope", out, seeds=1), "unknown preset"),
])
def test_bad_input_is_a_clear_value_error(tmp_path, call, match):
    with pytest.raises(ValueError, match=match):
        call(str(tmp_path))


def test_harder_questions_must_fit_the_model():
    from unified_rl.presets import get_preset
    preset = get_preset("cpu")
    common.check_fits(preset, preset.task.harder(1))  # 3 digits fit the cpu model's 32 positions
    with pytest.raises(ValueError, match="positions"):
        common.check_fits(preset, preset.task.harder(3))


def test_powers_of_two():
    assert common.powers_of_two(64) == [1, 2, 4, 8, 16, 32, 64]
    assert common.powers_of_two(5) == [1, 2, 4]
    with pytest.raises(ValueError):
        common.powers_of_two(0)


@pytest.mark.slow
def test_cli_reproduce(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "unified_rl", "reproduce", "figure7", "--preset", "tiny", "--seeds", "1",
                        "--out", str(tmp_path), "--quiet"], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    head = json.loads(p.stdout)
    assert "sft" in head["Pass@4"] and "verdict" in head  # the headline: SFT vs RL at K = 4, and the verdict
    assert _read(tmp_path, "figure7")["seeds"] == 1


# --- the full runs that ship with the course, and the numbers notebooks 07 and 08 quote from them

def _quoted(name, h):
    """The headline values of a shipped run that the notebook's tables print as "mean ± std"."""
    if name == "figure7":
        return [h[key][m] for m in ("sft", "rl") for key in ("greedy accuracy (held-out)", "Maj@1 = Pass@1", "Maj@16",
                                                              "Pass@16", "Maj@64", "Pass@64")] + \
               [h[f"RL - SFT, {key}"] for key in ("Maj@16", "Pass@16", "Maj@64", "Pass@64")]
    if name == "noisy-reward":
        return [h["SFT held-out accuracy"]] + [h[m][f"p={p}"] for m in ("rft", "online-rft", "dpo", "grpo")
                                              for p in (0.0, 0.1, 0.2, 0.4)]
    if name == "data-source":
        return [h[f"{arm} on in-distribution"][key] for arm in ("sft", *data_source.ARMS)
                for key in ("greedy", "Maj@32", "Pass@32")] + \
               [h[f"{arm} on harder"]["steps right (greedy)"] for arm in ("sft", *data_source.ARMS)]
    return [h["SFT held-out accuracy (eval set)"], h["reward model held-out accuracy"], h["reward model held-out AUC"],
            h["majority-class baseline"], h["reward model AUC on its training samples"],
            h["reward model AUC on the trained policy's samples"]] + \
           [h[arm]["held-out accuracy"] for arm in reward_function.ARMS] + [h[arm]["CPU s"] for arm in reward_function.ARMS]


def _skip_if_outdated(result):
    """The shipped runs are being remade with the current code (figure7 from a mid-range SFT start, the
    reward model that learns); until then the old ones are not what the notebooks describe."""
    if "provenance" not in result:
        pytest.xfail(f"the shipped {result['experiment']} run predates the current code; it is being regenerated")


EXPERIMENTS_PLOT = {"figure7": figure7.plot, "noisy-reward": noisy_reward.plot, "data-source": data_source.plot,
                    "reward-function": reward_function.plot}


@pytest.mark.parametrize("name, notebook", [("figure7", "07_why_rl_works"), ("noisy-reward", "08_more_effective_rl"),
                                            ("data-source", "08_more_effective_rl"),
                                            ("reward-function", "08_more_effective_rl")])
def test_shipped_full_runs_match_the_notebooks(name, notebook):
    result = common.load_shipped(name)
    _skip_if_outdated(result)
    assert result["preset"] == "cpu" and result["seeds"] == 3 and len(result["per_seed"]) == 3
    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "course", f"{notebook}.ipynb")) as f:
        text = "".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "markdown")
    quoted = _quoted(name, result["headline"])
    assert len(quoted) >= 6
    missing = [q for q in quoted if q.replace(" +/- ", " ± ") not in text]
    assert not missing, f"{notebook} does not quote {missing} from the shipped {name} run"
    fig = EXPERIMENTS_PLOT[name](result)
    assert len(fig.axes) >= 2



def test_load_full_prefers_your_own_run(tmp_path):
    assert common.load_cached("figure7", "cpu") is None  # the private cache of these tests is empty
    assert common.load_full("figure7", "cpu")["loaded_from"].startswith("the full run shipped")
    mine = dict(common.load_shipped("figure7"), seeds=5)
    path = common.cached_result_path("figure7", "cpu")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(mine, f)
    assert common.load_full("figure7", "cpu")["seeds"] == 5
    with pytest.raises(ValueError, match="no shipped result for 'figure8'"):
        common.load_shipped("figure8")


def test_per_question_counts_on_the_shipped_run():
    full = common.load_shipped("figure7")
    _skip_if_outdated(full)
    seeds = [figure7.per_question(full, seed) for seed in range(3)]
    assert all(s["questions"] == 200 for s in seeds)
    # what notebook 07 quotes: "RL solved 4, 4 and 5 held-out questions that no SFT sample had solved, and
    # lost 1, 0 and 1. Of the questions the SFT model solved in fewer than 10 % of its samples (44, 39 and
    # 33 of them), most were solved *more* often after RL (35, 37 and 27)."
    assert [s["gained"] for s in seeds] == [4, 4, 5] and [s["lost"] for s in seeds] == [1, 0, 1]
    rare = [(s["sft"] > 0) & (s["sft"] < 0.1) for s in seeds]
    assert [int(r.sum()) for r in rare] == [44, 39, 33]
    assert [int((s["rl"][r] > s["sft"][r]).sum()) for s, r in zip(seeds, rare)] == [35, 37, 27]


def test_the_figure7_verdict_notebook_07_states():
    full = common.load_shipped("figure7")
    _skip_if_outdated(full)
    v = full["verdict"]
    # "The SFT models' Maj@16 were 0.324, 0.396 and 0.454": mid-range, so the question can go either way
    assert [round(x, 3) for x in v["sft_maj_per_seed"]] == [0.324, 0.396, 0.454] and v["mid_range_start"]
    # "Maj@16 by +0.152, +0.266 and +0.207; Pass@16 by +0.064, +0.096 and +0.050": raised on every seed
    assert [round(x, 3) for x in v["maj_at_k"]["per_seed"]] == [0.152, 0.266, 0.207]
    assert [round(x, 3) for x in v["pass_at_k"]["per_seed"]] == [0.064, 0.096, 0.050]
    assert v["maj_at_k"]["change"] == v["pass_at_k"]["change"] == "raised"
    # "+0.138 at K = 1, +0.220 at K = 64 ... +0.138 at K = 1, +0.070 at K = 16, +0.018 at K = 64"
    d = full["delta_rl_minus_sft"]
    assert [round(d["maj_at_k"][i]["mean"], 3) for i in (0, 6)] == [0.138, 0.220]
    assert [round(d["pass_at_k"][i]["mean"], 3) for i in (0, 4, 6)] == [0.138, 0.070, 0.018]
    assert full["pass_at_k_rl_below_sft_from_k"] is None
    assert full["headline"]["greedy accuracy (RL questions)"] == {"sft": "0.517 +/- 0.021", "rl": "0.762 +/- 0.069"}


def _per_seed_diff(r, arm_a, arm_b, key, test="in-distribution", k=32):
    """arm_a minus arm_b within each seed of the shipped data-source run, rounded as notebook 08 quotes it."""
    i = r["k"].index(k)
    out = []
    for s in r["per_seed"]:
        x, y = s[arm_a][test][key], s[arm_b][test][key]
        out.append(round((x[i] - y[i]) if isinstance(x, list) else (x - y), 3))
    return out


def test_the_data_source_comparisons_notebook_08_states():
    r = common.load_shipped("data-source")
    _skip_if_outdated(r)
    assert [round(s["sft"]["in-distribution"]["greedy"], 3) for s in r["per_seed"]] == [0.372, 0.358, 0.836]
    assert _per_seed_diff(r, "unseen-questions", "sft-questions", "greedy") == [0.036, 0.09, 0.064]
    assert _per_seed_diff(r, "unseen-questions", "sft-questions", "maj_at_k") == [-0.08, 0.07, 0.095]
    assert _per_seed_diff(r, "unseen-questions", "sft-questions", "pass_at_k") == [-0.02, -0.01, 0.01]
    assert _per_seed_diff(r, "harder-questions", "sft", "greedy") == [0.0, 0.0, -0.024]
    assert _per_seed_diff(r, "harder-process", "sft", "step_accuracy", test="harder") == [0.001, 0.0, 0.01]
    assert _per_seed_diff(r, "harder-process", "sft", "greedy") == [0.012, -0.072, -0.454]
    assert all(s[a]["harder"]["greedy"] == 0 for s in r["per_seed"] for a in ("sft", *data_source.ARMS))


def test_the_reward_model_story_notebook_08_tells():
    r = common.load_shipped("reward-function")
    _skip_if_outdated(r)
    rm = [s["reward_model"] for s in r["per_seed"]]
    assert all(x["val_auc"] > 0.6 for x in rm)  # it learns: clearly above chance on held-out questions
    assert [x["train_samples"] for x in rm] == [8000] * 3
    assert [round(x["val_right_frac"], 1) for x in rm] == [0.2, 0.2, 0.4]  # "a fifth to a third"... of the samples right
    learned = [s["arms"]["learned"] for s in r["per_seed"]]
    # "held-out accuracy 0.367 -> 0.449 and 0.363 -> 0.531 after 10 steps, then collapses"
    assert [round(a["curve"]["accuracy"][i], 3) for a in learned[:2] for i in (0, 1)] == [0.367, 0.449, 0.363, 0.531]
    assert all(a["final_accuracy"] < 0.3 for a in learned)
    assert all(a["reward_seen"][-1] > a["reward_seen"][0] for a in learned)  # the reward it sees keeps rising
    assert learned[0]["examples"][1][::2] == ["90+01=", "8;11;1;=118"] and learned[1]["examples"][0][::2] == ["03+61=", "5;5;=56"]


def test_the_noisy_reward_readings_notebook_08_states():
    r = common.load_shipped("noisy-reward")
    _skip_if_outdated(r)
    runs = [s["runs"] for s in r["per_seed"]]
    assert [round(s["sft"], 3) for s in r["per_seed"]] == [0.372, 0.358, 0.836]
    # "the SFT models' samples at temperature 1 are right 19 %, 23 % and 42 % of the time"
    assert sorted(round(x["rft@0.0"]["true_batch_accuracy"], 2) for x in runs) == [0.19, 0.23, 0.42]
    # the within-seed table, as printed ("-0.13 ± 0.11" ...)
    table = {m: [common.fmt(s, 2).replace(" +/- ", " ± ") for s in r["change_vs_least_noise"][m][1:]]
             for m in r["methods"]}
    assert table == {"rft": ["-0.13 ± 0.11", "-0.17 ± 0.12", "-0.24 ± 0.13"],
                     "online-rft": ["0.01 ± 0.01", "-0.09 ± 0.05", "-0.44 ± 0.18"],
                     "dpo": ["-0.07 ± 0.04", "-0.08 ± 0.07", "-0.11 ± 0.11"],
                     "grpo": ["0.03 ± 0.02", "-0.04 ± 0.09", "-0.23 ± 0.10"]}
    # "online RFT ends below its SFT model on all three seeds (0.128, 0.334 and 0.618)"; GRPO on one
    assert [round(x["online-rft@0.4"]["accuracy"], 3) for x in runs] == [0.128, 0.334, 0.618]
    assert [round(x["grpo@0.4"]["accuracy"], 3) for x in runs] == [0.45, 0.448, 0.712]
