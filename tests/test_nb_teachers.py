"""Notebook 13's helpers and explorers (course/nb_teachers.py, course/widgets_teachers.py).

Each check is two computations that can disagree: the reverse KL over the whole vocabulary by autograd against
eq 5's surrogate with the package's `opd` part on every token (a planted wrong part fails it); a corrected
composition's objective against its coefficient on a rounded sampler's batch (a coefficient 1 % off fails it);
the lag `by_lag` assigns each step against the lag the sampler's own snapshots give; the verdicts and sentences
about a shipped result against `field_arms`' stored verdicts and the words of `verdicts.word`, on results built to
reach each verdict; the explorers' numbers against the package's functions called directly.
"""

import copy
import dataclasses

import numpy as np
import pytest
import torch

from unified_rl.course import i18n, nb_teachers
from unified_rl.course.explorer import SHORT
from unified_rl.course.widgets_teachers import coefficients, sampler_explorer, teacher_explorer, teacher_probs
from unified_rl.experiments import stale_samples, teachers, verdicts
from unified_rl.lab import make_lab
from unified_rl.methods import METHODS, recompose
from unified_rl.methods.table import GRPO_MASKS
from unified_rl.parts.advantages.teacher import opd
from unified_rl.parts.policy_terms.gkd import gkd
from unified_rl.parts.sampler_corrections import in_band, truncated
from unified_rl.trainer import train


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


@pytest.fixture(scope="module")
def lab():
    return make_lab("tiny", seed=0)


def moved(model, scale=0.05, seed=1):
    """A frozen copy of `model` with every parameter moved: a teacher that is not the policy."""
    out = copy.deepcopy(model).requires_grad_(False)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in out.parameters():
            p.add_(scale * torch.randn(p.shape, generator=g))
    return out


def test_the_whole_vocabulary_check_agrees_and_fails_where_it_should(lab, monkeypatch):
    r = nb_teachers.vocabulary_check(lab.policy, moved(lab.policy), lab.tokenizer, lab.test_problems)
    assert r["opd"] < 1e-12 and r["no_stop_gradient"] > 1e-2 and r["positions"] > 4
    monkeypatch.setattr(nb_teachers, "opd", lambda t, lp, m: -opd(t, lp, m))  # the log-ratio the wrong way round
    assert nb_teachers.vocabulary_check(lab.policy, moved(lab.policy), lab.tokenizer, lab.test_problems)["opd"] > 1
    monkeypatch.setattr(nb_teachers, "opd", lambda t, lp, m: opd(t, lp, m) * 1.01)  # 1 % too large
    assert nb_teachers.vocabulary_check(lab.policy, moved(lab.policy), lab.tokenizer, lab.test_problems)["opd"] > 1e-3


def test_the_sampler_oracle_sees_a_rounded_samplers_ratio_and_a_wrong_coefficient(lab):
    lab_t = dataclasses.replace(lab, teacher=moved(lab.policy))
    for method in (recompose("grpo", masks=GRPO_MASKS + ("tis",)), recompose("opd", masks=("tis",)),
                   recompose("grpo", masks=GRPO_MASKS + ("mis",))):
        if method.reward is not None:  # the tiny model answers nothing right: coin flips give GRPO advantages
            g = torch.Generator().manual_seed(0)
            method = dataclasses.replace(method, reward=lambda r, g=g: torch.randint(0, 2, (len(r),), generator=g).float())
        r = nb_teachers.sampler_oracle(lab_t, method, "q4_1")
        assert r["diff"] < 1e-10 and r["log_rho"].abs().max() > 1e-3, method.name
    assert nb_teachers.sampler_oracle(lab_t, METHODS["grpo"], "same")["log_rho"].abs().max() < 1e-5  # the learner
    m = recompose("opd", masks=("tis",))
    wrong = dataclasses.replace(m, coefficient=lambda step: 1.01 * m.coefficient(step))
    assert nb_teachers.sampler_oracle(lab_t, wrong, "q4_1")["diff"] > 1e-3


def test_by_lag_reads_each_step_at_the_lag_the_sampler_drew_it():
    records = [torch.full((2,), float(s)) for s in range(6)]  # step s + 1's records hold s
    got = nb_teachers.by_lag(records, 2)
    assert sorted(got) == [0, 1, 2] and got[0].tolist() == [0, 0] and got[1].tolist() == [1, 1]
    assert got[2].tolist() == [2, 2, 3, 3, 4, 4, 5, 5]  # steps 3 to 6 were all drawn 2 steps stale
    assert sorted(nb_teachers.by_lag(records, 0)) == [0]


def test_a_recorded_stale_run_has_ratio_1_at_lag_0_only():
    coins = dataclasses.replace(METHODS["grpo"], reward=lambda r: torch.randint(0, 2, (len(r),)).float())
    probe, records = nb_teachers.recording(coins)  # coin-flip rewards: the tiny model answers nothing right
    train(probe, preset="tiny", steps=4, sampler_lag=2, lr=1e-3, beta=0.0, seed=1, progress=False, eval_every=0)
    got = nb_teachers.by_lag(records, 2)
    assert len(records) == 4 and got[0].abs().max() < 1e-5  # the first batch: drawn by the learner itself
    assert got[1].abs().max() > 1e-3 and got[2].abs().max() > 1e-3


# --- the shipped experiments: verdicts and sentences from per-seed answers built to reach each verdict

def _answers(rate, n, seed):
    """n right/wrong answers with `rate` of them right (the first ones), as a list of 0/1."""
    k = int(round(rate * n))
    return [1] * k + [0] * (n - k)


def teachers_result(opd_minus_grpo, seeds=3, n=40):
    """A teachers result whose opd arm answers `opd_minus_grpo[s]` more questions right than grpo on seed s."""
    per_seed = []
    for s, gap in enumerate(opd_minus_grpo):
        base = 0.4 + 0.05 * s
        right = {"start": _answers(base - 0.1, n, s), "teacher": _answers(base + 0.2, n, s),
                 "grpo": _answers(base, n, s), "opd": _answers(base + gap, n, s), "sft-teacher": _answers(base, n, s)}
        curve = [{"step": 1.0, "eval_accuracy": base, "sampled_tokens": 100.0}]
        runs = {a: {"curve": curve, "sampled_tokens": 100.0} for a in teachers.ARMS}
        runs["teacher"] = {"sampled_tokens": 100.0}
        per_seed.append({"seed": s, "right": right, "runs": runs})
    result = {"experiment": "teachers", "seeds": len(per_seed), "budget": {"rl_steps": 2, "teacher_steps": 2,
              "bootstrap": 50}, "per_seed": per_seed, "seconds": {"wall_s": 1.0, "cpu_s": 1.0}}
    return teachers.derive(result)


@pytest.mark.parametrize("gaps,word,says", [
    ((0.3, 0.25, 0.3), verdicts.RAISED, "lies above 0"),
    ((-0.3, -0.25, -0.3), verdicts.LOWERED, "lies below 0"),
    ((0.0, 0.0, 0.0), verdicts.NO_CHANGE, "lies inside +/- 0.05"),
    ((0.3, -0.3, 0.0), verdicts.UNCLEAR, "holds 0 and reaches past"),
])
def test_the_verdict_sentences_say_what_the_interval_supports(gaps, word, says):
    result = teachers_result(gaps)
    decided = nb_teachers.teacher_decisions(result)
    assert decided["opd - grpo"]["verdict"] == word == result["verdicts"]["opd - grpo"]["verdict"]  # field_arms'
    line = next(x for x in nb_teachers.teachers_findings(result) if x.startswith("opd - grpo:"))
    assert says in line and word in line
    assert all(w not in line for w in verdicts.WORDS if w != word and w not in word)


def test_few_seeds_get_no_verdict_and_the_descriptive_comparisons_none_either():
    result = teachers_result((0.3, 0.3))
    lines = nb_teachers.teachers_findings(result)
    assert any("no verdict from 2 seed(s)" in x for x in lines) and any("the rule needs 3" in x for x in lines)
    described = [x for x in lines if x.startswith("teacher - start")]
    assert described and "descriptive: no verdict" in described[0] and "raised" not in described[0]


def test_the_stale_sentences_decide_the_primary_lag_only_and_speak_chinese():
    b = {"lags": [0, 2], "corrections": ["none", "tis", "mis"], "primary_lag": 2, "rl_steps": 3, "bootstrap": 50}
    per_seed = []
    for s in range(3):
        right = {"start": _answers(0.4, 40, s)}
        runs = {}
        for k in b["lags"]:
            for c in b["corrections"]:
                right[stale_samples.label(c, k)] = _answers(0.5 - 0.2 * (k == 2 and c == "none"), 40, s)
                runs[stale_samples.label(c, k)] = {"curve": [{"step": 3.0, "eval_accuracy": 0.5}], "zero_gc_frac": 0.1}
        per_seed.append({"seed": s, "right": right, "runs": runs})
    result = stale_samples.derive({"experiment": "stale-samples", "seeds": 3, "budget": b, "per_seed": per_seed,
                                   "arms": ["start"] + [stale_samples.label(c, k) for k in b["lags"]
                                                        for c in b["corrections"]],
                                   "seconds": {"wall_s": 1.0, "cpu_s": 1.0}})
    decided = nb_teachers.stale_decisions(result)
    assert set(decided) == {"none lag 2 - none lag 0", "tis - none, lag 2", "mis - none, lag 2"}
    assert decided["none lag 2 - none lag 0"]["verdict"] == verdicts.LOWERED
    assert decided["tis - none, lag 2"]["verdict"] == verdicts.RAISED
    assert "| 2 | 0.300 ± 0.000 (0.100)" in nb_teachers.stale_table(result)
    i18n.set_language("zh")
    lines = nb_teachers.stale_findings(result)
    assert any("降低了" in x and "none lag 2 - none lag 0" in x for x in lines)
    assert any("提高了" in x and "tis - none, lag 2" in x for x in lines)


# --- the explorers

def test_the_teacher_explorer_shows_the_packages_coefficients():
    ex = teacher_explorer(p=0.3, temperature=1.7, beta=0.35, token=1)
    q = float(torch.softmax(torch.tensor([2.0, 1.0, 0.3, -0.5, -1.5], dtype=torch.float64) / 1.7, 0)[1])
    one, lp, lq = (torch.tensor([[x]], dtype=torch.float64) for x in (1.0, 0.3, q))
    assert ex.data["q"] == pytest.approx(q) and ex.error is None and len(ex.image.value) > 1000
    assert ex.data["opd"] == pytest.approx(opd(lq.log(), lp.log(), one).item())
    assert ex.data["gkd"] == pytest.approx(gkd(one, lp.log(), lq.log(), one, 0.35).item())
    assert ex.data["forward"] == pytest.approx((q - 0.3) / 0.7)  # beta = 0: (q - p) / (1 - p)
    c = coefficients(torch.tensor([q], dtype=torch.float64), q, 0.6)
    assert all(abs(float(v[0])) < 1e-12 for v in c.values())  # pi_theta = pi_T: every coefficient 0
    assert teacher_probs(0.5)[0] > teacher_probs(1.0)[0] > teacher_probs(3.0)[0]  # a cooler teacher, a sharper top
    with pytest.raises(ValueError, match="temperature"):
        teacher_probs(0.0)


def test_the_sampler_explorer_counts_what_tis_and_mis_act_on():
    g = torch.Generator().manual_seed(0)
    log_rho = {0: torch.zeros(20, dtype=torch.float64), 3: 0.8 * torch.randn(500, generator=g, dtype=torch.float64)}
    ex = sampler_explorer(log_rho)
    assert ex.data["lag"] == 3 and ex.error is None
    with ex.hold():
        ex.controls["cap"].value, ex.controls["low"].value, ex.controls["high"].value = 1.5, 0.8, 1.25
    rho = log_rho[3].exp()
    s = ex.data["stats"][3]
    assert s["tis"] == pytest.approx(float((rho > 1.5).double().mean())) and s["tis"] > 0
    assert s["mis"] == pytest.approx(float(((rho < 0.8) | (rho > 1.25)).double().mean())) and s["mis"] > 0
    assert s["tis_weight"] == pytest.approx(float(truncated(rho, 1.5).mean()))
    assert ex.data["stats"][0]["tis"] == 0 and ex.data["stats"][0]["mis"] == 0  # rho = 1: nothing to do
    assert float(in_band(rho, 0.8, 1.25).mean()) == pytest.approx(1 - s["mis"])
    with pytest.raises(ValueError, match="at least one lag"):
        sampler_explorer({})


def test_every_slider_keeps_a_usable_track():
    for ex in (teacher_explorer(), sampler_explorer({0: np.zeros(3)})):
        for name, control in ex.controls.items():
            assert len(control.description) <= SHORT, name  # a longer one moves to a label above the control
