"""Notebook 12's printed sentences in Chinese (i18n.tr): SmolLM2, its GRPO run, LoRA and token log-probs."""

SENTENCES = {
    "{device} budget: {digits}-digit sums in words, {prompts} questions x {group_size} replies per step, "
    "up to {max_new_tokens} new tokens, lr {lr}, LoRA r = {lora_r}":
        "{device} 预算：用文字表述的 {digits} 位数加法，每步 {prompts} 个问题 x {group_size} 个回答，"
        "最多 {max_new_tokens} 个新 token，lr {lr}，LoRA r = {lora_r}",
    "{model}: {n_params:,} parameters, vocabulary {vocabulary:,}, end of turn {eos!r}":
        "{model}：{n_params:,} 个参数，词表 {vocabulary:,}，轮次结束 token {eos!r}",
    "prompt the model reads:": "模型读到的提示词：",
    "SmolLM2, before training": "SmolLM2，训练前",
    "{name:<20} max relative gradient difference {d:.1e}": "{name:<20} 最大相对梯度差 {d:.1e}",
    "{steps} GRPO steps in {seconds:.0f} s": "{steps} 步 GRPO，用时 {seconds:.0f} 秒",
    "before": "训练前",
    "after {steps} GRPO steps": "GRPO {steps} 步之后",
    "right replies in the batch": "批次中正确回答的比例",
    "reply length / budget": "回答长度 / 预算",
    "GRPO step": "GRPO 步数",
    "The full 3-seed run of this experiment is not shipped with this version of the course: only the live run "
    "above was measured here. Run it with: python -m unified_rl reproduce real-model --seeds 3 --out results":
        "本版课程没有附带这个实验 3 个随机种子的完整运行：这里只测量了上面的现场运行。"
        "运行它：python -m unified_rl reproduce real-model --seeds 3 --out results",
    "TRL accepted both configs: {grpo} {dpo}": "TRL 接受了两个配置：{grpo} {dpo}",
    "TRL is not installed here, so the configs are printed, not built: pip install 'unified_rl[bench]'":
        "这里没有安装 TRL，所以只打印这些配置，不构建它们：pip install 'unified_rl[bench]'",
    "peft's layer against my_lora_forward: max difference {diff:.1e}":
        "peft 的层与 my_lora_forward 对比：最大差异 {diff:.1e}",
    "solve Q2 first: then this cell compares your function with peft's layer":
        "先完成 Q2：然后这个单元格会把你的函数与 peft 的层对比",
    "LoRA r = 8 trains {trainable:,} of {n_params:,} parameters ({share:.2%})":
        "LoRA r = 8 训练 {n_params:,} 个参数中的 {trainable:,} 个（{share:.2%}）",
    "row 0 is left-padded by {pad} tokens; my_token_logp against token_logp: max difference {diff:.1e}":
        "第 0 行左填充了 {pad} 个 token；my_token_logp 与 token_logp 对比：最大差异 {diff:.1e}",
    "solve Q3 first: then this cell compares your function with sampling.token_logp":
        "先完成 Q3：然后这个单元格会把你的函数与 sampling.token_logp 对比",
}
