"""Many samples of one question, for Pass@K / Maj@K on a chat LLM: the same distribution as
`sampling.sample`, at a fraction of its cost.

`sampling.sample` is the trainer's sampler: every row is prefilled, and every row decodes until the
last one ends. Evaluating Figure 7 needs n = 64 replies to each question and nothing else (no
per-token log-probs for a gradient), so here the question's prompt is prefilled once and its KV
cache repeated n times (a 40-token chat prompt prefilled 64 times costs as much as ~20 decoding
steps), and a row that has ended leaves the batch (its cache rows are dropped), so the work follows
the replies' mean length rather than the longest one. Each token is drawn from softmax(logits / T)
as in `sampling.sample`; greedy decoding gives the same replies (tests/test_real_model_experiment.py).
"""

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from ..sampling import autocast, stop_ids
from ..tokenizer import encode_problems


@dataclass
class Replies:
    """The replies to one question, and which of them the token budget cut off."""

    texts: list  # decoded replies, without special tokens
    cut: list  # True where the reply had not ended when the budget ran out
    tokens: list  # each reply's length in tokens (its end-of-turn token included)


@torch.no_grad()
def replies(model, tokenizer, problem, n, max_new_tokens, temperature=0.7, greedy=False) -> Replies:
    """`n` replies to `problem` (sampled at `temperature`, or greedy), each cut at `max_new_tokens`."""
    if n < 1 or max_new_tokens < 1:
        raise ValueError(f"need n >= 1 and max_new_tokens >= 1, got {n}, {max_new_tokens}")
    if not greedy and not temperature > 0:
        raise ValueError(f"temperature must be > 0 when sampling, got {temperature}")
    device = next(model.parameters()).device
    stops = torch.tensor(stop_ids(model, tokenizer), device=device)  # (S,)
    prompt = torch.tensor(encode_problems(tokenizer, [problem]), device=device)  # (1, P)
    P = prompt.shape[1]
    was_training = model.training
    model.eval()
    try:
        cache = DynamicCache(config=model.config)
        with autocast(device):
            out = model(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache.batch_repeat_interleave(n)  # the prompt's keys and values, once per row
        logits = out.logits[:, -1].float().expand(n, -1)  # (n, V)
        alive = torch.arange(n, device=device)  # rows still decoding, in the order of the cache
        tokens = [[] for _ in range(n)]
        ended = [False] * n
        for i in range(max_new_tokens):
            if greedy:
                tok = logits.argmax(-1)  # (A,)
            else:
                tok = torch.multinomial((logits / temperature).softmax(-1), 1).squeeze(-1)  # (A,)
            stop = torch.isin(tok, stops)  # (A,)
            for row, t, s in zip(alive.tolist(), tok.tolist(), stop.tolist()):
                tokens[row].append(t)
                ended[row] = s
            keep = (~stop).nonzero().squeeze(-1)  # (A',) positions in the batch that go on
            if keep.numel() == 0 or i + 1 == max_new_tokens:
                break
            if keep.numel() < alive.numel():
                cache.batch_select_indices(keep)
                alive, tok = alive[keep], tok[keep]
            pos = torch.full((alive.numel(), 1), P + i, device=device)  # (A', 1) no padding: one prompt
            with autocast(device):
                out = model(input_ids=tok[:, None], position_ids=pos, past_key_values=cache, use_cache=True)
            logits = out.logits[:, -1].float()  # (A', V)
    finally:
        model.train(was_training)
    texts = tokenizer.batch_decode(tokens, skip_special_tokens=True)
    return Replies(texts, [not e for e in ended], [len(t) for t in tokens])
