"""Exercises of course/12_real_model.ipynb: what a 10^8-parameter model changes, checked by gradient.

In the notebook:  from unified_rl.course.ex.nb12_real_model import q1, q2, q3
q1: a micro-batch's share of eq 5's surrogate, so that accumulated gradients are the whole batch's
(`loop.accumulate`); q2: a LoRA layer's forward (peft's formula, which the notebook checks on
SmolLM2's own layer); q3: per-token log-probs from a causal LM's logits (`sampling.token_logp`
takes them from the model; the notebook compares the two on SmolLM2). Each is checked by value and
by its gradient, on inputs that vary every entry, and carries plausible wrong answers.
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


def _micro_batch(gen):
    B, T = int(torch.randint(5, 9, (), generator=gen)), int(torch.randint(4, 9, (), generator=gen))
    mask = _ragged_mask(gen, B, T)
    # a micro-batch inside the batch: neither at its start nor at its end, never 0 or 1 (the fixed cases
    # above take the first and the last rows), so an answer that assumes either is caught
    start = int(torch.randint(2, B - 2, (), generator=gen))
    stop = int(torch.randint(start + 1, B, (), generator=gen))
    return {"logp": (-2 * torch.rand(B, T, generator=gen, dtype=torch.float64)).requires_grad_(True),
            "coef": torch.randn(B, T, generator=gen, dtype=torch.float64), "mask": mask,
            "start": start, "stop": stop}


def _micro_case(B, start, stop):
    def make(gen):
        kw = _micro_batch(gen)
        T = kw["mask"].shape[1]
        mask = _ragged_mask(gen, B, T)
        kw.update(mask=mask, start=start, stop=stop,
                  logp=(-2 * torch.rand(B, T, generator=gen, dtype=torch.float64) * mask).requires_grad_(True),
                  coef=torch.randn(B, T, generator=gen, dtype=torch.float64) * mask)
        return kw
    return make


q1 = FunctionExercise(
    _micro_solution,
    cases={Msg("nb12.q1.case.the_first_3_of_5_rows_uneven_micro_batches"): _micro_case(5, 0, 3),
           Msg("nb12.q1.case.the_last_2_of_5_rows"): _micro_case(5, 3, 5),
           Msg("nb12.q1.case.half_of_4_rows"): _micro_case(4, 2, 4)},
    random_inputs=_micro_batch, grad=("logp",), var="my_micro_loss",
    title=Msg("nb12.q1.title"),
    hint=[Msg("nb12.q1.hint1"), Msg("nb12.q1.hint2")],
    solution=Msg("nb12.q1.solution"),
    solution_value=_micro_solution,
    wrong=[_micro_unweighted, _micro_half, _micro_summed_rows, _micro_token_share],
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


def _logp_inputs(gen):
    B, V = int(torch.randint(2, 6, (), generator=gen)), 7
    L = B + 2 + int(torch.randint(0, 4, (), generator=gen))
    T = L - 1
    lengths = torch.randperm(T - 1, generator=gen)[:B] + 1  # distinct response lengths, each < T
    mask = (torch.arange(T)[None] >= T - lengths[:, None]).double()  # (B, T): responses end each row
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
    wrong=[_logp_unshifted, _logp_probability, _logp_raw_logit, _logp_unmasked],
)
