"""What a training step does beyond its gradient, each against a computation of its own.

tests/test_reference_step.py proves every method's gradient, read just before the loop clips it. These
tests look at what happens around it, where a slip leaves every gradient right:
- the optimizer: the weights after two updates equal AdamW written out by hand (gradient clipped at norm
  1, bias-corrected moments, no weight decay), so a changed decay, beta, eps or clip shows;
- the logged metrics: the KL, clip fraction, reward, response length and zero-coefficient share of a
  step equal their definitions computed from the weights the update was taken at;
- the pairs: every row of a pair source answers the question its prompt asks, chosen right and rejected
  wrong by the reward that chose them;
- the settings: every field of every method's hparams, and every RLConfig field its coefficient,
  objective, advantage or extra loss reads, changes the step's gradient (in at least one setting of the
  method's choice fields, e.g. `max_len` only under the constant aggregation). A coefficient that reads
  a default instead of the run's value (`DAPOConfig().clip_eps_high`, `RLConfig().beta`) fails.
Each has a negative control that plants the bug and sees the test's comparison fail.
"""

import copy
import dataclasses
import itertools
import math

import pytest
import torch

from test_reference_step import batch_for, lab_of, logp_of, overrides_for, package_updates, scores_for
from unified_rl import loop
from unified_rl.data import PolicyPairs, PreferencePairs
from unified_rl.methods import METHODS
from unified_rl.presets import RLConfig

BETAS, EPS, MAX_NORM = (0.9, 0.999), 1e-8, 1.0  # torch's AdamW defaults; the loop clips at norm 1


# ---------------------------------------------------------------- the optimizer

def adamw_by_hand(weights, grads, lr, weight_decay=0.0):
    """The weights after len(grads) AdamW updates (Loshchilov & Hutter; torch's defaults), each gradient
    first clipped to total norm MAX_NORM as torch.nn.utils.clip_grad_norm_ does."""
    w = {k: v.clone() for k, v in weights.items()}
    m = {k: torch.zeros_like(v) for k, v in w.items()}
    v = {k: torch.zeros_like(x) for k, x in w.items()}
    for t, g in enumerate(grads, start=1):
        total = math.sqrt(sum(float((x ** 2).sum()) for x in g.values()))
        scale = min(1.0, MAX_NORM / (total + 1e-6))
        for k in w:
            gk = g[k] * scale
            w[k] = w[k] * (1 - lr * weight_decay)
            m[k] = BETAS[0] * m[k] + (1 - BETAS[0]) * gk
            v[k] = BETAS[1] * v[k] + (1 - BETAS[1]) * gk ** 2
            m_hat, v_hat = m[k] / (1 - BETAS[0] ** t), v[k] / (1 - BETAS[1] ** t)
            w[k] = w[k] - lr * m_hat / (v_hat.sqrt() + EPS)
    return w


def optimizer_gap(monkeypatch, weight_decay=0.0):
    """max |package - by hand| of the weights after each of GRPO's two updates, in units of the lr."""
    gen = torch.Generator().manual_seed(0)
    lab = lab_of(0)
    batch = batch_for("grpo", lab, gen)
    scores = scores_for(len(batch), batch.group_size, "grpo", gen)
    updates, _ = package_updates("grpo", lab, batch, scores, monkeypatch)
    names = [k for k, _ in lab.policy.named_parameters()]
    start = {k: updates[0].policy[k] for k in names}
    after = [{k: updates[1].policy[k] for k in names}, dict(lab.policy.named_parameters())]
    lr = overrides_for("grpo")["lr"]  # steps=1: the warm-up factor is 1
    gaps = []
    for n in (1, 2):
        want = adamw_by_hand(start, [u.grad for u in updates[:n]], lr, weight_decay)
        gaps.append(max(float((after[n - 1][k].detach() - want[k]).abs().max()) for k in names) / lr)
    return gaps


def test_the_optimizer_step_is_adamw_without_weight_decay(monkeypatch):
    gaps = optimizer_gap(monkeypatch)
    assert max(gaps) < 1e-9, gaps  # float64 round-off; a step moves each weight by up to lr


def test_a_weight_decay_is_caught(monkeypatch):
    """The negative control: AdamW's default weight decay (0.01) in the loop shows far above round-off."""
    adamw = torch.optim.AdamW
    monkeypatch.setattr(loop.torch.optim, "AdamW", lambda params, weight_decay=0.0, **kw: adamw(params, **kw))
    assert max(optimizer_gap(monkeypatch)) > 1e-6
    assert max(optimizer_gap(monkeypatch, weight_decay=0.01)) < 1e-9  # ...and the hand version agrees with it


# ---------------------------------------------------------------- the logged metrics

def k3(lp, ref):
    x = ref - lp  # log pi_ref / pi: k3 = e^x - x - 1 estimates KL(pi || pi_ref) on pi's samples
    return torch.exp(x) - x - 1


def metrics_and_hand(monkeypatch):
    """(the loop's logged row, the same quantities from their definitions) for one GRPO step of two updates."""
    gen = torch.Generator().manual_seed(0)
    lab = lab_of(0)
    batch = batch_for("grpo", lab, gen)
    scores = scores_for(len(batch), batch.group_size, "grpo", gen)
    rows = []
    real_fit = loop.fit

    def fit(*args, **kwargs):
        run = real_fit(*args, **kwargs)
        rows.extend(run.metrics)
        return run
    monkeypatch.setattr("unified_rl.trainer.fit", fit)
    updates, _ = package_updates("grpo", lab, batch, scores, monkeypatch)
    (row,) = rows
    policy = copy.deepcopy(lab.policy)
    lps = []
    for u in updates:  # the log-probs each update was taken at
        policy.load_state_dict(u.policy)
        with torch.no_grad():
            lps.append(logp_of(policy, batch))
    with torch.no_grad():
        ref = logp_of(lab.ref, batch)
    on = batch.mask.bool()
    cfg = lab.preset.rl.__class__(**{**dataclasses.asdict(lab.preset.rl), **overrides_for("grpo")})
    hand = {"kl": float(k3(lps[-1][on], ref[on]).mean()),  # the metrics describe the last update
            "clip_frac": float(((torch.exp(lps[-1] - lps[0])[on] - 1).abs() > cfg.clip_eps).double().mean()),
            "reward": float(scores.mean()),
            "response_len": float(batch.mask.sum(-1).mean())}
    return row, hand


def test_logged_metrics_equal_their_definitions(monkeypatch):
    row, hand = metrics_and_hand(monkeypatch)
    assert 0 < hand["clip_frac"] < 1 and hand["kl"] > 1e-3  # both can tell a wrong value from a right one
    for key, want in hand.items():
        assert row[key] == pytest.approx(want, rel=1e-6, abs=1e-12), (key, row[key], want)


def test_a_kl_metric_with_its_arguments_swapped_is_caught(monkeypatch):
    """The negative control: k3(logp_ref, logp) instead of k3(logp, logp_ref) in the logged metric."""
    k3_ = loop.k3
    monkeypatch.setattr(loop, "k3", lambda lp, ref: k3_(ref, lp))
    row, hand = metrics_and_hand(monkeypatch)
    assert row["kl"] != pytest.approx(hand["kl"], rel=1e-3)


# ---------------------------------------------------------------- the pairs

PAIR_SOURCES = sorted({m.data_source for m in METHODS.values()
                       if isinstance(m.data_source, type) and issubclass(m.data_source, PreferencePairs)}
                      | {PolicyPairs}, key=lambda c: c.__name__)


class RecordingReward:
    """Right or wrong by a coin that depends on (question, answer) alone; records every verdict it gave."""

    def __init__(self):
        self.verdicts = {}

    def __call__(self, rollout):
        out = []
        for p, text in zip(rollout.problems, rollout.texts):
            g = torch.Generator().manual_seed(hash((p.prompt, text)) % (2 ** 31))
            self.verdicts[(p.prompt, text)] = float(torch.rand((), generator=g) < 0.5)
            out.append(self.verdicts[(p.prompt, text)])
        return torch.tensor(out)


def pair_faults(source_class, lab):
    """Rows of a pair batch whose text the reward never judged for the row's question, or judged the wrong way."""
    reward = RecordingReward()
    source = source_class(lab, reward)
    torch.manual_seed(0)
    batch = source.next_batch()
    B = len(batch) // 2
    assert len({p.prompt for p in batch.problems[:B]}) > 1, "a batch of one question cannot show a mix-up"
    faults = []
    for i, (p, text) in enumerate(zip(batch.problems, batch.texts)):
        want = 1.0 if i < B else 0.0  # B chosen rows, then their B rejected partners
        if reward.verdicts.get((p.prompt, text)) != want:
            faults.append(f"row {i}: {text!r} as {'chosen' if want else 'rejected'} for {p.prompt!r}")
        prompt = lab.tokenizer.decode(batch.input_ids[i, : batch.prompt_len][batch.attention_mask[i, : batch.prompt_len] > 0])
        if p.prompt not in prompt:
            faults.append(f"row {i}: its prompt tokens {prompt!r} do not ask {p.prompt!r}")
    if batch.problems[:B] != batch.problems[B:]:
        faults.append("a chosen row and its rejected partner answer different questions")
    return faults


@pytest.fixture(scope="module")
def varied_lab():
    """The tiny lab's policy moved far from its near-uniform start, so its samples vary."""
    torch.manual_seed(0)
    lab = lab_of(0)
    return dataclasses.replace(lab, ref=copy.deepcopy(lab.policy).eval().requires_grad_(False))


@pytest.mark.parametrize("source_class", PAIR_SOURCES, ids=lambda c: c.__name__)
def test_every_pair_row_answers_its_own_question(source_class, varied_lab):
    assert pair_faults(source_class, varied_lab) == []


def test_a_pair_built_with_another_questions_prompt_is_caught(varied_lab, monkeypatch):
    """The negative control: the chosen and rejected texts of question g rolled onto question g+1's prompt."""
    from unified_rl.data import core
    real = core.rollout_from_texts

    def shifted(tokenizer, problems, texts, *args, **kwargs):
        return real(tokenizer, problems[1:] + problems[:1], texts, *args, **kwargs)
    monkeypatch.setattr(core, "rollout_from_texts", shifted)
    assert any("as chosen for" in f for f in pair_faults(PreferencePairs, varied_lab))


# ---------------------------------------------------------------- every setting reaches the step

def _choices(name, value, hp_field=None):
    """Other values to try for a setting: a str field's `choices` metadata, else every value registered
    methods give a str field of that name; the other bool; a number moved by half of itself."""
    if hp_field is not None and "choices" in hp_field.metadata:
        return [c for c in hp_field.metadata["choices"] if c != value]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, str):
        seen = {getattr(m.hparams, name) for m in METHODS.values()
                if m.hparams is not None and hasattr(m.hparams, name)}
        return sorted(seen - {value})
    return [value * 0.5 + 0.05 if name in ("gamma", "lam") else value * 1.5 + 0.05]


class Recorder:
    """Which RLConfig fields are read, by any RLConfig (the run's or a default one), while `on`."""

    def __init__(self):
        self.on, self.read = False, set()
        self.names = {f.name for f in dataclasses.fields(RLConfig)}

    def __call__(self, obj, name):
        if self.on and name in self.names:
            self.read.add(name)
        return object.__getattribute__(obj, name)

    def wrap(self, fn):
        if fn is None:
            return None

        def recorded(*args, **kwargs):
            self.on = True
            try:
                out = fn(*args, **kwargs)
            finally:
                self.on = False
            if hasattr(out, "loss") and hasattr(out, "targets"):  # an extra loss: record what it reads too
                for attr in ("loss", "targets"):
                    setattr(out, attr, self.wrap(getattr(out, attr)))
            return out
        return recorded


def gradients(name, lab, batch, scores, recorder, over):
    """The gradients (policy and critic) of both updates of one step with settings `over`, flattened."""
    m = METHODS[name]
    method = dataclasses.replace(m, coefficient=recorder.wrap(m.coefficient), objective=recorder.wrap(m.objective),
                                 advantage=recorder.wrap(m.advantage), extra_loss=recorder.wrap(m.extra_loss))
    lab = dataclasses.replace(lab, policy=copy.deepcopy(lab.policy))
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(METHODS, name, method)
        updates, _ = package_updates(name, lab, batch, scores, mp, overrides={**overrides_for(name), **over})
    return torch.cat([g.flatten() for u in updates for part in (u.grad, u.critic_grad or {})
                      for g in part.values()])


def _differ(a, b):
    return bool((a - b).abs().max() > 1e-9 * max(a.abs().max(), b.abs().max()))


def unreached_settings(name, only=None):
    """(the RLConfig fields `name` reads, its settings that change nothing in its step).

    A choice field (a str) reaches the step if two of its values differ; any other setting if moving it
    changes the gradients under at least one combination of the choice fields. `only`: try just these settings."""
    m = METHODS[name]
    gen = torch.Generator().manual_seed(0)
    lab = lab_of(0)
    batch = batch_for(name, lab, gen)
    scores = scores_for(len(batch), batch.group_size, name, gen)
    recorder = Recorder()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RLConfig, "__getattribute__", lambda obj, key: recorder(obj, key))
        gradients(name, lab, batch, scores, recorder, {})
    hp_fields = {f.name: f for f in dataclasses.fields(m.hparams)} if m.hparams is not None else {}
    cfg = dataclasses.replace(lab.preset.rl, **{k: v for k, v in overrides_for(name).items() if k in recorder.names})
    settings = {k: (getattr(m.hparams, k), f) for k, f in hp_fields.items()}
    settings.update({k: (getattr(cfg, k), None) for k in recorder.read})
    choice = {k: [v] + _choices(k, v, f) for k, (v, f) in settings.items() if isinstance(v, str)}
    contexts = [dict(zip(choice, values)) for values in itertools.product(*choice.values())]

    def unreached_on(lab, keys):
        def grads(over):
            return gradients(name, lab, batch, scores, Recorder(), over)
        unreached = []
        for key in keys:
            value, f = settings[key]
            if key in choice:
                first, *rest = [grads({key: v}) for v in choice[key]]
                reached = any(_differ(first, g) for g in rest)
            else:
                reached = any(_differ(grads(ctx), grads({**ctx, key: other}))
                              for ctx in contexts for other in _choices(key, value, f))
            if not reached:
                unreached.append(key)
        return unreached
    unreached = unreached_on(lab, sorted(k for k in settings if only is None or k in only))
    if unreached:  # a setting that acts only in some states (KTO's loss type only where its reference point z0,
        # clamped at 0, is above 0) is tried again with pi_theta and pi_ref exchanged: every log-ratio flips sign
        swapped = dataclasses.replace(lab, policy=copy.deepcopy(lab.ref).requires_grad_(True),
                                      ref=copy.deepcopy(lab.policy).eval().requires_grad_(False))
        unreached = unreached_on(swapped, unreached)
    return sorted(recorder.read), unreached


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if m.section == "rl"])
def test_every_setting_of_every_method_reaches_its_step(name):
    read, unreached = unreached_settings(name)
    assert not unreached, f"{name}: these settings change nothing in its step (the run's value is ignored?): {unreached}"


def test_the_settings_each_method_reads_are_found():
    """The recorder sees what the paper says each method reads: GRPO's beta and clip, DPO's beta, GAE's gamma."""
    assert {"beta", "clip_eps"} <= set(unreached_settings("grpo")[0])
    assert "dpo_beta" in unreached_settings("dpo")[0]
    assert {"gamma", "lam", "beta", "value_lr"} <= set(unreached_settings("ppo")[0])


def test_a_coefficient_that_reads_a_default_is_caught(monkeypatch):
    """Negative controls: DAPO's clip_eps_high and GRPO's beta taken from the defaults, not from the run."""
    dapo, grpo = METHODS["dapo"], METHODS["grpo"]

    def dapo_default(step):
        return dapo.coefficient(dataclasses.replace(step, hp=type(step.hp)()))

    def default_beta(cfg):
        out = copy.copy(cfg)  # copies without reading the fields: only the slip's read of beta is recorded
        object.__setattr__(out, "beta", RLConfig().beta)
        return out

    def grpo_default(step):
        return grpo.coefficient(dataclasses.replace(step, cfg=default_beta(step.cfg)))

    def objective_default(method):
        return lambda step: method.objective(dataclasses.replace(
            step, hp=type(step.hp)() if step.hp is not None else None, cfg=default_beta(step.cfg)))

    monkeypatch.setitem(METHODS, "dapo", dataclasses.replace(dapo, coefficient=dapo_default,
                                                              objective=objective_default(dapo)))
    monkeypatch.setitem(METHODS, "grpo", dataclasses.replace(grpo, coefficient=grpo_default,
                                                              objective=objective_default(grpo)))
    # only the slipped setting is tried (each setting is tried on its own; all of them: the test above)
    assert unreached_settings("dapo", only={"clip_eps_high"})[1] == ["clip_eps_high"]
    assert unreached_settings("grpo", only={"beta"})[1] == ["beta"]


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if m.hparams is not None and not m.extra_loss])
def test_a_step_made_without_settings_reads_the_methods_defaults(name, varied_lab):
    """`wiring.step_of(prep, logp, logp_old, cfg)` with no hp (as notebook 00 calls it) gives the coefficient
    of the method's default settings, not an AttributeError on None (a wrong default would differ)."""
    from unified_rl import wiring

    m = METHODS[name]
    batch = batch_for(name, varied_lab, torch.Generator().manual_seed(0)).to(varied_lab.device)
    prep = wiring.prepare(m, varied_lab, batch)
    logp = wiring.policy_logp(varied_lab.policy, batch)
    cfg = varied_lab.preset.rl
    bare = wiring.coefficient_of(m, wiring.step_of(prep, logp, logp.detach(), cfg))
    given = wiring.coefficient_of(m, wiring.step_of(prep, logp, logp.detach(), cfg, m.hparams))
    assert torch.equal(bare, given)
