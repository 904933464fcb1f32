"""The §5.2 experiments end to end at the tiny preset with one seed (seconds each): each writes its
JSON with the documented keys and its PNG; the CLI dispatches to them; bad input is a ValueError.
No training outcome is asserted: the tiny preset learns nothing."""

import dataclasses
import json
import math
import os
import re
import subprocess
import sys

import _quoted_numbers as _q
import _quoted_readings as _r
import numpy as np
import pytest

from unified_rl.experiments import (EXPERIMENTS, common, data_source, figure7, noisy_reward, policy_family, real_model,
                                   preference_family, reward_function, verdicts)
from unified_rl.presets import get_preset


def _read(out, name):
    with open(os.path.join(out, f"{name}.json")) as f:
        result = json.load(f)
    assert os.path.getsize(os.path.join(out, f"{name}.png")) > 1000
    return result


def _finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def test_registry_names_every_experiment():
    assert set(EXPERIMENTS) == {"figure7", "data-source", "noisy-reward", "reward-function", "policy-family",
                                "preference-family", "real-model",
                                "policy-family-peers",  # the methods TRL and verl ship
                                "teachers", "stale-samples", "sampler-precision", "real-model-opd"}  # the 2026 field's


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
    assert v["k"] == 4 and v["maj_at_k"]["verdict"].startswith("no verdict from 1 seed")  # one seed decides nothing
    assert v["sentence"] == "Maj@4 and Pass@4: no verdict from 1 seed(s) (needs 3)"
    assert on_disk["headline"]["verdict"] == v["sentence"] and _finite(on_disk["seconds"]["wall_s"])
    q = figure7.per_question(on_disk, 0)
    assert q["questions"] == 4 and 0 <= q["lost"] <= 4


# --- the course's one verdict rule (experiments/verdicts.py)

@pytest.mark.parametrize("p, df", [(0.975, 1), (0.975, 2), (0.9875, 2), (0.99375, 2), (0.9, 1), (0.6, 2)])
def test_t_quantile_matches_the_closed_forms(p, df):
    """Student's t has closed forms at df = 1 (Cauchy) and df = 2; the bisection on the incomplete beta
    must meet them (a wrong continued fraction, or a tail counted once instead of halved, would not)."""
    exact = math.tan(math.pi * (p - 0.5)) if df == 1 else (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    assert verdicts.t_quantile(p, df) == pytest.approx(exact, rel=1e-9)
    assert verdicts.t_quantile(1 - p, df) == pytest.approx(-exact, rel=1e-9)


def test_t_quantile_matches_the_printed_tables():
    for df, want in ((4, 2.776), (10, 2.228), (30, 2.042), (1000, 1.962)):
        assert verdicts.t_quantile(0.975, df) == pytest.approx(want, abs=6e-4)
    with pytest.raises(ValueError):
        verdicts.t_quantile(1.0, 2)


def test_simultaneous_intervals_cover_every_true_mean_95_percent_of_the_time():
    """m = 4 differences, 3 seeds each, normal noise: the four Bonferroni intervals contain all four true
    means in >= 95 % of 4000 draws (Bonferroni promises it; about 95.3 % here), where four unadjusted
    95 % intervals hold together only about 0.95^4 = 81 % of the time (the planted slip the test catches)."""
    rng = np.random.default_rng(0)
    truth = np.array([0.0, 0.1, -0.05, 0.2])
    draws = truth[None, :, None] + rng.normal(0, 0.1, (4000, 4, 3))  # (reps, m, seeds)
    def together(level):
        return np.mean([all(lo <= t <= hi for t, (lo, hi) in zip(truth, (verdicts.t_interval(d, level) for d in rep)))
                        for rep in draws])
    assert together(1 - 0.05 / 4) >= 0.94  # 4000 draws: the estimate's sd is 0.0034
    assert together(0.95) < 0.86


def test_verdict_words_follow_the_simultaneous_interval():
    up, noisy, flat = [0.20, 0.21, 0.19], [0.10, 0.20, -0.01], [0.001, -0.002, 0.0]
    v = verdicts.family({"a": (up, [0.4] * 3)})
    assert v["a"]["verdict"] == "raised" and v["a"]["level"] == 0.95 and v["a"]["interval"][0] > 0
    assert verdicts.family({"a": ([-x for x in up], [0.4] * 3)})["a"]["verdict"] == "lowered"
    assert verdicts.family({"a": (noisy, [0.4] * 3)})["a"]["verdict"] == "no clear change"
    assert verdicts.family({"a": (flat, [0.4] * 3)})["a"]["verdict"] == "no change"  # inside +/- 0.05
    # the same flat difference at a start with no room to rise by the margin says nothing
    assert verdicts.family({"a": (flat, [0.98] * 3)})["a"]["verdict"] == "no clear change"
    assert verdicts.family({"a": ([0.2, 0.1], [0.4] * 2)})["a"]["verdict"] == "no verdict from 2 seed(s) (needs 3)"
    # read alone a difference is raised; read with three others its interval widens past 0
    alone = [0.15, 0.30, 0.20]
    assert verdicts.family({"a": (alone, [0.4] * 3)})["a"]["verdict"] == "raised"
    four = verdicts.family({n: (alone, [0.4] * 3) for n in "abcd"})
    assert four["a"]["verdict"] == "no clear change" and four["a"]["level"] == 1 - 0.05 / 4
    d = np.array(alone)
    half = verdicts.t_quantile(1 - 0.05 / 8, 2) * d.std(ddof=1) / math.sqrt(3)
    assert four["a"]["interval"] == pytest.approx([d.mean() - half, d.mean() + half])
    with pytest.raises(ValueError):
        verdicts.family({"a": ([0.1, 0.2, 0.3], [0.4, 0.4])})


def test_primary_k_and_headroom():
    assert verdicts.primary_k([1, 2, 4, 8, 16, 32, 64]) == 16 and verdicts.primary_k([1, 2, 4]) == 4
    counts = np.array([[64, 0, 50], [63, 2, 64]])  # (seeds, questions) right of 64
    h = verdicts.headroom(counts, 64, [1, 16, 64])
    from unified_rl.metrics import pass_at_k
    brute = [1 - np.mean([[pass_at_k(64, int(c), k) for c in row] for row in counts]) for k in (1, 16, 64)]
    assert h["largest_rise"] == pytest.approx(brute)
    # K = 1: no question is sure on both seeds; K = 16 and 64: the first (0 and 1 wrong) and the third (14 and
    # 0 wrong); the second (64 and 62 wrong) never is: one of 64 draws would have to be right on its first seed
    assert h["at_ceiling"] == [0, 2, 2] and h["can_rise"] == [3, 1, 1]


def test_the_primary_k_is_the_largest_at_which_every_question_can_rise_in_both_shipped_runs():
    """verdicts' doc: at K = 16 no held-out question of either shipped run starts at Pass@16 = 1 on every
    seed; at K = 32 some do (and at 64: 183 of the lab's 200, 37 of SmolLM2's 48). Reads the start only."""
    lab, real = common.load_shipped("figure7"), common.load_shipped("real-model")
    for r in (lab, real):
        h = r["headroom"]
        i = h["k"].index(verdicts.PRIMARY_K)
        assert h["at_ceiling"][i] == 0 < h["at_ceiling"][i + 1]
    assert (lab["headroom"]["at_ceiling"][-1], real["headroom"]["at_ceiling"][-1]) == (183, 37)


def test_figure7_verdict_sentence():
    b = figure7.Budget(headline_k=2, samples=4)
    seed = lambda sft_maj, rl_maj, sft_pass, rl_pass: {  # noqa: E731
        "sft": {"maj_at_k": [0, sft_maj, 0], "pass_at_k": [0, sft_pass, 0]},
        "rl": {"maj_at_k": [0, rl_maj, 0], "pass_at_k": [0, rl_pass, 0]}}
    ks = [1, 2, 4]
    sharpened = [seed(0.4, 0.6, 0.8, 0.80), seed(0.5, 0.7, 0.9, 0.89), seed(0.45, 0.66, 0.85, 0.86)]
    v = figure7.verdict(ks, sharpened, b)
    assert v["mid_range_start"] and v["maj_at_k"]["verdict"] == "raised" and v["pass_at_k"]["verdict"] == "no change"
    assert v["maj_at_k"]["family"] == 2 and "as in the paper's Figure 7 (Pass@2 unchanged" in v["sentence"]
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


SUMMARISE = {"figure7": lambda r, b: figure7.summarise(r["k"], r["per_seed"], get_preset(r["preset"]), b, r["seeds"],
                                                         r["seconds"]),
             "data-source": lambda r, b: data_source.summarise(r["per_seed"], get_preset(r["preset"]), b, r["seeds"],
                                                               r["seconds"], r["k"]),
             "real-model": lambda r, b: real_model.summarise(r["per_seed"], r["questions"], r["budgets_considered"],
                                                             get_preset(r["preset"]), b, r["seeds"], r["seconds"])}
MODULES = {"figure7": figure7, "data-source": data_source, "noisy-reward": noisy_reward,
           "reward-function": reward_function, "policy-family": policy_family, "preference-family": preference_family,
           "real-model": real_model}


def _budget(module, saved):
    """The experiment's Budget as the shipped run recorded it (JSON lists back to tuples)."""
    kw = {}
    for f in dataclasses.fields(module.Budget):
        if f.name in saved:
            v = saved[f.name]
            kw[f.name] = tuple(v) if isinstance(f.default, tuple) and isinstance(v, list) else v
    return module.Budget(**kw)


def _differences(got, want, path=""):
    if isinstance(got, dict) and isinstance(want, dict):
        if set(got) != set(want):
            return [f"{path}: keys {sorted(set(got) ^ set(want))}"]
        return [d for k in want for d in _differences(got[k], want[k], f"{path}.{k}")]
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return [f"{path}: {len(got)} entries, shipped {len(want)}"]
        return [d for i, (x, y) in enumerate(zip(got, want)) for d in _differences(x, y, f"{path}[{i}]")]
    if isinstance(got, float) or isinstance(want, float):
        ok = got is not None and want is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
        return [] if ok else [f"{path}: {got} computed, {want} shipped"]
    return [] if got == want else [f"{path}: {got!r} computed, {want!r} shipped"]


@pytest.mark.parametrize("name", list(MODULES))
def test_shipped_results_are_what_the_code_computes_from_their_seeds(name):
    """Every mean, spread, verdict and headline of a shipped run, recomputed by the package from the
    run's per-seed numbers: a change to the statistics (a std over seeds without ddof=1, a verdict
    rule) shows here, where a test that reads the JSON back could never fail."""
    r = common.load_shipped(name)
    module, b = MODULES[name], _budget(MODULES[name], r["budget"])
    if name in SUMMARISE:
        got = SUMMARISE[name](r, b)
    else:
        got = module.summarise(r["per_seed"], get_preset(r["preset"]), b, r["seeds"], r["seconds"])
    want = {k: v for k, v in r.items() if k not in ("provenance", "loaded_from")}
    got = json.loads(json.dumps(got))
    if name == "policy-family" and "aggregation_names" not in r:  # written before the aggregations took verl's names
        assert got.pop("aggregation_names") == "verl"
    diff = _differences(got, want)
    assert not diff, diff[:5]


RULE_DERIVED = {"figure7": ("verdict", "headroom", "headline.verdict"), "real-model": ("verdicts", "headroom", "headline")}


@pytest.mark.parametrize("name", list(RULE_DERIVED))
def test_loading_recomputes_only_what_the_rule_derives(name):
    """The shipped JSON is not edited: reading it back rebuilds the verdicts (and what the rule reads) from its
    stored per-seed numbers; every measured number, mean and question interval is the stored one. (The
    real model's per-K intervals over seeds are recomputed from the stored per-seed differences with an exact
    t quantile; they move in the fifth decimal at most.)"""
    with open(os.path.join(common.SHIPPED, f"{name}-cpu.json")) as f:
        raw = json.load(f)
    loaded = json.loads(json.dumps({k: v for k, v in common.load_shipped(name).items() if k != "loaded_from"}))
    assert set(loaded) - set(raw) <= {"verdicts", "headroom"} and set(raw) <= set(loaded)
    for arm in raw.get("arms", ()):  # the older layout's readings the rule replaces: a picture per arm, a verdict per K
        raw["change"][arm].pop("picture")
        for key in ("pass_at_k", "maj_at_k"):
            for x in raw["change"][arm][key]:
                x.pop("verdict")
    diff = [d.split(":")[0] for k in raw for d in _differences(loaded[k], raw[k], f".{k}")]
    derived = re.compile(r"\.change\.[\w-]+\.(pass|maj)_at_k\[\d\]\.seeds_ci\[[01]\]$")  # exact t, from per_seed
    other = [d for d in diff if not derived.match(d) and not any(d.startswith("." + p) for p in RULE_DERIVED[name])]
    assert not other, other[:5]
    for arm in raw.get("arms", ()):
        for key in ("pass_at_k", "maj_at_k"):
            for x, y in zip(raw["change"][arm][key], loaded["change"][arm][key]):
                assert x["seeds_ci"] == pytest.approx(y["seeds_ci"], abs=1e-4) and x["per_seed"] == y["per_seed"]


def _markdown(notebook):
    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "course", f"{notebook}.ipynb")) as f:
        return "\n\n".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "markdown")


def _num(x, spec=".3f"):
    """A number as the notebooks print it: a true minus sign, a plus sign where the spec asks for one."""
    return format(x, spec).replace("-", "\u2212")


def _and(xs, spec=".3f"):
    """'a, b and c' as the notebooks list one number per seed."""
    xs = [_num(x, spec) for x in xs]
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def _quotes(notebook, *sentences):
    text = _markdown(notebook)
    missing = [s for s in sentences if s not in text]
    assert not missing, f"{notebook} no longer says what the shipped run holds: {missing}"


def test_notebook_07_quotes_the_per_question_counts():
    full = common.load_shipped("figure7")
    _skip_if_outdated(full)
    seeds = [figure7.per_question(full, seed) for seed in range(full["seeds"])]
    rare = [(s["sft"] > 0) & (s["sft"] < 0.1) for s in seeds]
    _quotes("07_why_rl_works",
            f"RL solved {_and([s['gained'] for s in seeds], 'd')} held-out questions that no SFT sample had "
            f"solved, and lost {_and([s['lost'] for s in seeds], 'd')}",
            f"({_and([int(r.sum()) for r in rare], 'd')} of them), most were solved *more* often after RL "
            f"({_and([int((s['rl'][r] > s['sft'][r]).sum()) for s, r in zip(seeds, rare)], 'd')})")


def _census(text, fragments, allowed):
    missing, loose = _q.unaccounted(text, fragments, allowed)
    assert not missing, f"no longer said as the shipped result holds it: {missing}"
    assert not loose, f"numbers no cell prints and no test reads from a shipped result: {loose}"


def test_notebook_07_quotes_the_verdict_and_every_number_is_accounted_for():
    """Every number in notebook 07's prose is a quoted fragment built here from the shipped run, the budget,
    the rule and the sharpening it computes, or a name (an equation, a section) or a value listed with the
    cell that prints it. The twin keeps the same numbers (test_zh_edition)."""
    _census(_markdown("07_why_rl_works"), *_q.notebook_07())


def test_notebook_12_quotes_the_shipped_real_model_run_and_every_number_is_accounted_for():
    _census(_markdown("12_real_model"), *_q.notebook_12())


def test_the_readme_quotes_the_real_model_run_and_every_number_is_accounted_for():
    _census(*_q.readme())


def test_the_results_page_quotes_the_real_model_run_and_every_number_is_accounted_for():
    _census(*_q.results_page())


def test_the_results_page_quotes_the_2026_fields_runs_and_every_number_is_accounted_for():
    _census(*_q.field_page())


def _census_readings(text, fragments, allowed):
    _census(text, fragments, allowed)
    typed = _r.typed_verdicts(text, fragments)
    assert not typed, f"verdicts typed outside what the shipped result and the rule give: {typed}"


def test_notebook_10_quotes_the_policy_family_verdicts_and_every_number_is_accounted_for():
    """Every number, verdict word and sign count in notebook 10's policy-family readings (sections 11 and 13, the
    summary) is a fragment rebuilt from the shipped results through verdicts.family, or a budget's or the rule's
    number; no "every seed" or verdict word stands outside them."""
    _census_readings(*_r.notebook_10())


def test_notebook_11_quotes_the_preference_family_verdicts_and_every_number_is_accounted_for():
    """Sections 7 and 8 of notebook 11: as notebook 10's readings (the 8 comparisons read together)."""
    _census_readings(*_r.notebook_11())


def test_notebook_08_quotes_its_three_runs_verdicts_and_every_number_is_accounted_for():
    """The cells of notebook 08 that read the shipped data-source, noisy-reward and reward-function runs (and its
    summary): every number, verdict and sign count is a fragment rebuilt from the runs, or a budget's or the rule's."""
    _census_readings(*_r.notebook_08())


GLOSSARY_VERDICTS = {"raised": "提高了", "lowered": "降低了", "no change": "没有变化", "no clear change": "没有明确变化"}
PRINTED = {"policy-family": ("10_beyond_grpo", "full"), "policy-family-peers": ("10_beyond_grpo", "shipped_peers"),
           "preference-family": ("11_preference_family", "result"), "data-source": ("08_more_effective_rl", "decided"),
           "noisy-reward": ("08_more_effective_rl", "decided"), "reward-function": ("08_more_effective_rl", "decided")}


def _code(notebook):
    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "course", f"{notebook}.ipynb")) as f:
        return "\n".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("name", list(PRINTED))
def test_the_verdicts_notebooks_08_10_and_11_print_are_verdicts_family_on_the_shipped_seeds(name):
    """The verdict table and sentences a notebook prints for a shipped run are `verdicts.family` over the comparisons
    typed in _quoted_readings (m of them), on per-seed numbers read here from the JSON: the same per-seed differences,
    interval, level, m and word, in English, and in the glossary's Chinese words in the twin. A verdict typed into the
    table, a comparison dropped from the family (a smaller m) or a sign count standing in for a verdict fails."""
    from unified_rl.course import nb_policy_gradient, nb_preference, readings
    from unified_rl.course.i18n import set_language

    r, fam = _r.decided(name)
    notebook, var = PRINTED[name]
    code = _code(notebook)
    assert f"readings.table(readings.decide({var}))" in code or "readings.table(decided)" in code
    want = [f"| `{a}` − `{b}` | {', '.join(f'{d:+.3f}' for d in v['per_seed'])} | {v['mean']:+.3f} | "
            f"[{v['interval'][0]:+.3f}, {v['interval'][1]:+.3f}] ({v['level']:.2%}, m = {v['family']}) | {_r.word(v)} |"
            for (a, b), v in zip(_r.PAIRS[name](r), fam.values())]
    printed = readings.table(readings.decide(r)).splitlines()
    assert printed[2:] == want
    words = [_r.word(v) for v in fam.values()]
    said = "\n".join(readings.summary(readings.decide(r)))
    for w in set(words):
        assert f"**{w}** ({words.count(w)} of {len(fam)})" in said
    findings = {"policy-family": nb_policy_gradient.findings, "policy-family-peers": nb_policy_gradient.findings,
                "preference-family": lambda x: nb_preference.findings(x) + nb_preference.alignment_findings(x)}
    if name in findings:  # the notebook's sentences carry the same verdicts, and each contrast they name
        text = "\n".join(findings[name](r))
        assert said in text
        named = {"policy-family": ["dapo - grpo", "dr-grpo (seq-mean-token-mean) - grpo",
                                   "dr-grpo - dr-grpo (seq-mean-token-mean)",
                                   "dr-grpo (token-mean) - dr-grpo (seq-mean-token-mean)"],
                 "preference-family": ["orpo - sft-on-chosen", "dpo-fast - dpo", "ipo - dpo-fast"]}.get(name, [])
        for k in named:
            v = fam[k]
            assert f"{v['mean']:+.3f} [{v['interval'][0]:+.3f}, {v['interval'][1]:+.3f}] ({_r.word(v)})" in text, k
        assert " ahead" not in text and "every seed" not in text
    try:
        set_language("zh")
        shown = [row.rsplit("|", 2)[1].strip() for row in readings.table(readings.decide(r)).splitlines()[2:]]
    finally:
        set_language("en")
    assert shown == [GLOSSARY_VERDICTS[w] for w in words]


def test_the_readings_census_catches_a_typed_verdict_and_a_stale_number():
    """Notebook 10's readings: a verdict word or an "every seed" typed outside the rebuilt fragments, a changed
    verdict, and a stale interval each fail the census."""
    text, fragments, allowed = _r.notebook_10()
    assert _r.typed_verdicts(text, fragments) == [] and _q.unaccounted(text, fragments, allowed) == ([], [])
    typed = text.replace("- **Same seed, not raw means.**", "- **GSPO raised accuracy.** **Same seed, not raw means.**")
    assert _r.typed_verdicts(typed, fragments) == ["raised"]
    sign = text.replace("(+0.015 on average)", "(+0.015 on average, ahead on every seed)")
    assert _r.typed_verdicts(sign, fragments) and _q.unaccounted(sign, fragments, allowed)[0]
    flipped = text.replace("VESPO, *lowered*", "VESPO, *no clear change*")
    assert _q.unaccounted(flipped, fragments, allowed)[0]
    stale = text.replace("[−0.443, +0.210]", "[−0.443, +0.211]")
    assert _q.unaccounted(stale, fragments, allowed)[0]


def test_the_twins_use_the_glossary_verdict_words_where_the_readings_quote_one():
    """Each verdict word notebooks 08, 10 and 11 quote in italics is quoted as often, in the glossary's Chinese, in
    their twins' same cells."""
    for notebook, ids in (("08_more_effective_rl", _r.NOTEBOOK_08), ("10_beyond_grpo", _r.NOTEBOOK_10),
                          ("11_preference_family", _r.NOTEBOOK_11)):
        en, zh = _r.cells(notebook, ids), _r.cells(notebook, ids, "zh")
        for word, chinese in GLOSSARY_VERDICTS.items():
            assert en.count(f"*{word}*") == zh.count(f"*{chinese}*"), (notebook, word)
        assert "没有明显变化" not in zh and "无明显变化" not in zh


def test_the_census_catches_a_stale_number():
    """The census fails on a number no fragment or name accounts for (the old "12 steps"), and on a quoted
    number that no longer matches (an interval's last digit)."""
    fragments, allowed = _q.notebook_12()
    text = _markdown("12_real_model")
    stale = text.replace("for the experiment's 8 steps", "for the experiment's 12 steps")
    assert _q.unaccounted(stale, fragments, allowed)[1] == ["12"]
    drifted = text.replace("[-0.101, +0.369]", "[-0.101, +0.368]")
    assert _q.unaccounted(drifted, fragments, allowed)[0]


def test_notebook_08_quotes_the_reward_model_story():
    r = common.load_shipped("reward-function")
    _skip_if_outdated(r)
    rm = [s["reward_model"] for s in r["per_seed"]]
    assert all(x["val_auc"] > 0.6 for x in rm)  # "clearly better than chance"
    assert all(0.2 <= x["val_right_frac"] <= 0.4 for x in rm)  # "a fifth to a third of the samples right"
    learned = [s["arms"]["learned"] for s in r["per_seed"]]
    a, b = (x["curve"]["accuracy"] for x in learned[:2])
    _quotes("08_more_effective_rl", f"(held-out accuracy {_num(a[0])} → {_num(a[1])} and {_num(b[0])} → {_num(b[1])} "
            f"after {r['budget']['eval_every']} steps)",
            f"the full run trains it for {r['budget']['rm_steps']:,} steps on {rm[0]['train_samples']:,}")
    assert all(x["final_accuracy"] < 0.3 for x in learned)  # "then collapses"
    assert all(x["reward_seen"][-1] > x["reward_seen"][0] for x in learned)  # the reward it sees keeps rising


def test_notebook_08_quotes_the_noisy_reward_readings():
    r = common.load_shipped("noisy-reward")
    _skip_if_outdated(r)
    runs = [s["runs"] for s in r["per_seed"]]
    sft = _and([s["sft"] for s in r["per_seed"]])
    right = [f"{round(100 * a)} %" for a in sorted(x["rft@0.0"]["true_batch_accuracy"] for x in runs)]
    # the within-seed table: common.fmt's "mean +/- std", printed with a sign
    cell = lambda s: ("+" if s["mean"] >= 0 else "") + _num(s["mean"], ".2f") + common.fmt(s, 2)[len(f"{s['mean']:.2f}"):] \
        .replace(" +/- ", " ± ")  # noqa: E731
    rows = {m: " | ".join(cell(s) for s in r["change_vs_least_noise"][m][1:]) for m in r["methods"]}
    names = {"rft": "RFT", "online-rft": "online RFT", "dpo": "DPO", "grpo": "GRPO"}
    _quotes("08_more_effective_rl", f"SFT models differ ({sft})",
            f"right {', '.join(right[:-1])} and {right[-1]} of the time",
            *[f"| {names[m]} | {rows[m]} |" for m in r["methods"]],
            f"({_and([x['online-rft@0.4']['accuracy'] for x in runs])} against {sft})")


def test_the_twins_quote_each_verdict_as_the_chinese_edition_prints_it():
    """Notebooks 07 and 12 quote verdict sentences the package prints; each edition quotes them in its own
    language, word for word as `str()` shows them there (one form per verdict: the catalogue's)."""
    from unified_rl.course.i18n import set_language
    lab, real = common.load_shipped("figure7"), common.load_shipped("real-model")
    sentences = {"07_why_rl_works": [lab["verdict"]["sentence"]],
                 "12_real_model": [lab["verdict"]["sentence"], real["verdicts"]["arms"]["grpo"]["sentence"],
                                   real["verdicts"]["arms"]["dpo-on-policy"]["sentence"]]}
    root = os.path.dirname(os.path.dirname(__file__))
    for name, quoted in sentences.items():
        assert all(str(s) in _markdown(name) for s in quoted)
        with open(os.path.join(root, "course", "zh", f"{name}.ipynb")) as f:
            zh = "\n\n".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "markdown")
        try:
            set_language("zh")
            shown = [str(s) for s in quoted]
        finally:
            set_language("en")
        missing = [s for s in shown if s not in zh]
        assert not missing, f"zh/{name} does not quote the verdict as the Chinese edition prints it: {missing}"
        assert "没有明显变化" not in zh and "无明显变化" not in zh
