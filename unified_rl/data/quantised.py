"""A sampler's weights in ggml's block formats: each matrix rounded to Q8_0 or Q4_1 and back (fake quantisation).

ggml stores a matrix in blocks of 32 consecutive weights of a row (a row of a `torch.nn.Linear` weight, whose
last dimension is the input's), each block with float16 constants:

    Q8_0: d = max|x| / 127,          q = round(x / d) in [-127, 127],   x' = q * fp16(d)
    Q4_1: d = (max - min) / 15,      q = trunc((x - min) / d + 1/2) in [0, 15],   x' = q * fp16(d) + fp16(min)

written here in torch with ggml-quants.c's float32 arithmetic (round half away from zero; 1/d taken once), so
`fake_quantise` equals gguf-py's quantize-then-dequantize bit for bit (tests/test_samplers.py). A sampler whose
weights are these samples as llama.cpp's weights would, with float32 activations (llama.cpp also rounds the
activations of a quantised matmul to 8 bits: this does not). A tensor that is no matrix of whole blocks (norms,
biases, a LoRA adapter of rank 8) keeps float32, as a GGUF file keeps its norms.
`gguf_plan` reads which format each tensor has in the model's own GGUF file (SmolLM2's: Q4_1 matrices, a Q8_0
embedding that is also the LM head, float32 norms).
"""

import torch

BLOCK = 32
FORMATS = ("q8_0", "q4_1")


def _blocks(x):
    return x.detach().float().reshape(-1, BLOCK)  # (n_blocks, 32)


def _fp16(x):
    return x.half().float()


def q8_0(x):
    """x rounded to Q8_0 and back (float32)."""
    b = _blocks(x)
    d = b.abs().amax(-1, keepdim=True) / 127
    y = b * torch.where(d == 0, torch.zeros_like(d), 1 / d)
    q = y.abs().add_(0.5).floor_().copysign_(y)  # ggml's roundf: half away from zero
    return q.mul_(_fp16(d)).reshape(x.shape)


def q4_1(x):
    """x rounded to Q4_1 and back (float32)."""
    b = _blocks(x)
    lo, hi = torch.aminmax(b, dim=-1, keepdim=True)
    d = (hi - lo) / 15
    q = (b - lo).mul_(torch.where(d == 0, torch.zeros_like(d), 1 / d)).add_(0.5).trunc_().clamp_(0, 15)
    return q.mul_(_fp16(d)).add_(_fp16(lo)).reshape(x.shape)


QUANTISE = {"q8_0": q8_0, "q4_1": q4_1}


def fits(p) -> bool:
    """Whether `p` is a matrix of whole ggml blocks."""
    return p.dim() == 2 and p.shape[-1] % BLOCK == 0


def uniform_plan(model, fmt):
    """{parameter name: fmt} for every parameter of `model` that is a matrix of whole blocks."""
    return {n: fmt for n, p in model.named_parameters() if fits(p)}


def _hf_name(name):
    """A parameter's transformers name without peft's wrapping ("base_model.model.", ".base_layer")."""
    name = name.removeprefix("base_model.model.").replace(".base_layer", "")
    return name.removesuffix(".weight")


def gguf_plan(model, path):
    """{parameter name: "q8_0" or "q4_1"} as the GGUF file at `path` stores each tensor; ValueError for a type
    this module does not write (a float tensor keeps float32). A tied LM head reads the embedding's type."""
    import gguf

    reader = gguf.GGUFReader(path)
    types = {t.name.removesuffix(".weight"): t.tensor_type.name.lower() for t in reader.tensors}
    arch = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}.get(getattr(model.config, "model_type", None))
    if arch is None:
        raise ValueError(f"the model's type {getattr(model.config, 'model_type', None)!r} has no GGUF tensor names")
    names = gguf.get_tensor_name_map(arch, getattr(model.config, "num_hidden_layers", 0))
    plan = {}
    for name, p in model.named_parameters():
        if not name.endswith(".weight") or "lora_" in name:
            continue
        hf = _hf_name(name)
        g = names.get_name(hf)
        kind = types.get(g) if g in types else types.get("token_embd") if g == "output" else None
        if kind is None or kind in ("f32", "f16", "bf16"):
            continue
        if kind not in QUANTISE:
            raise ValueError(f"{path}: tensor {g} is {kind.upper()}, a format the sampler does not write "
                             f"({', '.join(f.upper() for f in FORMATS)} only)")
        plan[name] = kind
    return plan


@torch.no_grad()
def load_into(model, weights, plan):
    """Copy `weights` ({name: tensor}) into `model`'s parameters of those names, each rounded as `plan` says."""
    params = dict(model.named_parameters())
    for name, w in weights.items():
        p = params[name]
        p.copy_(QUANTISE[plan[name]](w).to(p.dtype) if name in plan else w)
