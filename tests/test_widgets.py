"""Each explorer responds to its controls with the numbers the package computes, and shows them."""

import ipywidgets as W
import pytest
import torch

from unified_rl import advantages, coefficients
from unified_rl.course import explorer as xp
from unified_rl.course import nb_basics
from unified_rl.course import nb_pass_maj as pm
from unified_rl.course import section52_widgets as s52
from unified_rl.course import widgets as w
from unified_rl.course.plots import compare_runs, plot_coefficients, plot_pass_maj, plot_training

EXPLORERS = [w.dpo_explorer, w.ppo_explorer, w.grpo_explorer, w.rft_explorer, w.paradigm_explorer, s52.pass_maj_explorer,
             s52.noisy_reward_explorer, nb_basics.length_explorer]


def _main(ex):
    (name,) = [k for k, c in ex.controls.items() if w.MAIN in c._dom_classes]
    return name


def _assert_usable_tracks(ex):
    """A long description would squeeze the track to nothing: it becomes a label line instead."""
    for name, c in ex.controls.items():
        if isinstance(c, (W.FloatSlider, W.IntSlider)):
            assert len(c.description) <= xp.SHORT, (name, c.description)
        if isinstance(c, W.Dropdown):
            assert c.style.description_width == xp.DESCRIPTION_WIDTH
    labels = [x.children[0].value for x in _walk(ex) if isinstance(x, W.VBox) and x.children
              and isinstance(x.children[0], W.HTML) and x.children[0].value.startswith("<small>")]
    wanted = [c.url_label for c in ex.controls.values() if getattr(c, "url_label", None)]
    assert all(any(html_escape(lbl) in got for got in labels) for lbl in wanted)


@pytest.mark.parametrize("make", EXPLORERS, ids=lambda f: f.__name__)
def test_main_control_changes_the_output(make):
    ex = make()
    _assert_usable_tracks(ex)
    assert isinstance(ex, W.VBox) and ex.error is None
    assert w.OUTPUT in ex.output._dom_classes and ex.output in ex.children
    c = ex.controls[_main(ex)]
    table, png = ex.table.value, ex.image.value
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    c.value = c.min + 0.7 * (c.max - c.min) if isinstance(c.value, float) else c.min + 1
    assert ex.error is None
    assert ex.table.value != table and ex.image.value != png


def test_dpo_numbers_match_the_package():
    ex = w.dpo_explorer(beta=0.1, margin=0.0)
    with ex.hold():  # one redraw for both changes
        ex.controls["beta"].value = 0.5
        ex.controls["margin"].value = 2.0
    one, z = torch.ones(1, 1), torch.zeros(1, 1)
    c_pos, c_neg = coefficients.dpo(2.0 * one, z, one, z, z, one, 0.5)
    assert ex.data["coef_chosen"] == pytest.approx(c_pos.item())
    assert ex.data["coef_rejected"] == pytest.approx(c_neg.item())
    assert ex.data["eq14_printed"] == pytest.approx(c_pos.item() / 0.5)  # eq 14 misses exactly the factor beta
    assert f"{c_pos.item():.4f}" in ex.table.value


def test_ppo_numbers_match_the_package():
    ex = w.ppo_explorer()
    with ex.hold():
        ex.controls["gamma"].value, ex.controls["lam"].value = 0.9, 0.5
    v = torch.tensor([w.DEFAULT_VALUES], dtype=torch.float64)
    r = torch.zeros_like(v)
    r[0, -1] = 1.0
    adv, _ = advantages.gae(r, v, torch.ones_like(v), 0.9, 0.5)
    assert torch.allclose(ex.data["adv"], adv[0])
    assert f"{adv[0, 0].item():.4f}" in ex.table.value
    with ex.hold():
        ex.controls["clip_eps"].value, ex.controls["ratio"].value = 0.2, 1.3  # outside the clip range
    assert ex.data["coef_pos"] == 0.0 and ex.data["coef_neg"] == pytest.approx(-1.3)
    ex.controls["ratio"].value = 1.1  # inside: r * A
    assert ex.data["coef_pos"] == pytest.approx(1.1) and ex.data["coef_neg"] == pytest.approx(-1.1)


def test_grpo_numbers_match_the_package():
    ex = w.grpo_explorer(rewards=(1, 0, 0, 0, 1, 1), group_size=4, beta=0.0)
    assert torch.allclose(ex.data["adv"], advantages.group_relative(torch.tensor([1.0, 0, 0, 0]), 4).double())
    ex.controls["reward_1"].value = True  # flip the second answer to correct
    assert torch.allclose(ex.data["adv"], advantages.group_relative(torch.tensor([1.0, 1, 0, 0]), 4).double())
    ex.controls["group_size"].value = 5
    assert ex.data["adv"].shape == (5,) and ex.controls["reward_5"].layout.display == "none"
    with ex.hold():
        ex.controls["beta"].value, ex.controls["log_ratio"].value = 0.1, 1.0
    assert ex.data["kl_term"] == pytest.approx(0.1 * (torch.e - 1), rel=1e-6)  # beta * (pi_ref/pi - 1)
    with ex.hold():
        for i in range(5):
            ex.controls[f"reward_{i}"].value = True  # all correct: no signal, only the KL term
    assert torch.allclose(ex.data["coef"], torch.full((5,), 0.1 * (torch.e - 1), dtype=torch.float64))


def test_rft_kept_samples_grow_with_accuracy():
    ex = w.rft_explorer(n_samples=20, accuracy=0.0, policy_accuracy=1.0)
    assert ex.data["kept_offline"] == 0 and ex.data["kept_online"] == 20
    kept = []
    for a in (0.2, 0.5, 0.8):
        ex.controls["accuracy"].value = a
        kept.append(ex.data["kept_offline"])
    assert kept == sorted(kept) and kept[0] < kept[-1]
    assert torch.equal(ex.data["offline"], coefficients.rft((ex.data["offline"].amax(1) > 0).float(), ex.data["mask"]))


def test_paradigm_numbers_match_the_package():
    batch = w.synthetic_batch(B=8, T=6, seed=1)
    ex = w.paradigm_explorer(batch, beta=0.1, group_size=4)
    ex.controls["sample"].value = 3
    assert ex.controls["reward"].value == float(batch["rewards"][3])  # the slider shows the sample's reward
    with ex.hold():
        ex.controls["reward"].value = 0.0 if batch["rewards"][3] else 1.0
        ex.controls["grpo_beta"].value = 0.3
        ex.controls["sample"].value = 5  # moving on keeps the reward just set for sample 3
    rewards = batch["rewards"].clone()
    rewards[3] = ex.controls["reward"].value
    assert torch.equal(ex.data["rewards"], rewards)
    grpo = coefficients.grpo(rewards, 4, batch["logp"], batch["logp_ref"], batch["mask"], 0.3)
    assert torch.allclose(ex.data["coefs"]["GRPO"], grpo)
    assert torch.equal(ex.data["coefs"]["SFT"], batch["mask"])
    for c in ex.data["coefs"].values():
        assert (c[batch["mask"] == 0] == 0).all()
    dpo = ex.data["coefs"]["DPO"]
    assert torch.allclose(dpo[0::2].sum(-1) / batch["mask"][0::2].sum(-1),
                          -dpo[1::2].sum(-1) / batch["mask"][1::2].sum(-1))  # +c on chosen, -c on rejected
    r = rewards
    ic = [2 * k + int(r[2 * k] < r[2 * k + 1]) for k in range(4)]  # the higher reward is chosen
    ir = [2 * k + int(r[2 * k] >= r[2 * k + 1]) for k in range(4)]
    lp, ref, m = batch["logp"], batch["logp_ref"], batch["mask"]
    cc, cr = coefficients.dpo(lp[ic], ref[ic], m[ic], lp[ir], ref[ir], m[ir], 0.1)
    assert torch.allclose(dpo[ic], 2 * cc) and torch.allclose(dpo[ir], 2 * cr)  # what the trainer is handed
    ex.controls["group_size"].value = 8
    assert torch.allclose(ex.data["coefs"]["GRPO"],
                          coefficients.grpo(rewards, 8, batch["logp"], batch["logp_ref"], batch["mask"], 0.3))


def test_paradigm_betas_are_separate_and_the_scale_is_shared():
    batch = w.synthetic_batch(B=8, T=6, seed=1)
    ex = w.paradigm_explorer(batch, beta=0.1)
    assert "five panels" in ex.title and len(ex.data["coefs"]) == 5
    before = {k: v.clone() for k, v in ex.data["coefs"].items()}
    for name, moved in (("dpo_beta", "DPO"), ("grpo_beta", "GRPO"), ("ppo_beta", "PPO")):
        ex.controls[name].value = 0.5  # each beta moves its own method's panel and no other
        changed = {k for k, v in ex.data["coefs"].items() if not torch.allclose(v, before[k])}
        assert changed == {moved}, (name, changed)
        before = {k: v.clone() for k, v in ex.data["coefs"].items()}
    assert ex.data["vmax"] == pytest.approx(max(float(c.abs().max()) for c in ex.data["coefs"].values()))
    one = w.paradigm_coefficients(batch, beta=0.2)  # the old one-beta call still works
    three = w.paradigm_coefficients(batch, dpo_beta=0.2, grpo_beta=0.2, ppo_beta=0.2)
    assert all(torch.equal(one[k], three[k]) for k in one)


def test_sft_length_coefficient():
    ex = nb_basics.length_explorer(short=8, long=13)
    assert torch.allclose(ex.data["gc"], torch.ones(2, dtype=torch.float64))  # alpha = 0: eq 7, GC = 1
    eq7 = ex.data["reference"]["eq 7 (α = 0)"]
    assert torch.allclose(ex.data["per_response"], eq7[1]) and torch.allclose(eq7[1], torch.full((2,), 0.5).double())
    ex.controls["alpha"].value = 1.0  # alpha = 1: one token mean over the batch
    token = ex.data["reference"]["token mean (α = 1)"]
    assert torch.allclose(ex.data["per_token"], token[0]) and torch.allclose(ex.data["per_response"], token[1])
    assert ex.data["gc"][0].item() == pytest.approx(2 * 8 / (8 + 13))  # 01 Q1: GC = 2 n1 / (n1 + n2)
    with ex.hold():
        ex.controls["alpha"].value, ex.controls["n_long"].value = 0.5, 3
    assert ex.data["gc"].sum().item() == pytest.approx(4.0)  # B |o_i|^a / sum_j |o_j|^a sums to B


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def html_escape(s):
    import html
    return html.escape(s)


def test_hold_redraws_once():
    ex = w.dpo_explorer()
    png = ex.image.value
    with ex.hold():
        ex.controls["margin"].value = 4.0
        assert ex.image.value == png  # nothing redrawn while held
    assert ex.image.value != png and ex.data["margin"] == 4.0


def test_bad_input_shows_its_message_instead_of_raising():
    ex = w.dpo_explorer()
    ex._compute = lambda **kw: (_ for _ in ()).throw(ValueError("beta must be >= 0.0"))
    ex.refresh()
    assert ex.error == "beta must be >= 0.0" and "beta must be" in ex.table.value


def test_paradigm_rejects_bad_batches():
    with pytest.raises(ValueError, match="even number"):
        w.paradigm_coefficients(w.synthetic_batch(B=3), beta=0.1, group_size=3)
    with pytest.raises(ValueError, match="groups of 2 or more"):
        w.paradigm_explorer({**w.synthetic_batch(B=1), "rewards": torch.ones(1)})


def test_plots_return_figures_and_skip_missing_keys():
    import matplotlib.pyplot as plt

    metrics = [{"step": i, "reward": 0.1 * i, "accuracy": 0.05 * i} for i in range(5)]
    fig = plot_training(metrics, keys=("accuracy", "reward", "kl"), title="run")
    assert len(fig.axes) == 2  # kl is absent: skipped
    assert len(compare_runs({"a": metrics, "b": metrics[:3]}, key="reward").axes[0].lines) == 2
    fig = plot_pass_maj([1, 2, 4, 8], {"SFT": {"pass_at_k": [0.2, 0.3, 0.4, 0.5], "maj_at_k": [0.2, 0.2, 0.25, 0.3]}})
    assert fig.axes[0].get_xscale() == "log" and len(fig.axes) == 2
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    assert plot_coefficients(torch.tensor([[0.5, -0.5, 0.0]]), mask).axes
    with pytest.raises(ValueError, match="per-step dicts"):
        plot_training({"reward": [1, 2]})
    with pytest.raises(ValueError, match="3 values for 4 values of k"):
        plot_pass_maj([1, 2, 4, 8], {"x": {"pass_at_k": [0.1, 0.2, 0.3]}})
    with pytest.raises(ValueError, match="same \\(B, T\\)"):
        plot_coefficients(torch.zeros(2, 3), mask)
    plt.close("all")


def test_pass_maj_numbers_match_the_package():
    ex = s52.pass_maj_explorer(p_right=0.3, top_wrong_share=0.6, alpha=2.0)
    dist = pm.one_question(0.3, 0.6)
    assert dist["wrong-1"] == pytest.approx(0.42) and sum(dist.values()) == pytest.approx(1.0)
    sharp = pm.sharpen(dist, 2.0)
    assert ex.data["k"] == [1, 2, 4, 8, 16, 32, 64]
    for i, k in enumerate(ex.data["k"]):  # exact i.i.d. values (tests/test_pass_maj.py checks these by enumeration)
        assert ex.data["after"]["maj_at_k"][i] == pytest.approx(pm.maj_at_k_iid(sharp, "right", k), abs=1e-12)
        assert ex.data["after"]["pass_at_k"][i] == pytest.approx(pm.pass_at_k_iid(sharp["right"], k))
    # a right answer less likely than the dominant wrong one rarely wins a vote of 64 draws...
    assert ex.data["before"]["maj_at_k"][-1] < 0.2 and ex.data["before"]["pass_at_k"][-1] > 0.99
    # ...and once it is the most likely answer, sharpening makes the vote surer at every K > 1
    ex.controls["p_right"].value = 0.5
    b, a = ex.data["before"]["maj_at_k"], ex.data["after"]["maj_at_k"]
    assert a[-1] > 0.99 and all(y >= x - 1e-12 for x, y in zip(b, a))
    # sharpening a rare right answer costs Pass@K at large K
    with ex.hold():
        ex.controls["p_right"].value, ex.controls["alpha"].value = 0.05, 4.0
    assert ex.data["after"]["pass_at_k"][-1] < ex.data["before"]["pass_at_k"][-1]


@pytest.mark.parametrize("accuracy, eps", [(0.3, 0.1), (0.3, 0.2), (0.6, 0.4), (0.1, 0.2)])
def test_noisy_signal_against_bayes_rule(accuracy, eps):
    sim = s52.noisy_signal(accuracy, eps, 8, n_groups=4000)
    bayes = (1 - eps) * accuracy / ((1 - eps) * accuracy + eps * (1 - accuracy))  # P(right | kept)
    assert sim["rft_precision"] == pytest.approx(bayes, abs=0.03)
    assert sim["rft_kept"] == pytest.approx(eps + (1 - 2 * eps) * accuracy, abs=0.02)  # E[noisy reward]


def test_noisy_reward_explorer_limits():
    ex = s52.noisy_reward_explorer(flip_prob=0.0, accuracy=0.3, group_size=8)
    d = ex.data
    assert d["rft_precision"] == 1.0 and d["dpo_right"] == 1.0 and d["dpo_reversed"] == 0.0
    assert d["grpo_right_pushed_down"] == 0.0 and d["grpo_adv_right"] > 0 > d["grpo_adv_wrong"]
    ex.controls["flip_prob"].value = 0.5  # the reward says nothing about the truth
    d = ex.data
    assert d["rft_precision"] == pytest.approx(0.3, abs=0.03)
    assert d["dpo_right"] == pytest.approx(d["dpo_reversed"], abs=0.03)
    assert abs(d["grpo_adv_right"] - d["grpo_adv_wrong"]) < 0.05
    assert f"{d['rft_precision']:.4f}" in ex.table.value
    with pytest.raises(ValueError, match="accuracy"):
        s52.noisy_signal(1.0, 0.1, 8)
    with pytest.raises(ValueError, match="flip_prob"):
        s52.noisy_signal(0.5, 1.5, 8)
