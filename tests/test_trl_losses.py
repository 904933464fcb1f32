"""Every GRPO loss type and advantage option of TRL 1.16 against TRL's own code, through `peers.from_trl`.

For each case TRL's GRPOTrainer is built from the GRPOConfig a learner would write. Its sampler is
replaced by a fixed batch (`_generate` returns our token ids), its log-probs are the model's float64
ones (`exact_logps`: TRL's fused LM head works in float32) and its rewards float64 (torch's default dtype,
which TRL's reward tensor takes, is float64 while it scores), so that TRL's own
`_generate_and_score_completions` computes the rewards' advantages (scale_rewards, GDPO's normalisation,
truncation masks) and TRL's own `_compute_loss` the loss; the parameter gradient of that loss is compared
with the gradient of eq 5's surrogate under the coefficient of `METHODS[name]` with the settings
`peers.from_trl` maps the config to, on the same float64 model. The batch is ragged (responses of 1 to 6
tokens, some cut at the budget without EOS), with prompts of one length so no left padding enters
either side's log-probs. Each case runs on-policy and off-policy (pi_theta moved from pi_old after the
batch was scored, TRL's old_per_token_logps then differ from its log-probs), and each family of cases has
a negative control: a slip in the mapping (TRL's eps of 1e-4 taken as ours, a loss type's aggregation: dapo's
batch token mean as the per-group one, CISPO's bound) is caught far above round-off. Needs the bench extra (TRL);
skipped without it.
"""

import copy
import dataclasses
import os
import warnings

import pytest
import torch

pytest.importorskip("trl", reason="TRL is in the bench extra (make test installs it)")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from datasets import Dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from unified_rl import wiring  # noqa: E402
from unified_rl.methods import METHODS  # noqa: E402
from unified_rl.paradigm import step_from_tensors, surrogate_loss  # noqa: E402
from unified_rl.peers import from_trl  # noqa: E402
from unified_rl.presets import get_preset  # noqa: E402
from unified_rl.sampling import Rollout  # noqa: E402
from unified_rl.tokenizer import encode_problems  # noqa: E402
from unified_rl.trainer import make_lab  # noqa: E402

TOL = 1e-10  # relative to the largest gradient entry: float64 round-off is ~1e-15
G, GROUPS, T = 4, 3, 6  # group size, groups, longest response


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The tiny lab's model in float64 at pi_old and at a moved pi_theta, pi_ref saved where TRL loads it, a batch."""
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    policy = lab.policy.double()
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    old = copy.deepcopy(policy.state_dict())
    ref = copy.deepcopy(policy)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.1 * torch.randn_like(p))
        for p in policy.parameters():
            p.add_(0.04 * torch.randn_like(p))
    theta = copy.deepcopy(policy.state_dict())
    folder = str(tmp_path_factory.mktemp("ref"))
    ref.save_pretrained(folder)
    lab.tokenizer.save_pretrained(folder)
    policy.config._name_or_path = folder  # TRL builds pi_ref from the policy's config path when beta > 0
    tok = lab.tokenizer
    width = len(encode_problems(tok, [lab.rl_problems[0]])[0])
    problems = [p for p in lab.rl_problems if len(encode_problems(tok, [p])[0]) == width][:GROUPS]
    g = torch.Generator().manual_seed(0)
    special = {tok.eos_token_id, tok.pad_token_id, tok.bos_token_id}
    vocab = [i for i in range(len(tok)) if i not in special]
    rows, lengths = [], [2, 6, 1, 6, 4, 6, 3, 5, 6, 2, 6, 4]  # 6 without EOS: cut at the budget
    for n in lengths:
        ids = [vocab[int(j)] for j in torch.randint(0, len(vocab), (n,), generator=g)]
        rows.append(ids if n == T else ids[:-1] + [tok.eos_token_id])
    rewards = torch.tensor([1., 0., 0., 1., 0., 1., 1., 1., 0., 0., 0., 1.], dtype=torch.float64)
    # a second reward, real-valued and exact in float32: TRL stores each reward function's output as float32
    second = -torch.rand(len(rows), generator=g, dtype=torch.float64).float().double()
    prompt = [encode_problems(tok, [p])[0] for p in problems for _ in range(G)]
    return dict(lab=lab, policy=policy, old=old, theta=theta, tok=tok, rows=rows, prompt=prompt,
                problems=[p for p in problems for _ in range(G)], rewards=rewards, second=second)


def rollout(w):
    """Our Rollout of the batch: prompts (one length), right-padded responses, the response mask."""
    P, B = len(w["prompt"][0]), len(w["rows"])
    ids = torch.full((B, P + T), w["tok"].pad_token_id, dtype=torch.long)
    att = torch.zeros(B, P + T, dtype=torch.long)
    for i, (p, r) in enumerate(zip(w["prompt"], w["rows"])):
        ids[i, :P + len(r)] = torch.tensor(p + r)
        att[i, :P + len(r)] = 1
    mask = (att[:, 1:] * (torch.arange(1, P + T) >= P)).double()  # (B, T'): targets in the response
    ended = torch.tensor([r[-1] == w["tok"].eos_token_id for r in w["rows"]])
    return Rollout(ids, att, mask, torch.zeros_like(mask), [""] * B, w["problems"], G, P, ended=ended)


def entropies(model, batch):
    """(B, T') the model's entropy at each response target, float64."""
    with torch.no_grad():
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1].double()
    logp = logits.log_softmax(-1)
    return -(logp.exp() * logp).sum(-1) * batch.mask


def exact_logps(model, input_ids, attention_mask, logits_to_keep, compute_entropy=False, **kw):
    """TRL's log-probs and entropies of the last `logits_to_keep` tokens, in float64: its fused LM head computes
    them in float32 (4e-7 from the float64 forward), so the test hands TRL's loss the unfused forward's."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -logits_to_keep - 1:-1]
    logp = logits.log_softmax(-1)  # (B, C, V) float64
    chosen = logp.gather(-1, input_ids[:, -logits_to_keep:, None]).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(-1) if compute_entropy else None
    return chosen, entropy, None


def trl_gradient(w, config, off_policy, n_rewards=1, micro=None):
    """TRL's gradient: its trainer scores the batch (at pi_old) and differentiates its loss (at pi_theta)."""
    def reward(name):
        def fn(prompts, completions, row, **kw):
            return [float(w[name][i]) for i in row]
        fn.__name__ = name
        return fn
    policy = copy.deepcopy(w["policy"])  # TRL patches its model's forward: a copy of ours each time
    policy.load_state_dict(w["old"])
    args = GRPOConfig(output_dir=w["out"], num_generations=G, per_device_train_batch_size=micro or G * GROUPS,
                      gradient_accumulation_steps=GROUPS if micro else 1, max_completion_length=T,
                      num_iterations=2 if off_policy else 1, temperature=1.0, report_to="none", use_cpu=True,
                      bf16=False, fp16=False, gradient_checkpointing=False,
                      disable_tqdm=True, save_strategy="no", max_steps=1, remove_unused_columns=False, **config)
    data = Dataset.from_dict({"prompt": ["x"] * (G * GROUPS)})
    funcs = [reward("rewards"), reward("second")][:n_rewards]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(model=policy, reward_funcs=funcs, args=args, train_dataset=data,
                              processing_class=w["tok"])
    trainer._generate = lambda prompts: (w["prompt"], w["rows"], None, [""] * len(w["rows"]), None, {}, None, None)
    trainer._get_per_token_logps_and_entropies = exact_logps
    policy.train()
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # TRL makes its reward tensor with torch's default dtype (float32)
    try:
        out = trainer._generate_and_score_completions([{"prompt": "x", "row": i} for i in range(len(w["rows"]))])
        if off_policy:
            policy.load_state_dict(w["theta"])
        policy.zero_grad(set_to_none=True)
        chunks = [range(k, k + micro) for k in range(0, len(w["rows"]), micro)] if micro else [range(len(w["rows"]))]
        trainer.current_gradient_accumulation_steps = len(chunks)
        for rows in chunks:
            part = {k: (v[rows.start:rows.stop] if torch.is_tensor(v) and v.dim() > 0 else v) for k, v in out.items()}
            trainer._compute_loss(policy, part).backward()
    finally:
        torch.set_default_dtype(default)
    grad = {n: p.grad.detach().clone() for n, p in policy.named_parameters() if p.grad is not None}
    return grad, out


def our_gradient(w, name, overrides, off_policy, n_rewards=1, entropy_at=None):
    """The gradient of eq 5's surrogate under METHODS[name]'s coefficient with `overrides`."""
    m = METHODS[name]
    preset, hp = wiring.configure(m, get_preset("tiny"), overrides)
    policy, batch = w["policy"], rollout(w)
    policy.load_state_dict(w["old"])
    with torch.no_grad():
        logp_old = wiring.policy_logp(policy, batch)
        logp_ref = wiring.policy_logp(w["ref"], batch) if m.uses_ref else None
    ent = entropies(policy, batch)
    if off_policy:
        policy.load_state_dict(w["theta"])
        if entropy_at == "theta":  # TRL ranks pi_theta's entropies: given to the step, the GC is TRL's exactly
            ent = entropies(policy, batch)
    policy.zero_grad(set_to_none=True)
    logp = wiring.policy_logp(policy, batch)
    scores = torch.stack([w["rewards"], w["second"]], -1) if n_rewards == 2 else w["rewards"]
    step = step_from_tensors(logp, batch.mask, preset.rl, logp_ref=logp_ref, logp_old=logp_old if off_policy else None,
                             scores=scores, group_size=G, hp=hp, truncated=batch.truncated, entropy=ent)
    surrogate_loss(logp, m.coefficient(step), batch.mask).backward()
    return {n: p.grad.detach().clone() for n, p in policy.named_parameters() if p.grad is not None}


def rel(a, b):
    scale = max(v.abs().max().item() for v in b.values())
    assert scale > 0 and set(a) == set(b)
    return max((a[k] - b[k]).abs().max().item() for k in b) / scale


@pytest.fixture(scope="module")
def w(world, tmp_path_factory):
    ref = copy.deepcopy(world["policy"])  # pi_ref as TRL loads it: read back from the folder
    ref.load_state_dict(type(world["policy"]).from_pretrained(world["policy"].config._name_or_path,
                                                             dtype=torch.float64).state_dict())
    return {**world, "ref": ref, "out": str(tmp_path_factory.mktemp("trl"))}


CASES = {  # name: (GRPOConfig loss settings, TRL's keyword for the micro-batch rows or None, reward functions)
    "grpo": ({"loss_type": "grpo"}, None, 1),
    "dr_grpo": ({"loss_type": "dr_grpo", "scale_rewards": False}, None, 1),
    "dapo": ({"loss_type": "dapo", "epsilon_high": 0.28}, None, 1),
    "bnpo-one-micro-batch": ({"loss_type": "bnpo"}, None, 1),
    "bnpo-per-group": ({"loss_type": "bnpo"}, G, 1),
    "cispo": ({"loss_type": "cispo", "epsilon_high": 1.1}, None, 1),
    "sapo": ({"loss_type": "sapo", "sapo_temperature_neg": 2.0}, None, 1),
    "vespo": ({"loss_type": "vespo"}, None, 1),
    "luspo": ({"loss_type": "luspo", "importance_sampling_level": "sequence", "epsilon": 0.02,
               "epsilon_high": 0.03}, None, 1),
    "luspo-beta-delta": ({"loss_type": "luspo", "importance_sampling_level": "sequence", "epsilon": 0.02,
                          "epsilon_high": 0.03, "beta": 0.1, "delta": 1.02}, None, 1),
    "gspo": ({"loss_type": "grpo", "importance_sampling_level": "sequence", "epsilon": 0.02, "epsilon_high": 0.03},
             None, 1),
    "beta-bias-corrected": ({"loss_type": "grpo", "beta": 0.1}, None, 1),
    "beta-plain-k3": ({"loss_type": "grpo", "beta": 0.1, "use_bias_correction_kl": False}, None, 1),
    "beta-sequence": ({"loss_type": "dapo", "beta": 0.1, "importance_sampling_level": "sequence"}, None, 1),
    "scale-batch": ({"loss_type": "grpo", "scale_rewards": "batch"}, None, 1),
    "scale-none-dapo": ({"loss_type": "dapo", "scale_rewards": "none"}, None, 1),
    "delta": ({"loss_type": "grpo", "delta": 1.02, "epsilon": 0.01}, None, 1),
    "mask-truncated": ({"loss_type": "dapo", "mask_truncated_completions": True}, None, 1),
    "mask-truncated-grpo": ({"loss_type": "grpo", "mask_truncated_completions": True, "beta": 0.1}, None, 1),
    "top-entropy": ({"loss_type": "grpo", "top_entropy_quantile": 0.37}, None, 1),
    "off-policy-mask": ({"loss_type": "dapo", "off_policy_mask_threshold": 0.002}, None, 1),
    "gdpo": ({"loss_type": "grpo", "multi_objective_aggregation": "normalize_then_sum"}, None, 2),
    "two-rewards-summed": ({"loss_type": "grpo"}, None, 2),
    "cispo-scale-none": ({"loss_type": "cispo", "epsilon_high": 5.0, "scale_rewards": "none"}, None, 1),
    "sapo-scale-batch": ({"loss_type": "sapo", "scale_rewards": "batch"}, None, 1),
}


def mapped(config, micro, n_rewards):
    # micro-batches of one group each, as this test builds them: TRL generates each apart (steps_per_generation 1)
    extra = {"per_device_train_batch_size": micro, "gradient_accumulation_steps": GROUPS,
             "steps_per_generation": 1} if micro else {}
    return from_trl(**config, **extra, num_generations=G, max_completion_length=T, n_rewards=n_rewards)


def test_bnpo_over_shuffled_micro_batches_is_refused_because_trl_shuffles():
    """TRL's own shuffle and split (the generation batch of steps_per_generation micro-batches: shuffle_sequence_dict,
    then split_tensor_dict) give micro-batches that are not the groups, so bnpo with gradient accumulation (and
    steps_per_generation left at gradient_accumulation_steps, TRL's default) normalises random sets of rows: from_trl
    refuses it in one line naming the shuffle; one generation per one-group micro-batch maps to group-token-mean."""
    from trl.trainer.utils import shuffle_sequence_dict, split_tensor_dict

    torch.manual_seed(0)
    rows = {"group": torch.arange(GROUPS).repeat_interleave(G)}  # the generation batch, group-major as TRL makes it
    chunks = split_tensor_dict(shuffle_sequence_dict(rows), GROUPS)
    assert any(len(set(c["group"].tolist())) > 1 for c in chunks)  # a micro-batch holds rows of several groups
    config = dict(loss_type="bnpo", num_generations=G, per_device_train_batch_size=G, gradient_accumulation_steps=GROUPS)
    with pytest.raises(ValueError, match="shuffles the rows") as e:
        from_trl(**config)
    assert "\n" not in str(e.value)
    assert from_trl(**config, steps_per_generation=1)[1]["aggregation"] == "group-token-mean"
    assert from_trl(loss_type="bnpo")[1]["aggregation"] == "token-mean"  # one micro-batch


@pytest.mark.parametrize("off_policy", [False, True], ids=["on-policy", "off-policy"])
@pytest.mark.parametrize("case", list(CASES))
def test_trl_loss_equals_the_package_coefficient(w, case, off_policy):
    config, micro, n_rewards = CASES[case]
    theirs, _ = trl_gradient(w, config, off_policy, n_rewards, micro)
    name, overrides = mapped(config, micro, n_rewards)
    ours = our_gradient(w, name, overrides, off_policy, n_rewards, entropy_at="theta")
    assert rel(ours, theirs) < TOL, (case, name, overrides)


def test_the_off_policy_batch_exercises_the_clips(w):
    """pi_theta moved enough that TRL's ratios leave [0.8, 1.2] on some tokens and stay inside on others."""
    _, out = trl_gradient(w, {"loss_type": "grpo"}, True)
    batch = rollout(w)
    w["policy"].load_state_dict(w["theta"])
    with torch.no_grad():
        logp = wiring.policy_logp(w["policy"], batch)[:, batch.prompt_len - 1:]
    on = out["completion_mask"].bool()
    r = torch.exp(logp - out["old_per_token_logps"])[on]
    assert ((r - 1).abs() > 0.2).any() and ((r - 1).abs() < 0.05).any()


def test_the_top_entropy_convention_is_named(w):
    """Off-policy the lab ranks the sampler's entropies (pi_old), TRL pi_theta's: the gradients differ until
    the step is given pi_theta's entropies (the case above)."""
    config, micro, n = CASES["top-entropy"]
    theirs, _ = trl_gradient(w, config, True)
    ours = our_gradient(w, *mapped(config, micro, n), True, entropy_at="old")
    assert rel(ours, theirs) > 1e-6


SLIPS = {  # a mapping slip in each family, and the case it must break
    "ours-eps-1e-6": ("grpo", lambda o: {**o, "adv_eps": 1e-6}),
    "grpo-as-dapo": ("grpo", lambda o: {**o, "aggregation": "token-mean"}),
    "dapo-per-group": ("dapo", lambda o: {**o, "aggregation": "group-token-mean"}),
    "bnpo-per-batch": ("bnpo-per-group", lambda o: {**o, "aggregation": "token-mean"}),
    "luspo-token-mean": ("luspo", lambda o: {**o, "aggregation": "seq-mean-token-mean"}),
    "dr-grpo-per-response": ("dr_grpo", lambda o: {**o, "aggregation": "seq-mean-token-mean"}),
    "cispo-bound-not-shifted": ("cispo", lambda o: {**o, "cispo_clip_eps_high": o["cispo_clip_eps_high"] + 1}),
    "k3-without-ratio": ("beta-bias-corrected", lambda o: {**o, "use_bias_correction_kl": False}),
    "truncated-kept": ("mask-truncated", lambda o: {**o, "mask_truncated_completions": False}),
    "gdpo-as-summed": ("gdpo", lambda o: {**o, "multi_objective_aggregation": "sum_then_normalize"}),
    "sapo-taus-swapped": ("sapo", lambda o: {**o, "sapo_tau_pos": o["sapo_tau_neg"], "sapo_tau_neg": o["sapo_tau_pos"]}),
}


@pytest.mark.parametrize("slip", list(SLIPS))
def test_a_mapping_slip_is_caught(w, slip):
    case, change = SLIPS[slip]
    config, micro, n_rewards = CASES[case]
    theirs, _ = trl_gradient(w, config, True, n_rewards, micro)
    name, overrides = mapped(config, micro, n_rewards)
    ours = our_gradient(w, name, change(overrides), True, n_rewards, entropy_at="theta")
    assert rel(ours, theirs) > 1e-6, slip


def test_from_trl_names_what_it_cannot_map():
    with pytest.raises(ValueError, match="epsilon_high itself"):
        from_trl(loss_type="cispo")  # epsilon_high unset: TRL caps every weight at epsilon = 0.2
    with pytest.raises(ValueError, match="requires importance_sampling_level"):
        from_trl(loss_type="luspo")
    with pytest.raises(ValueError, match="beta"):
        from_trl(loss_type="sapo", beta=0.04)
    with pytest.raises(ValueError, match="does not read"):
        from_trl(loss_type="grpo", output_dirr="x")
    with pytest.raises(ValueError, match="unknown TRL loss_type"):
        from_trl(loss_type="ppo")
    assert dataclasses.is_dataclass(METHODS[from_trl(loss_type="vespo")[0]].hparams)
    assert mapped(*CASES["luspo"])[0] == "luspo"  # the luspo row: grpo x gspo x seq-mean-token-sum
    assert mapped(*CASES["luspo-beta-delta"])[0] == "grpo"  # its KL and delta: grpo's sequence ratio
