"""Notebook 12's printed sentences in Chinese (i18n.tr): SmolLM2, its GRPO run, LoRA and token log-probs."""

SENTENCES = {
    "{model}: {n_params:,} parameters, vocabulary {vocabulary:,}, end of turn {eos!r}":
        "{model}：{n_params:,} 个参数，词表 {vocabulary:,}，轮次结束 token {eos!r}",
    "prompt the model reads:": "模型读到的提示词：",
    "{name:<20} max relative gradient difference {d:.1e}": "{name:<20} 最大相对梯度差 {d:.1e}",
    "before": "训练前",
    "after {steps} GRPO steps": "GRPO {steps} 步之后",
    "right replies in the batch": "批次中正确回答的比例",
    "reply length / budget": "回答长度 / 预算",
    "GRPO step": "GRPO 步数",
    "TRL accepted both configs: {grpo} {dpo}": "TRL 接受了两个配置：{grpo} {dpo}",
    "TRL is not installed here, so the configs are printed, not built: pip install 'unified_rl[bench]'":
        "这里没有安装 TRL，所以只打印这些配置，不构建它们：pip install 'unified_rl[bench]'",
    "peft's layer against my_lora_forward: max difference {diff:.1e}":
        "peft 的层与 my_lora_forward 对比：最大差异 {diff:.1e}",
    "solve Q2 first: then this cell compares your function with peft's layer":
        "先完成 Q2：然后这个单元格会把你的函数与 peft 的层对比",
    "row 0 is left-padded by {pad} tokens; my_token_logp against token_logp: max difference {diff:.1e}":
        "第 0 行左填充了 {pad} 个 token；my_token_logp 与 token_logp 对比：最大差异 {diff:.1e}",
    "solve Q3 first: then this cell compares your function with sampling.token_logp":
        "先完成 Q3：然后这个单元格会把你的函数与 sampling.token_logp 对比",
    "{device} budget: sums of {digits}-digit numbers in equal shares, asked {template!r}; {prompts} questions "
    "x {group_size} replies per step, up to {max_new_tokens} new tokens, lr {lr}, LoRA r = {lora_r}":
        "{device} 预算：{digits} 位数的加法各占一半，问法 {template!r}；每步 {prompts} 个问题 x {group_size} 个回答，"
        "最多 {max_new_tokens} 个新 token，lr {lr}，LoRA r = {lora_r}",
    "{n} new tokens": "{n} 个新 token",
    "greedy replies cut off: {cut16:.0%} at 16 new tokens, {cut:.0%} at {n}":
        "被截断的贪心回答：16 个新 token 时 {cut16:.0%}，{n} 个时 {cut:.0%}",
    "row 0: {pad} padding tokens, {n} reply tokens": "第 0 行：{pad} 个填充 token，{n} 个回答 token",
    "positions count the padding": "位置把填充也算上",
    "no attention mask": "没有注意力掩码",
    "{name}: largest change of a reply log-prob against the reply alone {gap:.1e}":
        "{name}：与单独一行的回答相比，回答对数概率的最大变化 {gap:.1e}",
    "adapters off against the pretrained model: {off:.1e}; adapters on: {on:.1e}":
        "关掉适配器与预训练模型相比：{off:.1e}；打开适配器：{on:.1e}",
    "LoRA r = 8 trains {trainable:,} of {n_params:,} parameters ({share:.2%}); pi_ref adds {extra} parameters":
        "LoRA r = 8 训练 {n_params:,} 个参数中的 {trainable:,} 个（{share:.2%}）；pi_ref 增加 {extra} 个参数",
    "{steps} GRPO steps in {seconds:.0f} s: {per_step:.1f} s per step (median), on this machine, now":
        "{steps} 步 GRPO，用时 {seconds:.0f} 秒：每步 {per_step:.1f} 秒（中位数），在这台机器上、此刻",
    "{seeds} seeds; {n} held-out questions x {samples} samples at T = {temperature}; trained: {arms}, {steps} steps "
    "each; {hours:.1f} h of measuring and training in all, on a CPU shared with other jobs":
        "{seeds} 个随机种子；{n} 个留出问题 x 每题 {samples} 个样本，T = {temperature}；训练了：{arms}，各 {steps} 步；"
        "测量和训练共用时 {hours:.1f} 小时，在与其他任务共用的 CPU 上",
    "per seed, Pass@{K}: {pass_k}; greedy accuracy: {greedy}":
        "每个随机种子的 Pass@{K}：{pass_k}；贪心解码准确率：{greedy}",
    "base model": "基座模型",
    "{arm}: {verdict}": "{arm}：{verdict}",
    "trained - base at Pass@{K}, per seed: {diffs}": "训练后减基座模型，Pass@{K}，每个随机种子：{diffs}",
    "the base model's Pass@{K}: {full} of {n} questions at 1 on every seed, so it can rise on {can} only; the mean "
    "by at most {largest:.3f}":
        "基座模型的 Pass@{K}：{n} 个问题中有 {full} 个在每个随机种子上都已是 1，所以只有 {can} 个问题还能提高；"
        "均值最多还能提高 {largest:.3f}",
    "t over {n} seeds: {one:.2f} for one verdict at 95 %, {each:.2f} for each of {m} read together":
        "{n} 个随机种子的 t 分位数：单独一个 95 % 结论用 {one:.2f}，{m} 个结论一起读时每个用 {each:.2f}",
    "seed 0 alone, grpo - base at Pass@{K}: {d:+.3f}, 95 % over questions [{lo:+.3f}, {hi:+.3f}]":
        "只看随机种子 0，grpo 减基座模型的 Pass@{K}：{d:+.3f}，跨问题的 95 % 区间 [{lo:+.3f}, {hi:+.3f}]",
    "the lab (notebook 07), RL - SFT: {one:+.3f} at K = 1; at K = {K}: Maj@K {maj:+.3f}, Pass@K {pas:+.3f}":
        "实验环境（笔记本 07），RL 减 SFT：K = 1 时 {one:+.3f}；K = {K} 时 Maj@K {maj:+.3f}，Pass@K {pas:+.3f}",
    "the lab's verdict: {sentence}": "实验环境的结论：{sentence}",
    "base, {n} tokens": "基座，{n} 个 token",
    "{steps} steps: lr factor of the first 4 steps, ours {ours}, TRL's {theirs}":
        "{steps} 步：前 4 步的学习率系数，我们的 {ours}，TRL 的 {theirs}",
    "my_response_mask against sampling.sample's mask: {wrong} of {n} positions differ":
        "my_response_mask 与 sampling.sample 的掩码对比：{n} 个位置中有 {wrong} 个不同",
    "solve Q4 first: then this cell compares your mask with the sampler's":
        "先完成 Q4：然后这个单元格会把你的掩码与采样器的掩码对比",
    "my_reference_logp against llm.AdapterDisabled on SmolLM2: max difference {diff:.1e}; against the "
    "pretrained model: {pre:.1e}":
        "在 SmolLM2 上 my_reference_logp 与 llm.AdapterDisabled 对比：最大差异 {diff:.1e}；与预训练模型对比：{pre:.1e}",
    "solve Q5 first: then this cell compares your function with llm.AdapterDisabled":
        "先完成 Q5：然后这个单元格会把你的函数与 llm.AdapterDisabled 对比",
}
