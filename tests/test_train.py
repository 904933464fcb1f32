"""Every method end to end at a tiny budget (seconds), the model-level oracle on a sampled batch run
through the trainer's own wiring, a Lab the trainer leaves alone, checkpoints that reload, and the CLI."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch

from unified_rl.data import PreferencePairs
from unified_rl.methods import METHODS
from unified_rl.models import load_policy
from unified_rl.trainer import make_lab, train
from unified_rl.verify import ORACLE_KEYS as ORACLE_METHODS, model_oracle


def tiny_method(name):
    """The method as registered, except that preference pairs (DPO, IPO, SimPO, ORPO) are built from
    coin-flip rewards: the tiny preset's untrained model answers nothing right, and a pair needs one
    right and one wrong sample."""
    if METHODS[name].data_source is not PreferencePairs:
        return name
    coin = lambda r: torch.randint(0, 2, (len(r),)).float()
    return dataclasses.replace(METHODS[name], data_source=lambda lab: PreferencePairs(lab, coin))


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_runs_and_logs(method):  # 0.2-0.8 s each: in the fast suite
    steps = None if method == "sft" else 2  # explicit: DPO's own default budget would override the preset's
    run = train(tiny_method(method), preset="tiny", steps=steps, progress=False)
    assert len(run.metrics) == (3 if method == "sft" else 2)
    last = run.metrics[-1]
    for key in ("coef_mean", "coef_std", "seconds", "eval_accuracy"):
        assert key in last and last[key] == last[key]  # present and not NaN
    if METHODS[method].reward is not None:  # SFT's data is human-selected (so is DFT's): no reward to log
        assert "reward" in last and "accuracy" in last
        assert ("kl" in last) == METHODS[method].uses_ref  # SimPO and ORPO compute no logp_ref
    if method == "ppo":
        assert "value_loss" in last
    assert all(torch.isfinite(p).all() for p in run.policy.parameters())


@pytest.fixture(scope="module")
def tiny_lab():
    return make_lab("tiny")


def test_every_method_declares_what_the_oracle_and_the_listing_need():
    for name, m in METHODS.items():
        assert m.objective is not None and m.paper, name
    assert set(ORACLE_METHODS) >= set(METHODS)


def test_model_oracle_on_a_sampled_batch(tiny_lab):
    diffs = model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems)
    assert set(diffs) == set(ORACLE_METHODS)
    assert {"ppo-clipped", "grpo-clipped"} <= set(diffs)  # the notebooks' keys
    assert max(diffs.values()) < 1e-10, diffs


@pytest.mark.parametrize("name", list(METHODS))
def test_model_oracle_runs_the_registered_coefficient(name, tiny_lab, monkeypatch):
    """Perturb the coefficient registered in METHODS, as a wrong wiring would: the oracle must see it."""
    m = METHODS[name]
    monkeypatch.setitem(METHODS, name, dataclasses.replace(m, coefficient=lambda step: 1.01 * m.coefficient(step)))
    diffs = model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems, methods=[name])
    assert diffs[name] > 1e-8, diffs


def test_model_oracle_computes_the_cases_asked_with_the_same_values(tiny_lab, monkeypatch):
    """An off-policy method's on-policy and clipped cases are computed only when asked for (notebook 12's
    1 % control asks for one), and each is the value it has when both are asked for. A coefficient 1 %
    off makes both values large and different, so neither case can stand in for the other."""
    m = METHODS["grpo"]
    monkeypatch.setitem(METHODS, "grpo-off", dataclasses.replace(m, name="grpo-off",
                                                                 coefficient=lambda step: 1.01 * m.coefficient(step)))
    args = tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems
    both = model_oracle(*args, methods=["grpo-off", "grpo-off-clipped"])
    assert min(both.values()) > 1e-8 and both["grpo-off"] != both["grpo-off-clipped"], both
    assert model_oracle(*args, methods=["grpo-off"]) == {"grpo-off": both["grpo-off"]}
    assert model_oracle(*args, methods=["grpo-off-clipped"]) == {"grpo-off-clipped": both["grpo-off-clipped"]}


def test_model_oracle_catches_a_swapped_coefficient(tiny_lab, monkeypatch):
    """RFT given SFT's coefficient (one x REINFORCE) and GRPO given RFT's (indicator x REINFORCE): each objective's
    gradient then differs from its surrogate's; and a part swapped inside a composition (DAPO's vanilla clip for
    REINFORCE, the same on-policy) is caught once the oracle moves logp_old (dapo-clipped)."""
    monkeypatch.setitem(METHODS, "rft", dataclasses.replace(METHODS["rft"], coefficient=METHODS["sft"].coefficient))
    monkeypatch.setitem(METHODS, "grpo", dataclasses.replace(METHODS["grpo"], coefficient=METHODS["rft"].coefficient))
    diffs = model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems, methods=["rft", "grpo"])
    assert min(diffs.values()) > 1e-6, diffs
    swapped = dataclasses.replace(METHODS["dapo"].composition, policy="reinforce")  # grpo x reinforce
    monkeypatch.setitem(METHODS, "dapo", dataclasses.replace(METHODS["dapo"], coefficient=swapped.coefficient))
    diffs = model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems, methods=["dapo", "dapo-clipped"])
    assert diffs["dapo"] < 1e-10 < 1e-6 < diffs["dapo-clipped"], diffs  # on-policy the two terms agree


def test_model_oracle_checks_methods_registered_later(tiny_lab, monkeypatch):
    extra = dataclasses.replace(METHODS["grpo"], name="grpo-copy")
    monkeypatch.setitem(METHODS, "grpo-copy", extra)
    assert "grpo-copy-clipped" in ORACLE_METHODS
    diffs = model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems)
    assert diffs["grpo-copy"] < 1e-10 and diffs["grpo-copy-clipped"] < 1e-10
    monkeypatch.setitem(METHODS, "no-objective", dataclasses.replace(extra, name="no-objective", objective=None))
    with pytest.raises(ValueError, match="no objective"):
        model_oracle(tiny_lab.policy, tiny_lab.tokenizer, tiny_lab.rl_problems, methods=["no-objective"])


def test_train_leaves_the_callers_lab_as_it_was():
    lab = make_lab("tiny")
    fields = {f.name: getattr(lab, f.name) for f in dataclasses.fields(lab)}
    ref = {k: v.clone() for k, v in lab.ref.state_dict().items()}
    run = train(tiny_method("dpo"), lab=lab, steps=1, progress=False, eval_every=0)
    assert all(getattr(lab, k) is v for k, v in fields.items())  # no field rebound: preset, ref, ...
    assert all(torch.equal(ref[k], v) for k, v in lab.ref.state_dict().items())
    assert run.lab.preset.rl.lr == 1e-5 and lab.preset.rl.lr != 1e-5  # DPO's default is the run's only
    assert run.policy is lab.policy  # the lab's policy is what the run trains


@pytest.mark.slow
def test_checkpoint_reloads(tmp_path):
    out = str(tmp_path / "run")
    run = train("grpo", preset="tiny", out=out, progress=False)
    ckpt = os.path.join(out, "checkpoint")
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert summary["method"] == "grpo" and summary["steps"] == 2 and summary["eval_problems"] == 16
    assert len(open(os.path.join(out, "metrics.jsonl")).read().splitlines()) == 2
    reloaded = load_policy(ckpt)
    ids = torch.tensor([[1, 5, 6, 7]])
    with torch.no_grad():
        assert torch.allclose(reloaded(ids).logits, run.policy.cpu()(ids).logits, atol=1e-6)


def test_bad_arguments(monkeypatch):
    with pytest.raises(ValueError, match="unknown method"):
        train("ppo2", preset="tiny")
    with pytest.raises(ValueError, match="unknown preset"):
        train("sft", preset="tpu")
    with pytest.raises(ValueError, match="unknown setting"):
        train("grpo", preset="tiny", betta=0.1)
    with pytest.raises(ValueError, match="steps"):
        train("sft", preset="tiny", steps=-1)
    monkeypatch.setenv("UNIFIED_RL_MAX_STEPS", "-2")
    with pytest.raises(ValueError, match="UNIFIED_RL_MAX_STEPS"):
        train("sft", preset="tiny")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "unified_rl", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


def in_process(capsys, *args):
    """`python -m unified_rl ARGS` run by its `main` in this process: (exit status, stdout, stderr),
    a SystemExit's message written to stderr as the interpreter writes it."""
    from unified_rl import cli as cli_module
    code = 0
    try:
        cli_module.main(list(args))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # one real process: seconds to import torch and transformers
def test_cli_help_and_one_line_errors(capsys):
    """Each command's help and refusals, through `main` (what `python -m unified_rl` runs); one real
    process shows the same one line and exit status from the interpreter, with no traceback."""
    code, out, _ = in_process(capsys, "--help")
    assert code == 0 and "python -m unified_rl train" in out
    listing = in_process(capsys, "methods")[1].splitlines()
    assert listing[0].split() == ["method", "data", "source", "reward", "GC", "(advantage", "x", "policy", "x", "KL,",
                                  "aggregation)", "paper"]
    rows = listing[1:1 + 2 * len(METHODS):2]  # each method's line; the line below it says what the method does
    assert rows[3].split()[:8] == ["dpo", "PreferencePairs", "RuleReward", "log_ratio", "x", "sigmoid", "(dpo_loss),",
                                   "mean"]  # a preference composition: scores x loss, norm
    assert all(line.startswith(m.name + " ") and line.endswith(m.paper) and m.summary in more
               for m, line, more in zip(METHODS.values(), rows, listing[2::2]))
    for m, line in zip(METHODS.values(), rows):  # a composition's GC column names its parts, as its row chose them
        c = m.composition
        if c is not None and hasattr(c, "advantage"):
            parts = " x ".join([c.advantage, c.policy] + ([f"{c.kl} ({c.kl_in})"] if c.kl else []))
            assert f" {parts}, {m.hparams.aggregation}" in line, (m.name, line)
        elif c is not None:  # a preference composition: scores x loss, norm (the settings that choose them)
            assert f" {c.describe()} " in line, (m.name, line)
    assert "<lambda>" not in "".join(listing)
    code, _, err = in_process(capsys, "train", "sftt", "--out", "x")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "invalid choice" in err
    code, _, err = in_process(capsys, "evaluate", "x", "--k", "1,a", "--out", "y")
    assert code == 2 and len(err.strip().splitlines()) == 1
    bad = cli("evaluate", "no/such/dir", "--out", "x.json")
    assert bad.returncode != 0 and "no checkpoint" in bad.stderr and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert in_process(capsys, "evaluate", "no/such/dir", "--out", "x.json")[2].strip() == bad.stderr.strip()


@pytest.mark.slow
def test_cli_train_and_evaluate(tmp_path):
    out = tmp_path / "sft"
    r = cli("train", "sft", "--preset", "tiny", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    summary = json.load(open(out / "summary.json"))
    for key in ("method", "preset", "steps", "seconds", "device", "eval"):
        assert key in summary
    assert set(summary["eval"]) >= {"accuracy", "pass_at_k", "maj_at_k"}
    r = cli("evaluate", str(out / "checkpoint"), "--preset", "tiny", "--k", "1,2,4", "--out", str(tmp_path / "e.json"))
    assert r.returncode == 0, r.stderr
    ev = json.load(open(tmp_path / "e.json"))
    assert list(ev["pass_at_k"]) == ["1", "2", "4"]
    assert all(0 <= v <= 1 for v in ev["maj_at_k"].values())


def test_a_registered_coefficient_runs_on_bare_tensors():
    """What a widget does instead of copying DPO's x2 and row layout: build a Step, call METHODS."""
    from unified_rl import coefficients as C
    from unified_rl.paradigm import step_from_tensors
    from unified_rl.presets import RLConfig
    g = torch.Generator().manual_seed(0)
    lc, lr, rc, rr = (-torch.rand(3, 5, generator=g) for _ in range(4))
    mc, mr = torch.ones(3, 5), torch.tensor([[1.0] * 5, [1.0] * 3 + [0.0] * 2, [1.0] * 4 + [0.0]])
    step = step_from_tensors(torch.cat([lc, lr]), torch.cat([mc, mr]), RLConfig(dpo_beta=0.3),
                             logp_ref=torch.cat([rc, rr]))
    cc, cr = C.dpo(lc, rc, mc, lr, rr, mr, 0.3)
    assert torch.equal(METHODS["dpo"].coefficient(step), 2 * torch.cat([cc, cr]))


def test_an_hparam_named_like_a_preset_setting_is_an_error():
    """train(name, lr=...) sets RLConfig.lr: a method's own `lr` field could never be set, so it is refused."""
    import dataclasses as dc

    from unified_rl.presets import get_preset
    from unified_rl.wiring import check_hparams, configure

    @dc.dataclass(frozen=True)
    class Clashing:
        lr: float = 1.0
        own_knob: float = 2.0

    m = dc.replace(METHODS["grpo"], name="clash", hparams=Clashing())
    with pytest.raises(ValueError, match=r"\['lr'\].*RLConfig"):
        configure(m, get_preset("tiny"), {"lr": 3.0})
    ok = dc.replace(m, hparams=dc.make_dataclass("Fine", [("own_knob", float, 2.0)], frozen=True)())
    _, hp = configure(ok, get_preset("tiny"), {"own_knob": 5.0})
    assert hp.own_knob == 5.0
    for registered in METHODS.values():  # every registered method passes
        check_hparams(registered, get_preset("tiny"))
