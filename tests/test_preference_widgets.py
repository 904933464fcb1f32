"""The preference family's explorer: every number it shows is the package's coefficient, driven from
Python it shows what notebook 11 states, and its sliders keep a usable track."""

import math

import pytest
import torch

from unified_rl import coefficients as C
from unified_rl.course.explorer import SHORT
from unified_rl.course.widgets_preference import kto_coefficients, pair_coefficients, preference_explorer


def one(x):
    return torch.tensor([[x]], dtype=torch.float64)


def test_the_values_shown_are_the_package_coefficients():
    ex = preference_explorer(margin=0.4, beta=0.3, tau=0.8, simpo_beta=2.5, gamma=1.2, lam=0.2, logp_rejected=-1.5,
                             kto_beta=0.7, lam_d=2.0, lam_u=1.0)
    z, m = torch.zeros(1, 1, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64)
    assert ex.data["DPO"][0] == pytest.approx(C.dpo(one(0.4), z, m, z, z, m, 0.3)[0].item())
    assert ex.data["IPO"] == pytest.approx((1 / 0.8 - 0.8, -(1 / 0.8 - 0.8)))
    assert ex.data["SimPO"][0] == pytest.approx(C.simpo(one(-1.1), m, one(-1.5), m, 2.5, 1.2)[0].item())
    assert ex.data["ORPO"][1] == pytest.approx(C.orpo(one(-1.1), m, one(-1.5), m, 0.2)[1].item())
    d = C.kto(one(0.4), z, m, torch.ones(1, dtype=torch.float64), 0.0, 0.7, 2.0, 1.0)
    assert ex.data["KTO"][0] == pytest.approx(d.item()) and ex.error is None and len(ex.image.value) > 1000


def test_driven_from_python_it_shows_the_notebooks_facts():
    ex = preference_explorer(tau=1.0)
    with ex.hold():
        ex.controls["margin"].value = 2.0  # past IPO's target 1/(2 tau) = 0.5
    assert ex.data["IPO"][0] == pytest.approx(-3.0) and ex.data["DPO"][0] > 0  # IPO reverses, DPO fades
    assert math.isnan(ex.data["ORPO"][0])  # l+ = -1 + 2 > 0: no probability has that mean log-prob
    ex.controls["lam"].value = 0.0
    ex.controls["margin"].value = 0.5
    assert ex.data["ORPO"] == pytest.approx((1.0, 0.0))  # lambda = 0: SFT's GC alone


def test_kto_peaks_at_its_reference_point_and_mirrors():
    x = torch.linspace(-3, 3, 61, dtype=torch.float64)
    d, u = kto_coefficients(x, 1.5, 1.0, 1.0)
    assert x[d.argmax()].item() == pytest.approx(0.0) and torch.allclose(u, -d)
    assert d[0] < 0.2 * d.max() and d[-1] < 0.2 * d.max()


def test_pair_curves_have_one_value_per_margin():
    curves = pair_coefficients(torch.linspace(-1, 1, 5), 0.5, 1.0, 2.0, 1.0, 0.1, -0.5)
    assert set(curves) == {"DPO", "IPO", "SimPO", "ORPO"}
    assert all(c.shape == (5,) and r.shape == (5,) for c, r in curves.values())
    assert torch.isnan(curves["ORPO"][0][-2:]).all() and not torch.isnan(curves["ORPO"][0][:3]).any()


def test_every_slider_keeps_a_usable_track():
    ex = preference_explorer()
    for name, control in ex.controls.items():
        assert len(control.description) <= SHORT, name  # a longer one moves to a label above the slider
    assert ex.controls["logp_rejected"].url_label  # the one long description


# ---- the explorer of TRL's DPO loss types

def test_the_loss_type_explorer_shows_the_package_gcs_and_the_notebooks_facts():
    from unified_rl.coefficients.dpo_losses import LOSS_TYPES, dpo_loss
    from unified_rl.course.widgets_preference import dpo_loss_explorer

    ex = dpo_loss_explorer(loss_type="robust", beta=0.5)
    with ex.hold():
        ex.controls["margin"].value, ex.controls["s_minus"].value = 4.0, -1.0
    assert ex.error is None and set(LOSS_TYPES) <= set(ex.data)
    one = torch.ones(1, 1, dtype=torch.float64)
    for loss in LOSS_TYPES:  # each value shown is coefficients.dpo_loss on a pair of one-token responses
        want = dpo_loss(loss, 3.0 * one, 0 * one, one, -1.0 * one, 0 * one, one, 0.5, norm="mean",
                        label_smoothing=ex.controls["label_smoothing"].value,
                        discopop_tau=ex.controls["discopop_tau"].value)
        assert ex.data[loss] == (want[0].item(), want[1].item()), loss
    gc = {loss: ex.data[loss][0] for loss in LOSS_TYPES}
    assert gc["hinge"] == 0 < gc["sigmoid"] and gc["ipo"] < 0 < gc["sigmoid"] < gc["robust"]
    assert gc["nca_pair"] < 0 and gc["apo_down"] < 0
    ex.controls["label_smoothing"].value = 0.45  # robust's floor beta eps / (1 - 2 eps) grows with eps
    assert ex.data["robust"][0] > 0.5 * 0.45 / 0.1
