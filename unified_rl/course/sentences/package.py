"""The package's prose outside the derivations in Chinese: {English template: Chinese template}.

The §5.2 experiments (`unified_rl.experiments`) return their figures' labels and titles, figure7's
verdict and `loaded_from` as `unified_rl.text.Text`; the course's tables read method summaries and
docstring first lines through this table too. Identifiers, symbols (Maj@K, Pass@K, RL, SFT) and
numbers stay as in English; the {fields} and their format specs are the English ones (tests/test_package_text.py).
"""

SENTENCES = {
    # experiments/plots.py: Pass@K and Maj@K against K
    "K: samples per question": "K：每个问题的采样数",
    "accuracy": "准确率",
    # experiments/figure7.py: the figures
    "Figure 7 on the lab: {seeds} seed(s), {k_problems} held-out questions, T = {temperature}":
        "实验环境中的图 7：{seeds} 个随机种子，{k_problems} 道留出问题，T = {temperature}",
    "fraction right, SFT": "答对的比例，SFT",
    "fraction right, RL": "答对的比例，RL",
    "per question (seed {seed})": "逐题（种子 {seed}）",
    # experiments/figure7.py: the verdict
    "raised": "提高了",
    "lowered": "降低了",
    "no clear change": "没有明确变化",
    "no verdict from {n} seed(s) (needs {needed})": "{n} 个种子不足以下结论（需要 {needed} 个）",
    "no verdict from {n} seed(s), a verdict needs {needed}; RL - SFT at K = {K}: Maj {maj:+.3f}, Pass {pas:+.3f}":
        "{n} 个种子不足以下结论，结论需要 {needed} 个；K = {K} 时 RL - SFT：Maj {maj:+.3f}，Pass {pas:+.3f}",
    "the SFT model's Maj@{K} left {mid_range} on some seed ({values}): pick another sft_steps before reading "
    "this run":
        "SFT 模型的 Maj@{K} 在某个种子上超出了 {mid_range}（{values}）：先换一个 sft_steps，再解读这次运行",
    "as in the paper's Figure 7: RL raised Maj@{K} and not Pass@{K}":
        "与论文的图 7 一致：RL 提高了 Maj@{K}，而没有提高 Pass@{K}",
    "unlike the paper's Figure 7: RL raised Maj@{K} and Pass@{K} too (by less: {maj:+.3f} against {pas:+.3f})":
        "与论文的图 7 不同：RL 提高了 Maj@{K}，也提高了 Pass@{K}（幅度更小：{maj:+.3f} 对 {pas:+.3f}）",
    "RL: Maj@{K} {m}, Pass@{K} {p}; the paper's claim is neither shown nor refuted here":
        "RL：Maj@{K} {m}，Pass@{K} {p}；这里既没有证实也没有否定论文的结论",
    "Maj@{K} {m}, Pass@{K} {p}: {reading}": "Maj@{K} {m}，Pass@{K} {p}：{reading}",
    # experiments/common.py
    "the full run shipped with the course ({path})": "随课程一起提供的完整运行（{path}）",
    # experiments/data_source.py (notebook 08)
    "{label}, {test} held-out": "{label}，{test}留出集",
    "in-distribution": "同分布",
    "harder": "更难",
    "greedy accuracy": "贪心解码准确率",
    "steps right (greedy)": "做对的步骤（贪心解码）",
    "{test} held-out": "{test}留出集",
    "Data source: GRPO on different question pools ({seeds} seed(s))": "数据来源：在不同问题池上做 GRPO（{seeds} 个种子）",
    # experiments/noisy_reward.py (notebook 08)
    "SFT (start)": "SFT（起点）",
    "fraction of rewards flipped": "被翻转的奖励比例",
    "held-out greedy accuracy": "留出集上的贪心解码准确率",
    "change vs. p = {p}": "相对 p = {p} 的变化",
    "what the noise costs": "噪声的代价",
    "Noisy rewards ({seeds} seed(s), {steps} steps per run)": "带噪声的奖励（{seeds} 个种子，每次运行 {steps} 步）",
    # experiments/reward_function.py (notebook 08)
    "responses sampled (incl. the reward model's data)": "采样的回答数（含奖励模型的数据）",
    "wall-clock seconds (incl. reward-model training)": "墙钟秒数（含奖励模型的训练）",
    "accuracy per sample": "每个样本换来的准确率",
    "accuracy per second": "每秒换来的准确率",
    "GRPO step": "GRPO 步数",
    "batch mean": "批次均值",
    "reward seen (dashed) vs. truth (solid)": "看到的奖励（虚线）与真实值（实线）",
    "Reward functions for GRPO ({seeds} seed(s))": "GRPO 的奖励函数（{seeds} 个种子）",
    # experiments/policy_family.py, preference_family.py, real_model.py: the figures of notebooks 10, 11, 12
    "held-out accuracy minus GRPO's (same seed)": "留出集准确率减去 GRPO 的（同一随机种子）",
    "accuracy after RL, paired by seed": "RL 之后的准确率，按随机种子配对",
    "step": "步数",
    "response length (tokens),\nmean of the last {window} steps": "回答长度（token），\n最近 {window} 步的均值",
    "response length over training": "训练过程中的回答长度",
    "The policy family at an equal budget ({seeds} seed(s), {steps} steps x {epochs} updates)":
        "同等预算下的策略梯度家族（{seeds} 个随机种子，{steps} 步 x {epochs} 次更新）",
    "held-out greedy accuracy": "留出集上的贪心解码准确率",
    "accuracy during training": "训练过程中的准确率",
    "log-ratio to the SFT model": "相对 SFT 模型的对数比",
    "fixed pairs: x⁺ solid, x⁻ dashed": "固定偏好对：x⁺ 实线，x⁻ 虚线",
    "after {steps} steps": "{steps} 步之后",
    "The preference family at an equal budget ({seeds} seed(s))": "同等预算下的偏好家族（{seeds} 个随机种子）",
    # experiments/real_model.py and paired.py: Figure 7 on SmolLM2 (notebook 12)
    "base model": "基座模型",
    "Figure 7 on SmolLM2-135M-Instruct: {seeds} seed(s), {n} held-out sums, {samples} samples, T = {temperature}":
        "SmolLM2-135M-Instruct 上的图 7：{seeds} 个随机种子，{n} 道留出加法题，{samples} 个样本，T = {temperature}",
    "overtaking": "反超",
    "catching up": "追上",
    "no picture: too few seeds for a verdict": "无法判断属于哪种图景：随机种子太少，不足以下结论",
    "both the paper's picture (Maj@K raised, Pass@K not at the largest K) and Yue et al.'s (RL ahead at K = 1, "
    "the base model {how} at the largest K)":
        "既是论文的图景（在最大的 K 处 Maj@K 提高了，Pass@K 没有），也是 Yue 等人的图景（K = 1 时 RL 领先，"
        "在最大的 K 处基座模型{how}）",
    "the paper's picture: Maj@K raised, Pass@K not, at the largest K":
        "论文的图景：在最大的 K 处 Maj@K 提高了，Pass@K 没有",
    "Yue et al.'s picture: RL ahead at K = 1, the base model {how} at the largest K":
        "Yue 等人的图景：K = 1 时 RL 领先，在最大的 K 处基座模型{how}",
    "neither picture: Pass@1 {p1}, Pass@K {p_top} and Maj@K {m_top} at the largest K":
        "两种图景都不是：Pass@1 {p1}；在最大的 K 处 Pass@K {p_top}，Maj@K {m_top}",
}
