"""Where responses come from: batched sampling with a KV cache, and rollouts from given texts.

A `Rollout` is the data every method's gradient (DeepSeekMath eq 5) is computed on. Per-token
tensors are (B, T) with T = L-1, aligned with the *targets* `input_ids[:, 1:]`:

    logp[:, t] = log pi(input_ids[:, t+1] | input_ids[:, :t+1])
    mask[:, t] = 1  exactly when input_ids[:, t+1] is a response token (its closing EOS included)

Each row is a left-padded prompt block of width `prompt_len` followed by a right-padded response.
Positions skip the left padding, so a prompt's log-probs do not depend on how it was padded.
Rows are group-major: rows g*G ... g*G+G-1 answer problem g (GRPO's groups, eq 19-21).
"""

import contextlib
import functools
import os
from dataclasses import dataclass, fields, replace
from typing import Optional

import torch
from transformers import DynamicCache

from .models import position_ids_of
from .tokenizer import encode_problems

RESPONSE_SLACK = 4  # tokens allowed past the longest reference response before a row is cut
# On a GPU, `sample` asks "has every row ended?" once per this many tokens: each ask copies a flag
# to the host and stalls the queue of kernels. On the CPU it asks every token (nothing to stall).
CUDA_DONE_CHECK_EVERY = 8


def response_budget(problems) -> int:
    """The sampler's default max_new_tokens for `problems`: the problems' own `max_new_tokens` when
    each has one (a task in words), else the longest reference answer + EOS + slack (the lab's task).

    The one place this budget is computed: `sample` cuts a row there, and DAPO's overlong reward
    (rewards.OverlongReward) reads it as L_max.
    """
    own = [getattr(p, "max_new_tokens", None) for p in problems]
    if all(n is not None for n in own):
        return max(own)
    return max(len(p.solution) for p in problems) + 1 + RESPONSE_SLACK


@dataclass
class Rollout:
    """Prompts, responses and their per-token data, ready for the eq-5 surrogate."""

    input_ids: torch.LongTensor  # (B, L) prompt + response + right padding
    attention_mask: torch.LongTensor  # (B, L)
    mask: torch.Tensor  # (B, T) float, 1 on response targets
    logp: torch.Tensor  # (B, T) float, log pi_sampler of each target, detached, 0 off the mask
    texts: list[str]  # decoded responses, without special tokens
    problems: list  # the Problem of each row (group-major)
    group_size: int
    prompt_len: int  # width of the left-padded prompt block
    budget: Optional[torch.Tensor] = None  # (B,) long: the sampler's max_new_tokens for each row; None: given texts
    ended: Optional[torch.Tensor] = None  # (B,) bool: the row ended with a stop token (False: cut at its budget)
    entropy: Optional[torch.Tensor] = None  # (B, T) entropy of pi_sampler (untempered) at each target, 0 off the mask
    ranks: str | None = None  # in a distributed run: "share" (this rank's part) or "all" (every rank's)

    def __len__(self):
        return self.input_ids.shape[0]

    def to(self, device) -> "Rollout":
        """The same rollout with its tensors on `device`."""
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for k, v in moved.items():
            if torch.is_tensor(v):
                moved[k] = v.to(device)
        return Rollout(**moved)

    @property
    def truncated(self) -> Optional[torch.Tensor]:
        """(B,) bool: the rows the sampler cut at their budget before a stop token; None for given texts."""
        return None if self.ended is None else ~self.ended

    def select(self, rows, group_size: int = 1) -> "Rollout":
        """The rollout restricted to `rows` (e.g. RFT's correct samples), as groups of `group_size`."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        if rows.numel() % group_size:
            raise ValueError(f"{rows.numel()} rows do not make whole groups of {group_size}")
        idx = rows.to(self.input_ids.device)
        keep = rows.tolist()
        return replace(
            self,
            input_ids=self.input_ids[idx],
            attention_mask=self.attention_mask[idx],
            mask=self.mask[idx],
            logp=self.logp[idx],
            budget=None if self.budget is None else self.budget[idx],
            ended=None if self.ended is None else self.ended[idx],
            entropy=None if self.entropy is None else self.entropy[idx],
            texts=[self.texts[i] for i in keep],
            problems=[self.problems[i] for i in keep],
            group_size=group_size,
        )

    @property
    def response_lengths(self) -> torch.Tensor:
        """(B,) number of response tokens |o_i|, EOS included."""
        return self.mask.sum(-1).long()


def _pad_to(x: torch.Tensor, left: int, right: int, value) -> torch.Tensor:
    """Pad the last dimension of `x` by `left` and `right` columns of `value`."""
    return torch.nn.functional.pad(x, (left, right), value=value)


def cat_rollouts(rollouts: list, pad_token_id: int = 0) -> Rollout:
    """Stack rollouts with different prompt and response widths into one (re-padding both blocks)."""
    if not rollouts:
        raise ValueError("cat_rollouts needs at least one rollout")
    if len({r.group_size for r in rollouts}) != 1:
        raise ValueError("rollouts to concatenate must share group_size")
    P = max(r.prompt_len for r in rollouts)
    R = max(r.input_ids.shape[1] - r.prompt_len for r in rollouts)
    parts = {k: [] for k in ("input_ids", "attention_mask", "mask", "logp")}
    for r in rollouts:
        left, right = P - r.prompt_len, R - (r.input_ids.shape[1] - r.prompt_len)
        parts["input_ids"].append(_pad_to(r.input_ids, left, right, pad_token_id))
        parts["attention_mask"].append(_pad_to(r.attention_mask, left, right, 0))
        parts["mask"].append(_pad_to(r.mask, left, right, 0.0))
        parts["logp"].append(_pad_to(r.logp, left, right, 0.0))
    rows = {}  # what the sampler recorded, kept only when every part has it
    for k in ("budget", "ended"):
        rows[k] = None if any(getattr(r, k) is None for r in rollouts) else torch.cat([getattr(r, k) for r in rollouts])
    rows["entropy"] = None if any(r.entropy is None for r in rollouts) else torch.cat(
        [_pad_to(r.entropy, P - r.prompt_len, R - (r.input_ids.shape[1] - r.prompt_len), 0.0) for r in rollouts])
    return Rollout(
        **{k: torch.cat(v) for k, v in parts.items()},
        texts=[t for r in rollouts for t in r.texts],
        problems=[p for r in rollouts for p in r.problems],
        group_size=rollouts[0].group_size,
        prompt_len=P,
        **rows,
    )


def done_check_every(device) -> int:
    """Tokens between `sample`'s checks that every row has ended: 1 on the CPU, more on a GPU."""
    return 1 if torch.device(device).type == "cpu" else CUDA_DONE_CHECK_EVERY


def _check_fits(model, length: int):
    """Raise if `length` tokens exceed the model's position embeddings."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and length > limit:
        raise ValueError(f"sequences of {length} tokens exceed the model's {limit} positions")


@functools.lru_cache(maxsize=None)
def _bf16_ok(index: int) -> bool:
    """Whether CUDA device `index` runs bf16 matmuls natively (Ampere and newer)."""
    return torch.cuda.get_device_capability(index) >= (8, 0)


def autocast(device):
    """bf16 autocast for the forward passes on a CUDA device with native bf16, else a no-op.

    Matmuls run in bf16 on the tensor cores; the weights, optimizer state and every log-prob stay
    float32, since logits are cast to float before the log-softmax. UNIFIED_RL_BF16=0 turns it off; the CPU never uses it, so CPU runs are exact fp32.
    """
    device = torch.device(device)
    if device.type != "cuda" or os.environ.get("UNIFIED_RL_BF16", "1") == "0":
        return contextlib.nullcontext()
    index = device.index if device.index is not None else torch.cuda.current_device()
    if not _bf16_ok(index):
        return contextlib.nullcontext()
    return torch.autocast("cuda", dtype=torch.bfloat16)


def token_logp(model, input_ids, attention_mask, start=0) -> torch.Tensor:
    """(B, T) float32 (float64 for a float64 model) log pi of each target input_ids[:, t+1], with grad; 0 on padding.

    start > 0: only targets t >= start are computed (0 before them): the model's vocabulary
    projection runs on the last L - start positions only (`logits_to_keep`), which for a chat
    prompt of 40 tokens and a 16-token reply skips most of a 49K-word projection. Rows whose first
    start + 1 tokens agree (a group's prompt) run them once (`_shared_prefix_logits`), except with
    grad in a float64 model: transformers' RMSNorm computes in float32 even there, so summing a
    group's prompt gradient before that cast moves a float64 gradient by float32 round-off (1e-7
    relative), which the model oracle's float64 tolerance would not allow; and on one rank of several
    (`_split_ranks`).
    """
    _check_fits(model, input_ids.shape[1])
    share = (start > 0 and _can_share(model) and not _split_ranks()
             and (not torch.is_grad_enabled() or _dtype(model) != torch.float64))
    first = _prefix_owners(input_ids, attention_mask, start + 1) if share else None
    if first is not None and first.unique().numel() < len(first):
        logits = _shared_prefix_logits(model, input_ids, attention_mask, start + 1, first)  # (B, T - start, V)
    else:
        keep = {"logits_to_keep": input_ids.shape[1] - start} if start > 0 else {}
        with autocast(input_ids.device):
            logits = model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                position_ids=position_ids_of(attention_mask),
                **keep,
            ).logits[:, :-1]  # (B, T - start, V)
    if logits.dtype != torch.float64:  # a float64 model (the model oracle) keeps its precision
        logits = logits.float()  # log-probs in float32 whatever the matmuls ran in
    targets = input_ids[:, start + 1:]  # (B, T - start)
    # gather - logsumexp is log_softmax at the target without materialising all of it twice
    logp = logits.gather(-1, targets[..., None]).squeeze(-1) - logits.logsumexp(-1)  # (B, T - start)
    real = (attention_mask[:, start:-1] * attention_mask[:, start + 1:]).bool()  # (B, T - start)
    logp = torch.where(real, logp, torch.zeros_like(logp))
    return torch.nn.functional.pad(logp, (start, 0)) if start > 0 else logp  # (B, T)


def _dtype(model) -> torch.dtype:
    """The dtype of `model`'s weights."""
    return next(model.parameters()).dtype


def _split_ranks() -> bool:
    """Whether this is one rank of several: each rank must then run the model as often as the others (a
    sharded model gathers its weights at every forward), whatever prompts its own rows share."""
    return torch.distributed.is_available() and torch.distributed.is_initialized() \
        and torch.distributed.get_world_size() > 1


def _can_share(model) -> bool:
    """Whether a forward pass of `model` may fill a KV cache (gradient checkpointing drops it in training)."""
    return not (model.training and any(getattr(m, "gradient_checkpointing", False) is True for m in model.modules()))


def _prefix_owners(input_ids, attention_mask, n) -> torch.Tensor:
    """(B,) for each row, the first row of its run of consecutive rows whose first `n` columns agree."""
    ids, att = input_ids[:, :n], attention_mask[:, :n]  # (B, n)
    new = torch.ones(len(ids), dtype=torch.bool, device=ids.device)  # (B,) a row that starts a run
    new[1:] = ((ids[1:] != ids[:-1]) | (att[1:] != att[:-1])).any(-1)
    index = torch.arange(len(ids), device=ids.device)  # (B,)
    return torch.where(new, index, torch.zeros_like(index)).cummax(0).values  # (B,)


def _shared_prefix_logits(model, input_ids, attention_mask, n, first):
    """(B, L - n, V) logits at positions n-1 ... L-2, the first `n` columns run once per run of equal rows.

    A group's samples share their prompt: its keys and values are computed for one row and indexed
    out to the others (differentiably: the prompt's gradient sums over its group), which leaves the
    reference's and the policy's passes the prompt's work once per group instead of once per sample.
    """
    pos = position_ids_of(attention_mask)  # (B, L)
    owners = first.unique()  # (n_runs,) sorted, the first row of each run
    cache = DynamicCache(config=model.config)
    with autocast(input_ids.device):
        head = model(input_ids=input_ids[owners, :n], attention_mask=attention_mask[owners, :n],
                     position_ids=pos[owners, :n], past_key_values=cache, use_cache=True,
                     logits_to_keep=1).logits  # (n_runs, 1, V)
        run = torch.searchsorted(owners, first)  # (B,) each row's run
        if input_ids.shape[1] - 1 == n:  # one target per row: the prefix's last position predicts it
            return head[run]  # (B, 1, V)
        cache.batch_select_indices(run)  # each row its run's prefix
        # the last column is only a target: the inputs stop one short of it
        tail = model(input_ids=input_ids[:, n:-1], attention_mask=attention_mask[:, :-1],
                     position_ids=pos[:, n:-1], past_key_values=cache, use_cache=True).logits  # (B, L-n-1, V)
    return torch.cat([head[run], tail], 1)  # (B, L - n, V)


def _left_pad(seqs: list, pad_id: int, device):
    """Left-pad token lists into (B, P) ids and attention mask."""
    P = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), P), pad_id, dtype=torch.long)
    att = torch.zeros((len(seqs), P), dtype=torch.long)
    for i, s in enumerate(seqs):
        if len(s):
            ids[i, P - len(s):] = torch.tensor(s, dtype=torch.long)
            att[i, P - len(s):] = 1
    return ids.to(device), att.to(device)


def _repeat(problems: list, group_size: int) -> list:
    """Each problem `group_size` times in a row (group-major)."""
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    if len(problems) == 0:
        raise ValueError("no problems given")
    return [p for p in problems for _ in range(group_size)]


def _pad_id(tokenizer) -> int:
    """The id that fills padding (never read: the attention mask and `mask` say what is real)."""
    pad = tokenizer.pad_token_id
    return pad if pad is not None else tokenizer.eos_token_id


def stop_ids(model, tokenizer) -> list[int]:
    """Token ids that end a response: the tokenizer's EOS and the generation config's EOS ids
    (a chat model's end-of-turn token, e.g. <|im_end|>)."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    gen = getattr(model, "generation_config", None)
    extra = getattr(gen, "eos_token_id", None) if gen is not None else None
    for i in ([extra] if isinstance(extra, int) else list(extra or [])):
        if i not in ids:
            ids.append(i)
    if not ids:
        raise ValueError("the tokenizer has no EOS token, so responses could never end")
    return ids


def _response_mask(prompt_len: int, lengths: torch.Tensor, L: int) -> torch.Tensor:
    """(B, T) float: 1 where target t+1 lies in [prompt_len, prompt_len + length)."""
    pos = torch.arange(1, L, device=lengths.device)[None, :]  # (1, T) target positions
    return ((pos >= prompt_len) & (pos < prompt_len + lengths[:, None])).float()  # (B, T)


def _uniforms(generators, group_size, n_tokens, device):
    """(B, N) float64 uniforms, group g's rows from generators[g]: draws no rank or batch changes."""
    return torch.cat([torch.rand(group_size, n_tokens, generator=g, dtype=torch.float64)
                      for g in generators]).to(device)  # (B, N)


def _inverse_cdf(probs, u):
    """The token whose cumulative probability first exceeds u (B,): a draw from `probs` (B, V)."""
    cdf = probs.double().cumsum(-1)  # (B, V)
    tok = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True).squeeze(-1)  # (B,)
    return tok.clamp(max=probs.shape[-1] - 1)


@torch.no_grad()
def sample(model, tokenizer, problems, group_size=1, max_new_tokens=None, temperature=1.0,
           greedy=False, generators=None) -> Rollout:
    """Sample `group_size` responses per problem, batched, with a KV cache; stops rows at EOS.

    `logp` is the model's own log-prob of each sampled token (the untempered pi, as PPO's ratio
    needs), so it equals `token_logp` of the returned rollout up to float error. generators: one
    torch.Generator per problem, drawing its group's tokens (a distributed run's rank-independent
    streams); None draws from torch's global RNG.
    """
    if not greedy and not temperature > 0:
        raise ValueError(f"temperature must be > 0 when sampling, got {temperature}")
    rows = _repeat(list(problems), group_size)
    if max_new_tokens is None:
        max_new_tokens = response_budget(problems)
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    pad = _pad_id(tokenizer)
    device = next(model.parameters()).device
    stops = torch.tensor(stop_ids(model, tokenizer), device=device)  # (S,)
    check_every = done_check_every(device)
    if generators is not None and len(generators) != len(problems):
        raise ValueError(f"{len(generators)} generators for {len(problems)} problems")
    u = None if generators is None or greedy else _uniforms(generators, group_size, max_new_tokens, device)
    was_training = model.training
    model.eval()
    try:
        unique_ids, unique_att = _left_pad(encode_problems(tokenizer, problems), pad, device)  # (n, P)
        _check_fits(model, unique_ids.shape[1] + max_new_tokens)
        cache = DynamicCache(config=model.config)  # filled in place by every forward pass below
        with autocast(device):
            # each prompt once, not once per sample: its keys and values are then repeated for its
            # group; only the last position's logits are read (the vocabulary projection of the
            # others, a chat prompt of 40 tokens and a 49K-word vocabulary, would be a fifth of the work)
            out = model(input_ids=unique_ids, attention_mask=unique_att, position_ids=position_ids_of(unique_att),
                        past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache.batch_repeat_interleave(group_size)
        last = out.logits[:, -1].repeat_interleave(group_size, 0)  # (B, V)
        prompt_ids = unique_ids.repeat_interleave(group_size, 0)  # (B, P)
        prompt_att = unique_att.repeat_interleave(group_size, 0)  # (B, P)
        B, P = prompt_ids.shape
        # one buffer for the whole mask: column P+i says whether token i is attended to
        att = torch.cat([prompt_att, prompt_att.new_zeros(B, max_new_tokens)], 1)  # (B, P+N)
        pos = position_ids_of(prompt_att)  # (B, P)
        next_pos = pos[:, -1] + 1  # (B,)
        done = torch.zeros(B, dtype=torch.bool, device=device)
        lengths = torch.zeros(B, dtype=torch.long, device=device)
        tokens, logps, entropies = [], [], []
        for i in range(max_new_tokens):
            raw = last  # (B, V), float64 for a float64 model
            logits = raw.float()  # (B, V)
            logprobs = logits.log_softmax(-1)  # (B, V)
            # the untempered pi's entropy, like logp: what TRL's top_entropy_quantile ranks tokens by
            entropies.append(torch.where(done, 0.0, -torch.special.xlogy(logprobs.exp(), logprobs.exp()).sum(-1)))
            if greedy:
                tok = logits.argmax(-1)  # (B,)
            elif u is not None:
                tok = _inverse_cdf((raw.double() / temperature).softmax(-1), u[:, i])  # (B,)
            else:
                tok = torch.multinomial((logits / temperature).softmax(-1), 1).squeeze(-1)  # (B,)
            tok = torch.where(done, torch.full_like(tok, pad), tok)
            tokens.append(tok)
            logps.append(torch.where(done, 0.0, logprobs.gather(-1, tok[:, None]).squeeze(-1)))
            lengths += (~done).long()
            done = done | torch.isin(tok, stops)
            if (i + 1) % check_every == 0 and bool(done.all()):  # a host sync: not every token on a GPU
                break
            if i + 1 == max_new_tokens:
                break
            att[:, P + i] = (~done).long()  # finished rows attend to nothing new
            with autocast(device):
                last = model(input_ids=tok[:, None], attention_mask=att[:, :P + i + 1], position_ids=next_pos[:, None],
                             past_key_values=cache, use_cache=True).logits[:, -1]  # (B, V)
            next_pos = next_pos + 1
    finally:
        model.train(was_training)
    # rows decoded past the point where all had ended (GPU: checked every few tokens) are only
    # padding; cut them so the rollout has the width a per-token check gives
    n_keep = int(lengths.max())
    tokens, logps, entropies = tokens[:n_keep], logps[:n_keep], entropies[:n_keep]
    resp = torch.stack(tokens, 1)  # (B, N)
    N = resp.shape[1]
    input_ids = torch.cat([prompt_ids, resp], 1)  # (B, L)
    in_resp = torch.arange(N, device=device)[None, :] < lengths[:, None]  # (B, N)
    attention_mask = torch.cat([prompt_att, in_resp.long()], 1)  # (B, L)
    mask = _response_mask(P, lengths, P + N)  # (B, T)
    logp = torch.zeros_like(mask)
    logp[:, P - 1:] = torch.stack(logps, 1)  # target P+j is the j-th response token
    entropy = torch.zeros_like(mask)
    entropy[:, P - 1:] = torch.stack(entropies, 1)  # (B, T)
    resp_host, lengths_host = resp.tolist(), lengths.tolist()  # one copy each, not one per row
    texts = tokenizer.batch_decode([r[:n] for r, n in zip(resp_host, lengths_host)],
                                   skip_special_tokens=True)
    budget = torch.full((B,), max_new_tokens, dtype=torch.long, device=device)  # where a row was cut
    return Rollout(input_ids, attention_mask, mask, logp * mask, texts, rows, group_size, P, budget=budget,
                   ended=done.clone(), entropy=entropy * mask)


def rollout_from_texts(tokenizer, problems, texts, group_size=1, device=None) -> Rollout:
    """A rollout of given responses (SFT's dataset, DPO's pairs); each ends with EOS; logp is 0.

    `texts` is group-major: texts[g*group_size + j] answers problems[g].
    """
    rows = _repeat(list(problems), group_size)
    if len(texts) != len(rows):
        raise ValueError(f"{len(texts)} texts for {len(problems)} problems x group_size {group_size}")
    eos, pad = tokenizer.eos_token_id, _pad_id(tokenizer)
    if eos is None:
        raise ValueError("the tokenizer has no EOS token to end responses with")
    prompts = encode_problems(tokenizer, rows)
    clean = [t[: -len(tokenizer.eos_token)] if t.endswith(tokenizer.eos_token) else t for t in texts]
    responses = [ids + [eos] for ids in tokenizer(clean, add_special_tokens=False)["input_ids"]]
    prompt_ids, prompt_att = _left_pad(prompts, pad, "cpu")  # (B, P)
    B, P = prompt_ids.shape
    lengths = torch.tensor([len(r) for r in responses])  # (B,)
    N = int(lengths.max())
    resp = torch.full((B, N), pad, dtype=torch.long)
    for i, r in enumerate(responses):
        resp[i, : len(r)] = torch.tensor(r)
    input_ids = torch.cat([prompt_ids, resp], 1)  # (B, L)
    attention_mask = torch.cat([prompt_att, (torch.arange(N)[None, :] < lengths[:, None]).long()], 1)
    mask = _response_mask(P, lengths, P + N)  # (B, T)
    rollout = Rollout(input_ids, attention_mask, mask, torch.zeros_like(mask), list(clean), rows,
                      group_size, P, ended=torch.ones(B, dtype=torch.bool))  # each ends with EOS
    return rollout.to(device) if device is not None else rollout
