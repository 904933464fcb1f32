"""The §5.2 experiments end to end at the tiny preset with one seed (seconds each): each writes its
JSON with the documented keys and its PNG; the CLI dispatches to them; bad input is a ValueError.
No training outcome is asserted: the tiny preset learns nothing."""

import dataclasses
import json
import math
import os
import subprocess
import sys

import pytest

from unified_rl.experiments import (EXPERIMENTS, common, data_source, figure7, noisy_reward, policy_family, real_model,
                                   preference_family, reward_function)
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
                                "policy-family-peers"}  # the methods TRL and verl ship


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
    ([0.05, 0.30, 0.05], "no clear change"),  # mean 0.133: within the sample std 0.144 (not the population's 0.118)
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
    diff = _differences(json.loads(json.dumps(got)), want)
    assert not diff, diff[:5]


def _markdown(notebook):
    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "course", f"{notebook}.ipynb")) as f:
        return "".join("".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "markdown")


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


def test_notebook_07_quotes_the_verdict():
    full = common.load_shipped("figure7")
    _skip_if_outdated(full)
    v, d, K = full["verdict"], full["delta_rl_minus_sft"], full["verdict"]["k"]
    ks = full["k"]
    maj = lambda k: _num(d["maj_at_k"][ks.index(k)]["mean"], "+.3f")  # noqa: E731
    pas = lambda k: _num(d["pass_at_k"][ks.index(k)]["mean"], "+.3f")  # noqa: E731
    _quotes("07_why_rl_works",
            f"The SFT models' Maj@{K} were {_and(v['sft_maj_per_seed'])}",
            f"Maj@{K} by {_and(v['maj_at_k']['per_seed'], '+.3f')}; Pass@{K} by {_and(v['pass_at_k']['per_seed'], '+.3f')}",
            f"({maj(1)} at K = 1, {maj(64)} at K = 64)", f"({pas(1)} at K = 1, {pas(16)} at K = 16, {pas(64)} at K = 64)",
            f"({full['headline']['greedy accuracy (RL questions)']['sft'].replace(' +/- ', ' ± ')} right)")
    assert v["maj_at_k"]["change"] == v["pass_at_k"]["change"] == "raised"  # "RL raised Maj@16, and Pass@16 too"
    _quotes("07_why_rl_works", f"**Verdict: RL raised Maj@{K}, and Pass@{K} too, on every seed**")


def _per_seed_diff(r, arm_a, arm_b, key, test="in-distribution", k=32):
    """arm_a minus arm_b within each seed of the shipped data-source run."""
    i = r["k"].index(k)
    out = []
    for s in r["per_seed"]:
        x, y = s[arm_a][test][key], s[arm_b][test][key]
        out.append((x[i] - y[i]) if isinstance(x, list) else (x - y))
    return out


def test_notebook_08_quotes_the_data_source_comparisons():
    r = common.load_shipped("data-source")
    _skip_if_outdated(r)
    signed = lambda xs: ", ".join(_num(x, "+.3f") for x in xs)  # noqa: E731
    unseen = lambda key: _per_seed_diff(r, "unseen-questions", "sft-questions", key)  # noqa: E731
    _quotes("08_more_effective_rl",
            f"(greedy {_and([s['sft']['in-distribution']['greedy'] for s in r['per_seed']])})",
            f"on every seed** ({_and(unseen('greedy'), '+.3f')}), but not in Maj@32 ({signed(unseen('maj_at_k'))}) "
            f"or Pass@32 ({signed(unseen('pass_at_k'))})")
    steps = _per_seed_diff(r, "harder-process", "sft", "step_accuracy", test="harder")
    greedy = _per_seed_diff(r, "harder-process", "sft", "greedy")
    _quotes("08_more_effective_rl", f"hardly changes ({', '.join(_num(x, '+.3f').replace('+0.000', '0.000') for x in steps)})",
            f"badly damaged ({_num(greedy[2], '+.3f')}; the other two seeds {_num(greedy[0], '+.3f')} and "
            f"{_num(greedy[1], '+.3f')})")
    assert all(s[a]["harder"]["greedy"] == 0 for s in r["per_seed"] for a in ("sft", *data_source.ARMS))


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


def test_notebook_12_quotes_the_shipped_real_model_run():
    """Notebook 12's reading of the shipped Figure 7 run on SmolLM2 quotes its numbers and verdicts: the base
    model's start, and per arm the differences at K = 1 and the largest K with both intervals and the verdict."""
    r = common.load_shipped("real-model")
    assert r["preset"] == "cpu" and len(r["per_seed"]) == r["seeds"]
    text = _markdown("12_real_model")
    K, base = r["k"][-1], r["mean"]["base"]
    ci = lambda c, key: f"[{c[key][0]:+.3f}, {c[key][1]:+.3f}]"  # noqa: E731
    quoted = [f"Pass@{K} {base['pass_at_k'][-1]:.3f}", f"Maj@{K} {base['maj_at_k'][-1]:.3f}",
              f"{base['sampled_cut']:.1%} of its sampled replies"]
    for arm in r["arms"]:
        for key, k in (("pass_at_k", 1), ("pass_at_k", K), ("maj_at_k", K)):
            c = r["change"][arm][key][r["k"].index(k)]
            if r["seeds"] >= figure7.MIN_SEEDS_FOR_A_VERDICT:
                quoted.append(f"{c['mean']:+.3f} (95 % over seeds {ci(c, 'seeds_ci')}, over questions "
                              f"{ci(c, 'questions_ci')}), {c['verdict']}")
            else:  # one seed's interval has no width: the questions' alone, and no verdict
                quoted.append(f"{c['mean']:+.3f} (95 % over questions {ci(c, 'questions_ci')})")
        quoted.append(r["change"][arm]["picture"]["sentence"])
    missing = [q for q in quoted if q not in text]
    assert not missing, f"notebook 12 does not quote {missing} from the shipped real-model run"