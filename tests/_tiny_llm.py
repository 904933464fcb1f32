"""Tiny random-weight chat models of real architectures (Llama, Qwen2), built from a config with a
BPE tokenizer trained here and given a ChatML template: every LLM code path in seconds, offline."""

import os

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
          "+ '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CORPUS = [f"What is {a} + {b}? {a} + {b} = {a + b}. The answer is {a + b}. #### {a + b}"
          for a in range(0, 30, 3) for b in range(0, 30, 7)] + ["Give the final answer after '####'.",
                                                              "You are a helpful assistant. \\boxed{12}"]


def bpe_tokenizer():
    """A byte-level BPE tokenizer trained on a few sentences of sums, with ChatML special tokens."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   chat_template=CHATML)


def tiny_model(kind, tokenizer, seed=0):
    """A random LlamaForCausalLM or Qwen2ForCausalLM for `tokenizer` (dropout 0)."""
    torch.manual_seed(seed)
    common = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                  eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                  bos_token_id=None, tie_word_embeddings=False)
    if kind == "llama":
        return LlamaForCausalLM(LlamaConfig(**common))
    return Qwen2ForCausalLM(Qwen2Config(**common))


def save_tiny(kind, folder, seed=0):
    """A tiny model and its tokenizer saved in `folder` (loads with from_pretrained); returns it."""
    tokenizer = bpe_tokenizer()
    model = tiny_model(kind, tokenizer, seed)
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
