"""The sampler corrections and the entropy bonus against TRL 1.16's own GRPO code, on the tiny lab model in float64.

TRL's trainer is built from the GRPOConfig a learner would write; its sampler is replaced by a fixed batch
(`_generate` returns our token ids and, where the IS correction is on, the sampler's log-probs: pi_old's plus a fixed
noise, as vLLM's would differ), its log-probs are the model's float64 ones, and its own
`_generate_and_score_completions` and `_compute_loss` compute the importance-sampling ratio and the loss
(grpo_trainer.py: vllm_importance_sampling_mode token_truncate, token_mask, sequence_truncate, sequence_mask with
vllm_importance_sampling_clip_max / _clip_min; use_vllm is set on the built trainer, since vLLM itself is not run).
The package's side is the gradient of eq 5's surrogate under the grpo row recomposed with the `tis` / `mis` masks.
Each case runs on-policy and off-policy (pi_theta moved after the batch was scored) to 1e-10 of the largest entry;
slips in the masks fail far above it. TRL's entropy bonus (entropy_coef) is read off its own loss (with the bonus
less without) and compared with the `entropy_bonus` part's GC averaged over every token of the vocabulary at each
position: equal to 1e-10 in expectation, and one batch's own tokens are shown to be only an estimate of it.
"""

import dataclasses

import pytest
import torch

from test_field_2026_losses import EXACT, G, GROUPS, REWARDS, SLIP, _rho_s
from unified_rl.paradigm import Step, surrogate_loss
from unified_rl.parts import MASKS, compose
from unified_rl.presets import get_preset

pytest.importorskip("trl", reason="TRL is in the bench extra (make test installs it)")

TRL_T = 6  # TRL's batch: 3 groups of 4, responses of 1 to 6 tokens (6 without EOS: cut at the budget)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The tiny lab model in float64 at pi_old and at a moved pi_theta; a batch; a sampler that is not pi_old."""
    import copy

    from unified_rl.tokenizer import encode_problems
    from unified_rl.trainer import make_lab
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    policy = lab.policy.double()
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    old = copy.deepcopy(policy.state_dict())
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.04 * torch.randn_like(p))
    tok, g = lab.tokenizer, torch.Generator().manual_seed(0)
    width = len(encode_problems(tok, [lab.rl_problems[0]])[0])
    problems = [p for p in lab.rl_problems if len(encode_problems(tok, [p])[0]) == width][:GROUPS]
    vocab = [i for i in range(len(tok)) if i not in {tok.eos_token_id, tok.pad_token_id, tok.bos_token_id}]
    rows = []
    for n in [2, 6, 1, 6, 4, 6, 3, 5, 6, 2, 6, 4]:
        ids = [vocab[int(j)] for j in torch.randint(0, len(vocab), (n,), generator=g)]
        rows.append(ids if n == TRL_T else ids[:-1] + [tok.eos_token_id])
    noise = [(0.3 * torch.randn(len(r), generator=g, dtype=torch.float64)).tolist() for r in rows]
    return dict(policy=policy, old=old, theta=copy.deepcopy(policy.state_dict()), tok=tok, rows=rows, noise=noise,
                prompt=[encode_problems(tok, [p])[0] for p in problems for _ in range(G)],
                problems=[p for p in problems for _ in range(G)], out=str(tmp_path_factory.mktemp("trl")),
                rewards=torch.tensor(REWARDS, dtype=torch.float64))


def rollout(w, sampler=None):
    """Our Rollout of the batch (one prompt length, right-padded responses), its sampler's log-probs `sampler`."""
    from unified_rl.sampling import Rollout
    P, B = len(w["prompt"][0]), len(w["rows"])
    ids = torch.full((B, P + TRL_T), w["tok"].pad_token_id, dtype=torch.long)
    att = torch.zeros(B, P + TRL_T, dtype=torch.long)
    for i, (p, r) in enumerate(zip(w["prompt"], w["rows"])):
        ids[i, :P + len(r)], att[i, :P + len(r)] = torch.tensor(p + r), 1
    mask = (att[:, 1:] * (torch.arange(1, P + TRL_T) >= P)).double()
    ended = torch.tensor([r[-1] == w["tok"].eos_token_id for r in w["rows"]])
    logp = torch.zeros_like(mask) if sampler is None else sampler
    return Rollout(ids, att, mask, logp, [""] * B, w["problems"], G, P, ended=ended)


def sampler_logp(w, logp_old, batch):
    """pi_sampler: pi_old's log-probs of the response tokens plus the world's noise. (B, T')"""
    out = logp_old.clone()
    for i, n in enumerate(w["noise"]):
        where = batch.mask[i].nonzero().flatten()
        out[i, where] = out[i, where] + torch.tensor(n, dtype=torch.float64)
    return out * batch.mask


def exact_logps(model, input_ids, attention_mask, logits_to_keep, compute_entropy=False, **kw):
    """TRL's log-probs and entropies in float64 (its fused LM head works in float32)."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -logits_to_keep - 1:-1]
    logp = logits.log_softmax(-1)
    chosen = logp.gather(-1, input_ids[:, -logits_to_keep:, None]).squeeze(-1)
    return chosen, (-(logp.exp() * logp).sum(-1) if compute_entropy else None), None


def trl_gradient(w, config, off_policy, sampling=None):
    """TRL's gradient: its trainer scores the batch at pi_old (the sampler's log-probs `sampling`, a list per row,
    turn its vLLM IS correction on) and differentiates its loss at pi_theta."""
    import copy
    import warnings

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    policy = copy.deepcopy(w["policy"])
    policy.load_state_dict(w["old"])
    args = GRPOConfig(output_dir=w["out"], num_generations=G, per_device_train_batch_size=G * GROUPS,
                      max_completion_length=TRL_T, num_iterations=2 if off_policy else 1, temperature=1.0,
                      report_to="none", use_cpu=True, bf16=False, fp16=False, disable_tqdm=True, save_strategy="no",
                      max_steps=1, remove_unused_columns=False, **config)

    def reward(prompts, completions, row, **kw):
        return [float(w["rewards"][i]) for i in row]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(model=policy, reward_funcs=[reward], args=args, processing_class=w["tok"],
                              train_dataset=Dataset.from_dict({"prompt": ["x"] * (G * GROUPS)}))
    trainer.use_vllm = sampling is not None  # the sampler's log-probs come from `_generate`, as vLLM's would
    trainer._generate = lambda prompts: (w["prompt"], w["rows"], None, [""] * len(w["rows"]), sampling, {}, None, None)
    trainer._get_per_token_logps_and_entropies = exact_logps
    policy.train()
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # TRL's reward tensor takes torch's default dtype
    try:
        out = trainer._generate_and_score_completions([{"prompt": "x", "row": i} for i in range(len(w["rows"]))])
        if off_policy:
            policy.load_state_dict(w["theta"])
        policy.zero_grad(set_to_none=True)
        trainer.current_gradient_accumulation_steps = 1
        trainer._compute_loss(policy, out).backward()
    finally:
        torch.set_default_dtype(default)
    return {n: p.grad.detach().clone() for n, p in policy.named_parameters() if p.grad is not None}


def our_gradient(w, method, overrides, off_policy, with_sampler=True):
    """The gradient of eq 5's surrogate under `method`'s coefficient, the batch's sampler pi_old plus the noise."""
    from unified_rl import wiring
    preset, hp = wiring.configure(method, get_preset("tiny"), overrides)
    policy, batch = w["policy"], rollout(w)
    policy.load_state_dict(w["old"])
    with torch.no_grad():
        logp_old = wiring.policy_logp(policy, batch)
    batch = rollout(w, sampler_logp(w, logp_old, batch) if with_sampler else logp_old * batch.mask)
    if off_policy:
        policy.load_state_dict(w["theta"])
    policy.zero_grad(set_to_none=True)
    logp = wiring.policy_logp(policy, batch)
    step = Step(batch, w["rewards"], logp, logp_old if off_policy else logp.detach(), None, None, preset.rl, hp)
    surrogate_loss(logp, method.coefficient(step), batch.mask).backward()
    return {n: p.grad.detach().clone() for n, p in policy.named_parameters() if p.grad is not None}


def rel_params(a, b):
    scale = max(v.abs().max().item() for v in b.values())
    assert scale > 0 and set(a) == set(b)
    return max((a[k] - b[k]).abs().max().item() for k in b) / scale


TRL_IS = {  # TRL's vllm_importance_sampling_* -> the masks and their settings (mode, clip_max, clip_min)
    "token_truncate": (("tis",), lambda hi, lo: {"sampler_correction_level": "token", "sampler_correction_cap": hi,
                                                 "sampler_correction_floor": lo}),
    "sequence_truncate": (("tis",), lambda hi, lo: {"sampler_correction_level": "sequence",
                                                    "sampler_correction_cap": hi, "sampler_correction_floor": lo}),
    "token_mask": (("tis", "mis"), lambda hi, lo: {"sampler_correction_cap": None, "sampler_mask_level": "token",
                                                   "sampler_mask_low": lo, "sampler_mask_high": hi}),
    "sequence_mask": (("tis", "mis"), lambda hi, lo: {"sampler_correction_level": "sequence",
                                                      "sampler_correction_cap": None, "sampler_mask_level": "sequence",
                                                      "sampler_mask_low": lo, "sampler_mask_high": hi}),
}
TRL_CASES = {  # name: (loss settings, IS mode, clip_max, clip_min)
    "token-truncate": ({"loss_type": "grpo"}, "token_truncate", 1.2, None),
    "token-truncate-floor-dapo": ({"loss_type": "dapo"}, "token_truncate", 1.2, 0.9),
    "sequence-truncate": ({"loss_type": "grpo"}, "sequence_truncate", 1.5, None),
    "token-mask": ({"loss_type": "grpo"}, "token_mask", 1.25, 0.8),
    "sequence-mask": ({"loss_type": "bnpo"}, "sequence_mask", 2.0, 0.65),
}


def trl_case(w, case, off_policy):
    from unified_rl.methods import recompose
    from unified_rl.methods.table import GRPO_MASKS
    from unified_rl.peers import from_trl
    loss, mode, hi, lo = TRL_CASES[case]
    config = {**loss, "vllm_importance_sampling_correction": True, "vllm_importance_sampling_mode": mode,
              "vllm_importance_sampling_clip_max": hi, "vllm_importance_sampling_clip_min": lo}
    if w.get("sampling") is None:
        from unified_rl import wiring
        batch = rollout(w)
        w["policy"].load_state_dict(w["old"])
        with torch.no_grad():
            s = sampler_logp(w, wiring.policy_logp(w["policy"], batch), batch)
        w["sampling"] = [s[i, batch.mask[i].bool()].tolist() for i in range(len(w["rows"]))]
    sampled = w["sampling"]
    name, overrides = from_trl(**loss, num_generations=G, max_completion_length=TRL_T)
    masks, settings = TRL_IS[mode]
    method = recompose(name, kl="none", masks=GRPO_MASKS + masks)  # TRL's beta is 0 by default
    overrides = {k: v for k, v in overrides.items() if k != "use_bias_correction_kl"}  # k3's, and no KL here
    return trl_gradient(w, config, off_policy, sampled), method, {**overrides, **settings(hi, lo)}


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("case", list(TRL_CASES))
def test_trl_importance_sampling_correction_equals_the_sampler_masks(world, case, off_policy):
    theirs, method, overrides = trl_case(world, case, off_policy)
    assert rel_params(our_gradient(world, method, overrides, off_policy), theirs) < EXACT, case
    assert rel_params(our_gradient(world, method, overrides, off_policy, with_sampler=False), theirs) > SLIP


TRL_SLIPS = {
    "the ratio the wrong way round": ("token-truncate", "tis", lambda v, adv: torch.exp(
        v.sampler_logp - v.logp_old).clamp(max=1.2).expand_as(v.mask)),
    "the cap on rho A instead of rho": ("token-truncate", "tis", lambda v, adv: torch.where(
        adv != 0, (_rho_s(v) * adv).clamp(max=1.2) / adv.where(adv != 0, torch.ones_like(adv)), _rho_s(v))),
    "the sequence band tested per token": ("sequence-mask", "mis", lambda v, adv: (
        (_rho_s(v) >= 0.65) & (_rho_s(v) <= 2.0)).to(v.mask.dtype)),
}


@pytest.mark.parametrize("slip", list(TRL_SLIPS))
def test_a_slip_in_the_sampler_masks_fails_trl(world, slip, monkeypatch):
    case, name, planted = TRL_SLIPS[slip]
    theirs, method, overrides = trl_case(world, case, True)
    monkeypatch.setitem(MASKS, name, dataclasses.replace(MASKS[name], gc=planted))
    assert rel_params(our_gradient(world, method, overrides, True), theirs) > SLIP, slip


def test_the_trl_batch_sits_on_both_sides_of_every_bound(world):
    """rho_s = pi_old / pi_sampler = exp(-noise): each token bound (1.2, 0.9, 0.8, 1.25) and each sequence bound (1.5,
    0.65, 2.0) has tokens or rows on both of its sides."""
    tokens = torch.exp(-torch.tensor([x for n in world["noise"] for x in n]))
    rows = torch.exp(-torch.tensor([sum(n) for n in world["noise"]]))
    both = lambda x: bool(x.any()) and not bool(x.all())  # noqa: E731
    assert all(both(tokens > c) for c in (1.2, 0.9, 0.8, 1.25)) and all(both(rows > c) for c in (1.5, 0.65, 2.0))


def _expected_entropy_gradient(w, c, off_policy, weighted=True):
    """E over every token of the vocabulary at each position (the sampler's probability times the GC the
    entropy_bonus part gives that token), through eq 5's surrogate: the estimator's expected gradient."""
    method = compose("grpo", "vanilla", terms=("entropy_bonus",), name="entropy", entropy_coef=c)
    policy, batch = w["policy"], rollout(w)
    policy.load_state_dict(w["old"])
    with torch.no_grad():
        old_all = policy(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1].log_softmax(-1)
    policy.load_state_dict(w["theta"] if off_policy else w["old"])
    policy.zero_grad(set_to_none=True)
    logp_all = policy(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1].log_softmax(-1)
    cfg, zero = get_preset("tiny").rl, torch.zeros(len(w["rows"]), dtype=torch.float64)  # A = 0: the term alone
    total = 0
    for a in range(logp_all.shape[-1]):
        la, old_a = logp_all[..., a] * batch.mask, old_all[..., a] * batch.mask
        step = Step(rollout(w, old_a), zero, la, old_a, None, None, cfg, method.hparams)
        coef = method.coefficient(step) if weighted else method.coefficient(
            dataclasses.replace(step, logp_old=la.detach(), batch=rollout(w, la.detach())))
        total = total + surrogate_loss(la, torch.exp(old_a) * coef * batch.mask, batch.mask)
    total.backward()
    return {n: p.grad.detach().clone() for n, p in policy.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
def test_the_entropy_estimator_has_trls_gradient_in_expectation_not_on_one_batch(world, off_policy):
    """TRL's bonus gradient (its loss with entropy_coef 0.05 less its loss with 0) equals the entropy_bonus part's
    GC averaged over the sampler's distribution of each token; the GC of the batch's own tokens is an estimate of
    it, off by far more than round-off; with rho_s left out the expectation misses TRL's off-policy."""
    c = 0.05
    theirs = trl_gradient(world, {"loss_type": "grpo", "entropy_coef": c}, off_policy)
    base = trl_gradient(world, {"loss_type": "grpo"}, off_policy)
    bonus = {k: theirs[k] - base[k] for k in base}
    assert rel_params(_expected_entropy_gradient(world, c, off_policy), bonus) < EXACT
    one = our_gradient(world, compose("grpo", "vanilla", terms=("entropy_bonus",), name="entropy", entropy_coef=c),
                       {}, off_policy, with_sampler=False)
    policy_part = our_gradient(world, compose("grpo", "vanilla", name="plain"), {}, off_policy, with_sampler=False)
    assert rel_params({k: one[k] - policy_part[k] for k in one}, bonus) > SLIP  # one batch: an estimate
    if off_policy:
        assert rel_params(_expected_entropy_gradient(world, c, True, weighted=False), bonus) > SLIP
