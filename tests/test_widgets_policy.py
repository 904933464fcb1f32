"""Notebook 10's explorer: its numbers are the package's coefficients, and it responds to its controls."""
import ipywidgets as W
import pytest
import torch

from unified_rl import coefficients as C
from unified_rl.course import explorer as xp
from unified_rl.course.widgets_policy_gradient import MAX_LEN, length_pushes, policy_explorer, ratio_gcs


def test_main_control_changes_the_output_and_tracks_stay_usable():
    ex = policy_explorer()
    assert ex.error is None and ex.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    table, png = ex.table.value, ex.image.value
    ex.controls["ratio"].value = 0.6
    assert ex.error is None and ex.table.value != table and ex.image.value != png
    for c in ex.controls.values():
        if isinstance(c, (W.FloatSlider, W.IntSlider)):
            assert len(c.description) <= xp.SHORT and c.layout.width == xp.CONTROL_WIDTH


def test_clip_higher_and_cispo_where_grpo_stops():
    ex = policy_explorer(ratio=1.25, clip_eps=0.2, clip_eps_high=0.28, right=True)
    gc = ex.data["gc"]
    assert gc["GRPO / PPO clip"] == 0  # A > 0 past 1 + 0.2: the push stops
    assert gc["DAPO clip-higher"] == pytest.approx(gc["CISPO weight"]) and gc["DAPO clip-higher"] > 0
    with ex.hold():
        ex.controls["ratio"].value = 1.5  # past 1 + 0.28 too
    assert ex.data["gc"]["DAPO clip-higher"] == 0 and ex.data["gc"]["CISPO weight"] > 0


def test_numbers_match_the_package():
    got = ratio_gcs([1.1], True, 5, 0.2, 0.28)
    rewards = torch.tensor([1.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    mask = (torch.arange(MAX_LEN)[None] < torch.tensor([5, 8, 8, 8])[:, None]).double()
    old = torch.zeros_like(mask)
    logp = old.clone()
    logp[0] = torch.log(torch.tensor(1.1, dtype=torch.float64)) * mask[0]
    want = C.dapo(rewards, 4, logp, old, mask, 0.2, 0.28, aggregation="seq-mean-token-mean")[0, 0]
    assert got["DAPO clip-higher"][0] == pytest.approx(want.item(), rel=1e-12)


def test_length_bias_of_one_over_length():
    """A wrong answer (A < 0): GRPO's per-token push shrinks with |o|, Dr. GRPO's constant L keeps it."""
    push = length_pushes(torch.arange(1, MAX_LEN + 1), right=False)
    grpo, dr = push["GRPO: A-hat, 1/|o|"], push[f"constant L = {MAX_LEN} (Dr. GRPO)"]
    assert (grpo < 0).all() and (grpo.diff() > 0).all()  # less negative as the answer grows
    assert torch.allclose(dr, dr[0].expand_as(dr)) and (dr < 0).all()


def test_gspo_is_drawn_with_its_own_range_and_a_sequence_ratio():
    """GSPO's curve is not DAPO's: its clip range is 3e-4 / 4e-4 on s = r^(1/|o1|), one GC on every token."""
    from unified_rl.course.widgets_policy_gradient import GSPO_EPS, GSPO_EPS_HIGH, GSPO_KEY, gspo_sequence
    from unified_rl.methods.policy_gradient import GSPOConfig
    assert (GSPO_EPS, GSPO_EPS_HIGH) == (GSPOConfig().gspo_clip_eps, GSPOConfig().gspo_clip_eps_high) == (3e-4, 4e-4)
    s, gc = gspo_sequence(1.002, True, 12)
    assert s == pytest.approx(1.002 ** (1 / 12), rel=1e-12) and 1 < s < 1 + GSPO_EPS_HIGH
    assert gc[0] > 0 and torch.allclose(gc, gc[0].expand_as(gc))  # s A on every token of o1
    s, gc = gspo_sequence(1.01, True, 12)  # s = 1.00083 > 1 + 4e-4: clipped, though DAPO's clip is far away
    assert s > 1 + GSPO_EPS_HIGH and (gc == 0).all()
    curves = ratio_gcs([1.01], True, 12, 0.2, 0.28)
    assert curves[GSPO_KEY][0] == 0 and curves["DAPO clip-higher"][0] > 0
    ex = policy_explorer(ratio=1.01, right=True, length=12)
    assert ex.data["gspo"]["s"] == pytest.approx(s) and ex.data["gspo"]["gc"] == [0.0] * 12
