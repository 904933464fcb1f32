"""Exercises of course/12_real_model.ipynb: what a 10^8-parameter model changes, checked by gradient.

In the notebook:  from unified_rl.course.ex.nb12_real_model import q1, q2, q3, q4, q5
q1: a micro-batch's share of eq 5's surrogate, so that accumulated gradients are the whole batch's
(`loop.accumulate`); q2: a LoRA layer's forward (peft's formula, which the notebook checks on
SmolLM2's own layer); q3: per-token log-probs from a causal LM's logits (`sampling.token_logp`
takes them from the model; the notebook compares the two on SmolLM2); q4: the response mask of a
chat rollout (prompt, reply, end-of-turn, right padding); q5: pi_ref's log-probs as the policy's
own model with its LoRA adapter switched off. Each is checked by value (and q1-q3 by gradient), on
inputs that vary every entry, and carries plausible wrong answers. q5 is given the learner's model: its
checker also reads the model afterwards (parameters, requires_grad, adapters on, the policy's log-probs)
and rejects an answer that returns the right numbers by stripping, zeroing, freezing, moving or leaving
off the adapters.
"""

import torch

from unified_rl.course.exercises import FunctionExercise
from unified_rl.course.i18n import Msg
from unified_rl.paradigm import surrogate_loss


def _ragged_mask(gen, B, T):
    lengths = torch.randint(1, T + 1, (B,), generator=gen)
    return (torch.arange(T)[None] < lengths[:, None]).double()  # (B, T)


# q1 (implementation): the loss of rows start:stop such that the micro-batches' gradients sum to the
# whole batch's. The surrogate averages over rows, so micro-batch k carries n_k / B of the batch.
def _micro_solution(logp, coef, mask, start, stop):
    B = logp.shape[0]
    return surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop]) * ((stop - start) / B)


def _micro_unweighted(logp, coef, mask, start, stop):
    """Each micro-batch's mean as it is: k micro-batches give k times the gradient."""
    return surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop])


def _micro_half(logp, coef, mask, start, stop):
    """1 / (number of micro-batches), hard-coded for two: right only when they are of equal size."""
    return surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop]) / 2


def _micro_summed_rows(logp, coef, mask, start, stop):
    """A sum over the micro-batch's rows instead of n_k / B of their mean."""
    return surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop]) * (stop - start)


def _micro_token_share(logp, coef, mask, start, stop):
    """Weighted by the micro-batch's share of tokens, not of rows (eq 5 averages rows)."""
    share = mask[start:stop].sum() / mask.sum()
    return surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop]) * share


def _micro_live_rows(logp, coef, mask, start, stop):
    """Normalised by the rows whose coefficient is not all zero: a GRPO group whose rewards are all
    equal (beta = 0) drops out of the count, and the batch's other rows weigh more."""
    per_row = (coef.detach() * logp * mask).sum(-1) / mask.sum(-1)  # (B,)
    live = (coef * mask).abs().sum(-1) > 0  # (B,)
    return -per_row[start:stop].sum() / live.sum()


def _micro_no_detach(logp, coef, mask, start, stop):
    """The surrogate written out without `coef.detach()`: a coefficient computed from logp leaks."""
    per_row = (coef * logp * mask).sum(-1) / mask.sum(-1)  # (B,)
    return -per_row[start:stop].sum() / logp.shape[0]


def _micro_batch(gen):
    B, T = int(torch.randint(5, 12, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))
    mask = _ragged_mask(gen, B, T)
    # a micro-batch inside the batch: neither at its start nor at its end, never 0 or 1 (the fixed cases
    # above take the first and the last rows), so an answer that assumes either is caught
    start = int(torch.randint(2, B - 2, (), generator=gen))
    stop = int(torch.randint(start + 1, B, (), generator=gen))
    coef = torch.randn(B, T, generator=gen, dtype=torch.float64)
    dead = int(torch.randint(0, B - 1, (), generator=gen))
    coef[dead:dead + 2] = 0.0  # a group of two whose rewards were equal: GRPO with beta = 0 gives it 0
    return {"logp": (-2 * torch.rand(B, T, generator=gen, dtype=torch.float64)).requires_grad_(True),
            "coef": coef, "mask": mask, "start": start, "stop": stop}


def _micro_case(B, start, stop, dead=()):
    def make(gen):
        kw = _micro_batch(gen)
        T = kw["mask"].shape[1]
        mask = _ragged_mask(gen, B, T)
        coef = torch.randn(B, T, generator=gen, dtype=torch.float64) * mask
        coef[list(dead)] = 0.0
        kw.update(mask=mask, start=start, stop=stop, coef=coef,
                  logp=(-2 * torch.rand(B, T, generator=gen, dtype=torch.float64) * mask).requires_grad_(True))
        return kw
    return make


q1 = FunctionExercise(
    _micro_solution,
    cases={Msg("nb12.q1.case.the_first_3_of_5_rows_uneven_micro_batches"): _micro_case(5, 0, 3),
           Msg("nb12.q1.case.the_last_2_of_5_rows"): _micro_case(5, 3, 5),
           Msg("nb12.q1.case.half_of_4_rows"): _micro_case(4, 2, 4),
           Msg("nb12.q1.case.a_group_of_4_rows_with_coefficient_0"): _micro_case(8, 0, 4, dead=range(4, 8))},
    # coef requires grad too: eq 5's surrogate sends nothing into it (its detach), so an answer without
    # the detach is told apart by the gradient even where its value is right
    random_inputs=_micro_batch, grad=("logp", "coef"), var="my_micro_loss",
    title=Msg("nb12.q1.title"),
    hint=[Msg("nb12.q1.hint1"), Msg("nb12.q1.hint2")],
    solution=Msg("nb12.q1.solution"),
    solution_value=_micro_solution,
    wrong=[_micro_unweighted, _micro_half, _micro_summed_rows, _micro_token_share, _micro_live_rows,
           _micro_no_detach],
)


# q2 (implementation): a LoRA layer, y = x W^T + (alpha / r) x A^T B^T (Hu et al. 2021, peft's
# default scaling alpha / r). W is frozen; A (r, in) and B (out, r) train.
def _lora_solution(x, weight, lora_A, lora_B, alpha, r):
    return x @ weight.T + (alpha / r) * (x @ lora_A.T) @ lora_B.T


def _lora_alpha(x, weight, lora_A, lora_B, alpha, r):
    """Scaled by alpha, without the 1/r."""
    return x @ weight.T + alpha * (x @ lora_A.T) @ lora_B.T


def _lora_rslora(x, weight, lora_A, lora_B, alpha, r):
    """rsLoRA's alpha / sqrt(r): another paper's scaling, not peft's default."""
    return x @ weight.T + (alpha / r ** 0.5) * (x @ lora_A.T) @ lora_B.T


def _lora_no_base(x, weight, lora_A, lora_B, alpha, r):
    """The adapter alone: the frozen weights forgotten."""
    return (alpha / r) * (x @ lora_A.T) @ lora_B.T


def _lora_unscaled(x, weight, lora_A, lora_B, alpha, r):
    return x @ weight.T + (x @ lora_A.T) @ lora_B.T


def _lora_inputs(gen):
    n_in, n_out = int(torch.randint(3, 7, (), generator=gen)), int(torch.randint(2, 6, (), generator=gen))
    r = int(torch.randint(2, 4, (), generator=gen))
    rand = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    return {"x": rand(2, 3, n_in).requires_grad_(True), "weight": rand(n_out, n_in),
            "lora_A": rand(r, n_in).requires_grad_(True), "lora_B": rand(n_out, r).requires_grad_(True),
            "alpha": float(torch.randint(1, 33, (), generator=gen)), "r": r}


def _weighted_sum(result, inputs):
    """A scalar whose gradient reaches the inputs through every output entry, each with its own weight
    (a plain sum would let an answer that permutes or misplaces entries through)."""
    w = torch.linspace(-1.0, 2.0, result.numel(), dtype=result.dtype).view_as(result)
    return (w * result).sum()


q2 = FunctionExercise(
    _lora_solution,
    cases={Msg("nb12.q2.case.r_2_alpha_16_B_0_at_initialisation_only_W"):
           lambda gen: {**_lora_inputs(gen), "lora_B": torch.zeros(4, 2, dtype=torch.float64).requires_grad_(True),
                        "weight": torch.randn(4, 5, generator=gen, dtype=torch.float64),
                        "x": torch.randn(1, 2, 5, generator=gen, dtype=torch.float64).requires_grad_(True),
                        "lora_A": torch.randn(2, 5, generator=gen, dtype=torch.float64).requires_grad_(True),
                        "alpha": 16.0, "r": 2}},
    random_inputs=_lora_inputs, grad=("x", "lora_A", "lora_B"), loss=_weighted_sum, var="my_lora_forward",
    title=Msg("nb12.q2.title"),
    hint=[Msg("nb12.q2.hint1"), Msg("nb12.q2.hint2")],
    solution=Msg("nb12.q2.solution"),
    solution_value=_lora_solution,
    wrong=[_lora_alpha, _lora_rslora, _lora_no_base, _lora_unscaled],
)


# q3 (implementation): per-token log-probs from a causal LM's logits, aligned with the targets
# input_ids[:, 1:] (sampling.py's convention), 0 off the response mask.
def _logp_solution(logits, input_ids, mask):
    lp = logits[:, :-1].log_softmax(-1)  # (B, T, V): position t predicts token t + 1
    return lp.gather(-1, input_ids[:, 1:, None])[..., 0] * mask  # (B, T)


def _logp_unshifted(logits, input_ids, mask):
    """Position t scored on its own token t: the model saw it already."""
    return logits[:, 1:].log_softmax(-1).gather(-1, input_ids[:, 1:, None])[..., 0] * mask


def _logp_probability(logits, input_ids, mask):
    """The probability, not its log."""
    return logits[:, :-1].softmax(-1).gather(-1, input_ids[:, 1:, None])[..., 0] * mask


def _logp_raw_logit(logits, input_ids, mask):
    """The target's logit, not normalised over the vocabulary."""
    return logits[:, :-1].gather(-1, input_ids[:, 1:, None])[..., 0] * mask


def _logp_unmasked(logits, input_ids, mask):
    """Prompt and padding positions kept."""
    return logits[:, :-1].log_softmax(-1).gather(-1, input_ids[:, 1:, None])[..., 0]


def _logp_to_row_end(logits, input_ids, mask):
    """Every position from the reply's first token to the row's end: the right padding after the
    end-of-turn token counted as reply."""
    reply = (mask.cumsum(-1) > 0).to(mask.dtype)  # (B, T)
    return logits[:, :-1].log_softmax(-1).gather(-1, input_ids[:, 1:, None])[..., 0] * reply


def _logp_inputs(gen):
    B, V = int(torch.randint(2, 6, (), generator=gen)), 7
    L = B + 2 + int(torch.randint(0, 4, (), generator=gen))
    T = L - 1
    lengths = torch.randperm(T - 1, generator=gen)[:B] + 1  # distinct response lengths, each < T
    mask = (torch.arange(T)[None] >= T - lengths[:, None]).double()  # (B, T): responses end each row
    # then right padding after the end-of-turn token on every row but one (as `sampling.sample` lays out
    # rows that ended early): the reply stops before the row does
    pad = torch.randint(0, 3, (B,), generator=gen).clamp(max=lengths - 1)  # (B,)
    pad[int(torch.randint(0, B, (), generator=gen))] = 0
    mask = mask * (torch.arange(T)[None] < T - pad[:, None])  # (B, T)
    return {"logits": torch.randn(B, L, V, generator=gen, dtype=torch.float64).requires_grad_(True),
            "input_ids": torch.randint(0, V, (B, L), generator=gen), "mask": mask}


q3 = FunctionExercise(
    _logp_solution,
    cases={Msg("nb12.q3.case.one_row_the_last_two_tokens_the_response"):
           lambda gen: {"logits": torch.randn(1, 4, 5, generator=gen, dtype=torch.float64).requires_grad_(True),
                        "input_ids": torch.tensor([[1, 2, 3, 4]]),
                        "mask": torch.tensor([[0.0, 1.0, 1.0]], dtype=torch.float64)}},
    random_inputs=_logp_inputs, grad=("logits",), loss=_weighted_sum, var="my_token_logp",
    title=Msg("nb12.q3.title"),
    hint=[Msg("nb12.q3.hint1"), Msg("nb12.q3.hint2")],
    solution=Msg("nb12.q3.solution"),
    solution_value=_logp_solution,
    wrong=[_logp_unshifted, _logp_probability, _logp_raw_logit, _logp_unmasked, _logp_to_row_end],
)


# q4 (implementation): the response mask of chat rollouts, aligned with the targets input_ids[:, 1:]
# (sampling.py's convention): 1 from the first reply token through the first end-of-turn token, 0 on
# the prompt (left padding and chat template included) and on the right padding after it. Padding uses
# the end-of-turn id itself (a tokenizer without a pad token pads with its EOS), so only the first one
# after the prompt ends the reply; a reply the budget cut off has none and runs to the row's end.
def _mask_reference(input_ids, prompt_len, eos_id):
    from unified_rl.sampling import _response_mask

    ends = input_ids[:, prompt_len:] == eos_id  # (B, N)
    N = ends.shape[1]
    first = torch.where(ends.any(-1), ends.float().argmax(-1) + 1, torch.full_like(ends[:, 0], N, dtype=torch.long))
    return _response_mask(prompt_len, first, input_ids.shape[1]).double()  # (B, T)


def _mask_solution(input_ids, prompt_len, eos_id):
    ends = (input_ids[:, prompt_len:] == eos_id).long()  # (B, N)
    before_or_first = (ends.cumsum(-1) - ends) == 0  # (B, N): up to and including the first end-of-turn
    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)  # (B, T)
    mask[:, prompt_len - 1:] = before_or_first.double()  # target t + 1 = prompt_len + j sits at t = prompt_len - 1 + j
    return mask


def _mask_to_row_end(input_ids, prompt_len, eos_id):
    """Every position after the prompt: the right padding counted as reply."""
    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)
    mask[:, prompt_len - 1:] = 1.0
    return mask


def _mask_without_end(input_ids, prompt_len, eos_id):
    """The reply's tokens without its end-of-turn token: the policy is never taught to stop."""
    ends = (input_ids[:, prompt_len:] == eos_id).long()  # (B, N)
    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)
    mask[:, prompt_len - 1:] = (ends.cumsum(-1) == 0).double()
    return mask


def _mask_unshifted(input_ids, prompt_len, eos_id):
    """Aligned with the input positions instead of the targets: one position late."""
    ends = (input_ids[:, prompt_len:] == eos_id).long()  # (B, N)
    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)
    mask[:, prompt_len:] = ((ends.cumsum(-1) - ends) == 0).double()[:, :-1]
    return mask


def _mask_not_eos(input_ids, prompt_len, eos_id):
    """Every reply position whose token is not the end-of-turn id: the end dropped, and a token after
    it (there is none but padding here) kept."""
    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)
    mask[:, prompt_len - 1:] = (input_ids[:, prompt_len:] != eos_id).double()
    return mask


def _chat_rows(gen):
    B, P, N, V = int(torch.randint(2, 6, (), generator=gen)), int(torch.randint(3, 7, (), generator=gen)), \
        int(torch.randint(3, 7, (), generator=gen)), 20
    eos = int(torch.randint(2, V, (), generator=gen))  # the end-of-turn id: any id, not a fixed one
    ids = torch.randint(0, V - 1, (B, P + N), generator=gen)
    ids[ids >= eos] += 1  # never the end-of-turn id by chance
    prompt_lengths = torch.randint(1, P + 1, (B,), generator=gen)  # (B,) left padding before each prompt
    ids[:, :P][torch.arange(P)[None] < P - prompt_lengths[:, None]] = eos
    lengths = torch.randint(1, N + 1, (B,), generator=gen)  # (B,) reply tokens, the end-of-turn included
    cut = int(torch.randint(0, B, (), generator=gen))
    for i in range(B):
        if i == cut:
            continue  # this row ran out of budget: no end-of-turn
        ids[i, P + lengths[i] - 1:] = eos  # the end-of-turn token, then right padding with the same id
    return {"input_ids": ids, "prompt_len": P, "eos_id": eos}


q4 = FunctionExercise(
    _mask_reference,
    cases={Msg("nb12.q4.case.two_rows_one_ended_one_cut"):
           lambda gen: {"input_ids": torch.tensor([[0, 5, 6, 7, 8, 0, 0], [3, 4, 5, 7, 8, 9, 6]]),
                        "prompt_len": 3, "eos_id": 0}},
    random_inputs=_chat_rows, grad=(), var="my_response_mask",
    title=Msg("nb12.q4.title"),
    hint=[Msg("nb12.q4.hint1"), Msg("nb12.q4.hint2")],
    solution=Msg("nb12.q4.solution"),
    solution_value=_mask_solution,
    wrong=[_mask_to_row_end, _mask_without_end, _mask_unshifted, _mask_not_eos],
)


# q5 (implementation): pi_ref's per-token log-probs when pi_ref is the policy's own model with its LoRA
# adapter switched off (llm.AdapterDisabled): no second copy of the weights, and no gradient.
def _ref_solution(model, input_ids, attention_mask):
    from unified_rl.sampling import token_logp

    with model.disable_adapter(), torch.no_grad():
        return token_logp(model, input_ids, attention_mask)


def _ref_adapter_on(model, input_ids, attention_mask):
    """The policy's own log-probs: the adapter left on."""
    from unified_rl.sampling import token_logp

    with torch.no_grad():
        return token_logp(model, input_ids, attention_mask)


def _ref_no_attention_mask(model, input_ids, attention_mask):
    """The adapter off, but the left padding attended to (no attention mask)."""
    from unified_rl.models import position_ids_of

    with model.disable_adapter(), torch.no_grad():
        logits = model(input_ids=input_ids, position_ids=position_ids_of(attention_mask)).logits[:, :-1]  # (B, T, V)
        logp = logits.log_softmax(-1).gather(-1, input_ids[:, 1:, None])[..., 0]  # (B, T)
    return logp * (attention_mask[:, :-1] * attention_mask[:, 1:])


def _ref_base_model(model, input_ids, attention_mask):
    """`model.get_base_model()` taken for pi_ref: it is the same model with its LoRA layers in it, still on."""
    from unified_rl.sampling import token_logp

    with torch.no_grad():
        return token_logp(model.get_base_model(), input_ids, attention_mask)


def _harming(harm, doc, after=False):
    """A wrong answer: pi_ref's right numbers, from a model that `harm` changes in place (before computing them,
    the adapters' own state doing the switching off; or after: the solution, then the harm)."""
    def answer(model, input_ids, attention_mask):
        from unified_rl.sampling import token_logp

        if after:
            out = _ref_solution(model, input_ids, attention_mask)
            harm(model)
            return out
        harm(model)
        with torch.no_grad():
            return token_logp(model, input_ids, attention_mask).double()
    answer.__doc__ = doc
    return answer


def _zero_lora_b(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.zero_()


_ref_damaging = [
    _harming(lambda m: m.base_model.unload(), "the adapters taken out (peft's `unload`): the policy is gone"),
    _harming(_zero_lora_b, "every lora_B set to 0 in place: the adapter adds nothing, the training is lost"),
    _harming(lambda m: m.base_model.disable_adapter_layers(), "the adapters switched off and never on again"),
    _harming(lambda m: m.requires_grad_(False), "requires_grad_(False) on the whole model: its adapters no longer "
             "train", after=True),
    _harming(lambda m: m.float(), "`model.float()`: close numbers, and a float32 model afterwards", after=True),
    _harming(lambda m: m.to("meta"), "the model moved off its device (`.to(...)`) after the right numbers", after=True),
    _harming(lambda m: [x.register_forward_hook(lambda mod, i, o: o * 0) for n, x in m.named_modules()
                        if n.endswith("lora_B.default")],
             "a forward hook that silences every adapter: no parameter changes, the policy's outputs do"),
]


def _policy_logp(model, input_ids, attention_mask):
    """What the learner's policy computes (adapters on): a pi_ref answer must leave it as it was."""
    from unified_rl.sampling import token_logp

    return token_logp(model, input_ids, attention_mask)


def _lora_llama(gen):
    """A tiny random Llama with LoRA adapters whose B is not 0 (so the adapter changes the output)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from unified_rl.llm import add_lora

    import warnings

    cfg = LlamaConfig(vocab_size=24, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                      bos_token_id=None, eos_token_id=0, pad_token_id=0, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
    with warnings.catch_warnings():  # peft's notice about a transformers name it still reads
        warnings.simplefilter("ignore", FutureWarning)
        model = add_lora(model, r=2, alpha=4)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
    B, L = int(torch.randint(2, 5, (), generator=gen)), int(torch.randint(5, 9, (), generator=gen))
    ids = torch.randint(1, 24, (B, L), generator=gen)
    att = torch.ones(B, L, dtype=torch.long)
    att[0, : int(torch.randint(1, L - 2, (), generator=gen))] = 0  # row 0 left-padded
    ids[att == 0] = 0
    return {"model": model, "input_ids": ids, "attention_mask": att}


q5 = FunctionExercise(
    _ref_solution,
    random_inputs=_lora_llama, n_random=3, grad=(), detached=True, var="my_reference_logp", keeps=_policy_logp,
    title=Msg("nb12.q5.title"),
    hint=[Msg("nb12.q5.hint1"), Msg("nb12.q5.hint2")],
    solution=Msg("nb12.q5.solution"),
    solution_value=_ref_solution,
    wrong=[_ref_adapter_on, _ref_no_attention_mask, _ref_base_model,
           *_ref_damaging],  # the right numbers from a model the answer leaves changed (read afterwards)
)
