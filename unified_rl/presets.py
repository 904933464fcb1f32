"""Presets: the task, model and budgets for a 2-core CPU (`cpu`) or one GPU (`gpu`).

Every method's hyper-parameters live in one small frozen dataclass (CleanRL style, docstring per
field); a preset holds the world they train in and their defaults for that machine.
"""

from dataclasses import dataclass, field, replace

import torch

from .models import ModelConfig
from .task import TaskConfig
from .words import WordsTask


@dataclass(frozen=True)
class SFTConfig:
    """Supervised fine-tuning on the fixed dataset (eq 6-7)."""

    steps: int = 300
    """optimizer steps"""
    batch_size: int = 64
    """problems per step"""
    lr: float = 3e-3
    """AdamW learning rate (after a linear warm-up)"""


SAMPLER_DTYPES = ("same", "bfloat16", "q8_0", "q4_1", "gguf")
TEACHER_SEES = ("prompt", "answer", "solution")


@dataclass(frozen=True)
class RLConfig:
    """The optimisation shared by every method after SFT; each method reads the fields it needs."""

    steps: int = 60
    """optimizer steps (each on a fresh batch for online methods)"""
    prompts_per_step: int = 16
    """questions per batch"""
    group_size: int = 8
    """samples per question of the online methods (G of GRPO); the frozen sources of RFT, DPO and the
    other pair methods draw `frozen_samples` instead"""
    lr: float = 1e-4
    """AdamW learning rate of the policy (RL moves a trained model: 10x below SFT's)"""
    temperature: float = 1.0
    """sampling temperature while training"""
    beta: float = 0.04
    """KL weight: GRPO's k3 penalty (eq 19), PPO's per-token KL reward; DPO uses dpo_beta"""
    dpo_beta: float = 0.5
    """DPO's beta (eq 12): how far the policy may move from pi_ref in log-ratio units"""
    clip_eps: float = 0.2
    """PPO/GRPO ratio clip epsilon (eq 15, 19)"""
    epochs: int = 1
    """updates per batch; with 1, pi_old = pi_theta and the clip never binds, as the paper's A.1 assumes"""
    gamma: float = 1.0
    """PPO discount"""
    lam: float = 0.95
    """PPO GAE lambda"""
    value_lr: float = 3e-3
    """PPO value model learning rate"""
    frozen_samples: int = 8
    """RFT/DPO: samples per question drawn once from the frozen SFT model"""
    sampler_lag: int = 0
    """the batch is sampled by the policy of this many steps ago (a snapshot of its weights; the first steps by
    the oldest kept): stale samples, as an asynchronous trainer draws them; the batch records that sampler's
    log-probs (View.sampler_logp) while pi_old stays the learner's (data/samplers.py)"""
    sampler_dtype: str = field(default="same", metadata={"choices": SAMPLER_DTYPES})
    """the sampler's weights: same (the learner's), bfloat16 (a bf16 copy), q8_0 or q4_1 (each matrix rounded
    to ggml's block format and back), gguf (each tensor to the type the model's GGUF file stores it in)"""
    teacher: str = "ref"
    """the distillation methods' teacher, never trained: ref (pi_ref; with LoRA the adapter off), policy
    (pi_theta as the batch's updates begin) or a checkpoint folder (a run's checkpoint), loaded read-only"""
    teacher_sees: str = field(default="prompt", metadata={"choices": TEACHER_SEES})
    """what the teacher reads before the response: the prompt; answer or solution: the question's reference
    answer or solution too (SDFT's and OPSD's privileged context; after the question in a chat prompt)"""
    gkd_lambda: float = 1.0
    """GKD's lambda: the chance a batch is the policy's samples rather than the SFT set's solutions"""
    ref_sync_steps: int = 0
    """TR-DPO's tau (TRL's ref_model_sync_steps): every this many updates pi_ref <- alpha pi_theta +
    (1 - alpha) pi_ref; 0 keeps pi_ref frozen"""
    ref_sync_alpha: float = 0.6
    """TR-DPO's alpha (TRL's ref_model_mixup_alpha): the policy's share of a synced pi_ref; 1 copies it"""


@dataclass(frozen=True)
class LLMConfig:
    """A pretrained chat model instead of the lab's GPT-2 (llm.py): which, and how to fit it in memory."""

    model: str = "smollm2"
    """alias (smollm2: the offline SmolLM2-135M-Instruct), local folder or hub name"""
    dtype: str = "float32"
    """weights: float32, bfloat16 (where supported), float16 (a GPU's; refused on the CPU), float64, or
    auto (bf16 on a GPU that has it, else fp16 on a GPU, fp32 on the CPU); LoRA adapters stay float32, and
    full fine-tuning keeps float32 master weights whatever is asked (llm.weights_dtype)"""
    lora_r: int = 0
    """LoRA rank (0: full fine-tuning; pi_ref is then a frozen copy, else the adapter disabled)"""
    lora_alpha: int = 16
    """LoRA scale numerator (the update is alpha / r * B A)"""
    full_lr: float = 5e-6
    """the RL and SFT learning rate when lora_r turns full fine-tuning on in a LoRA preset"""
    lora_lr: float = 2e-4
    """the RL and SFT learning rate when lora_r turns LoRA on in a full fine-tuning preset: the adapters
    start at zero and move the model far less per step (SmolLM2, 2 GRPO steps: at 5e-6 no greedy reply of
    16 changed, at 2e-4 ten did, against twelve for full fine-tuning at 5e-6; bench/llm_lr.json)"""
    micro_batch: int = 0
    """rows per forward-backward, gradients accumulated over the batch (0: the whole batch at once)"""
    grad_checkpointing: bool = False
    """recompute activations in the backward pass: less memory, about a third more time"""
    fsdp: bool = False
    """under torchrun, shard the policy (and a full fine-tuning pi_ref) over the ranks with FSDP2, one
    decoder layer at a time (fsdp.py): for a model whose weights, gradients and AdamW state do not fit
    one device; off, every rank holds the whole model (distributed.py)"""


@dataclass(frozen=True)
class Preset:
    """Everything that sizes a run on one kind of machine."""

    name: str
    task: TaskConfig
    model: ModelConfig
    n_sft: int
    """size of the limited SFT dataset (questions with reference solutions)"""
    n_rl: int
    """questions RL trains on; the SFT set is the first n_sft of them (n_rl <= n_sft makes RL use
    only SFT questions, as DeepSeekMath does)"""
    n_test: int
    """held-out questions for greedy accuracy"""
    sft: SFTConfig
    rl: RLConfig
    eval_every: int = 10
    """RL steps between held-out evaluations"""
    eval_problems: int = 256
    """held-out questions used for the accuracy logged during training"""
    k_problems: int = 64
    """held-out questions for pass@k / maj@k"""
    k_samples: int = 16
    """samples per question for pass@k / maj@k"""
    seed: int = 0
    """seed of the train / test split (the run's own seed is separate)"""
    llm: LLMConfig | None = None
    """a pretrained chat model to train instead of `model` (None: the lab's own GPT-2)"""

    def with_(self, **changes) -> "Preset":
        """A copy with some fields changed (nested: sft=..., rl=... accept dicts)."""
        for key in ("sft", "rl", "task", "model", "llm"):
            if isinstance(changes.get(key), dict):
                changes[key] = replace(getattr(self, key), **changes[key])
        return replace(self, **changes)


PRESETS = {
    "cpu": Preset(
        name="cpu",
        task=TaskConfig(digits=2),
        model=ModelConfig(n_layer=2, n_embd=64, n_head=4, n_positions=32),
        n_sft=300, n_rl=2000, n_test=500,
        sft=SFTConfig(steps=200, batch_size=64, lr=3e-3),
        rl=RLConfig(),
    ),
    # One GPU: a harder task (4-digit sums, 20-token solutions) and a 31x larger model (3.2 M
    # parameters against 0.10 M), 512 samples per step. On CUDA the forward passes run under bf16
    # autocast and the sampler syncs with the host every 8 tokens (sampling.py).
    "gpu": Preset(
        name="gpu",
        task=TaskConfig(digits=4),
        model=ModelConfig(n_layer=4, n_embd=256, n_head=8, n_positions=64),
        n_sft=2000, n_rl=20000, n_test=1000,
        sft=SFTConfig(steps=600, batch_size=256, lr=1e-3),
        rl=RLConfig(steps=100, prompts_per_step=64, group_size=8, lr=3e-4, value_lr=1e-3),
        eval_problems=1000, k_problems=200, k_samples=64,
    ),
    "tiny": Preset(  # seconds: for smoke tests of every code path, learns nothing
        name="tiny",
        task=TaskConfig(digits=2),
        model=ModelConfig(n_layer=1, n_embd=32, n_head=2, n_positions=32),
        n_sft=32, n_rl=64, n_test=16,
        sft=SFTConfig(steps=3, batch_size=8, lr=3e-3),
        rl=RLConfig(steps=2, prompts_per_step=4, group_size=4, frozen_samples=4),
        eval_every=2, eval_problems=16, k_problems=4, k_samples=4,
    ),
    # A pretrained chat LLM on a 2-core CPU: SmolLM2-135M-Instruct, single-digit sums in words (it
    # starts at 0.38 greedy with 16 new tokens), a lean budget: 4 questions x 4 samples of 16 tokens.
    "llm-cpu": Preset(
        name="llm-cpu",
        task=WordsTask(digits=1, max_new_tokens=16),
        model=ModelConfig(),  # unused: llm names the model
        n_sft=64, n_rl=64, n_test=36,
        sft=SFTConfig(steps=20, batch_size=8, lr=5e-6),
        rl=RLConfig(steps=20, prompts_per_step=4, group_size=4, lr=5e-6, beta=0.0, frozen_samples=4,
                    value_lr=1e-4),
        eval_every=10, eval_problems=32, k_problems=8, k_samples=8,
        llm=LLMConfig(model="smollm2", micro_batch=8),
    ),
    # One GPU: LoRA on bf16 weights where the GPU has bf16 (fp16 on a T4), larger batches; LoRA's
    # learning rate (LLMConfig.lora_lr, measured on the CPU to move SmolLM2 in two steps).
    "llm-gpu": Preset(
        name="llm-gpu",
        task=WordsTask(digits=2, max_new_tokens=32),
        model=ModelConfig(),
        n_sft=512, n_rl=4096, n_test=256,
        sft=SFTConfig(steps=100, batch_size=32, lr=2e-4),
        rl=RLConfig(steps=100, prompts_per_step=16, group_size=8, lr=2e-4, beta=0.04, frozen_samples=8,
                    value_lr=1e-4),
        eval_every=20, eval_problems=256, k_problems=64, k_samples=16,
        llm=LLMConfig(model="smollm2", dtype="auto", lora_r=16, lora_alpha=32, micro_batch=32),
    ),
}


def get_preset(name="auto") -> Preset:
    """A preset by name; "auto" is `gpu` when CUDA is present, else `cpu`."""
    if isinstance(name, Preset):
        return name
    if name == "auto":
        name = "gpu" if torch.cuda.is_available() else "cpu"
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)} or 'auto'")
    return PRESETS[name]
