"""A character-level Hugging Face tokenizer for the lab's task, built in code.

One token per character of the task's alphabet plus <pad>, <bos>, <eos>, <unk>. It is a real
`transformers.PreTrainedTokenizerFast` (a `tokenizers` WordLevel model over single characters), so
it saves and loads with `save_pretrained` / `from_pretrained` like any hub tokenizer, and the rest
of the lab accepts any other causal-LM tokenizer in its place.

transformers 5 does not add BOS by itself, so `encode_prompts` prepends it explicitly.
References: https://huggingface.co/docs/tokenizers/components
"""

import os

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from .task import ALPHABET

SPECIAL_TOKENS = {"pad_token": "<pad>", "bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>"}


def build_tokenizer(alphabet: str = ALPHABET) -> PreTrainedTokenizerFast:
    """The character-level tokenizer over `alphabet`; ids 0-3 are <pad>, <bos>, <eos>, <unk>."""
    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet has repeated characters: {alphabet!r}")
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS.values())}
    vocab.update({c: len(SPECIAL_TOKENS) + i for i, c in enumerate(alphabet)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token=SPECIAL_TOKENS["unk_token"]))
    # every character is its own pre-token, so offsets are exact and text round-trips
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()  # join tokens with no spaces in between
    return PreTrainedTokenizerFast(tokenizer_object=tok, **SPECIAL_TOKENS)


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")


def load_tokenizer(name_or_path) -> PreTrainedTokenizerFast:
    """Load a saved or hub tokenizer; give it a pad token (its EOS) if it has none.

    A folder without tokenizer files is an error: transformers would otherwise fall back to a
    tokenizer of the model's family that shares nothing with the one the model was trained with.
    """
    p = os.fspath(name_or_path)
    if os.path.isdir(p) and not any(os.path.exists(os.path.join(p, f)) for f in TOKENIZER_FILES):
        raise ValueError(f"{p} has no tokenizer files ({', '.join(TOKENIZER_FILES[:2])}); "
                         "save the tokenizer beside the model")
    try:
        tokenizer = AutoTokenizer.from_pretrained(p)
    except Exception as e:  # a corrupted file, an unreachable hub: one line naming where
        lines = str(e).strip().splitlines()
        raise ValueError(f"could not load a tokenizer from {p!r}: {type(e).__name__}: "
                         f"{lines[0][:200] if lines else ''}") from None
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError(f"tokenizer at {name_or_path!r} has neither a pad nor an EOS token")
        tokenizer.pad_token = tokenizer.eos_token  # safe: the lab pads by position, never by id
    return tokenizer


def encode_prompts(tokenizer, prompts: list[str]) -> list[list[int]]:
    """Token ids of each prompt, with BOS prepended when the tokenizer has one."""
    ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    bos = tokenizer.bos_token_id
    return [[bos] + x if bos is not None else list(x) for x in ids]


def chat_ids(tokenizer, messages) -> list[int]:
    """Prompt ids of chat `messages` (role, content) through the tokenizer's own chat template,
    ending with the opening of the assistant's turn (add_generation_prompt=True)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("this problem is a chat, but the tokenizer has no chat template")
    msgs = [{"role": role, "content": content} for role, content in messages]
    out = tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
    ids = out["input_ids"] if hasattr(out, "keys") else out
    return list(ids)


def encode_problems(tokenizer, problems) -> list[list[int]]:
    """Prompt ids of each problem: its chat `messages` through the template when it has them, else
    `encode_prompts` of its `prompt` (the lab's own path, unchanged)."""
    if not any(getattr(p, "messages", None) for p in problems):
        return encode_prompts(tokenizer, [p.prompt for p in problems])
    return [chat_ids(tokenizer, p.messages) if getattr(p, "messages", None)
            else encode_prompts(tokenizer, [p.prompt])[0] for p in problems]
