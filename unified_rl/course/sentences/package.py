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
    # experiments/verdicts.py: the course's one verdict rule (figure7, real_model, notebooks 07 and 12)
    "raised": "提高了",
    "lowered": "降低了",
    "no change": "没有变化",
    "no clear change": "没有明确变化",
    "no verdict from {n} seed(s) (needs {needed})": "{n} 个随机种子不足以下结论（需要 {needed} 个）",
    "Maj@{K} and Pass@{K}: {why}": "Maj@{K} 和 Pass@{K}：{why}",
    "Maj@{K} {m}, Pass@{K} {p}: {reading}": "Maj@{K} {m}，Pass@{K} {p}：{reading}",
    "as in the paper's Figure 7 (Pass@{K} unchanged within +/- {margin})":
        "与论文的图 7 一致（Pass@{K} 在 ±{margin} 之内没有变化）",
    "unlike the paper's Figure 7, which saw Maj@K rise and not Pass@K":
        "与论文的图 7 不同（论文中 Maj@K 提高了，Pass@K 没有）",
    "the paper's \"not Pass@K\" is neither shown nor refuted (that needs Pass@{K} within +/- {margin})":
        "论文关于 Pass@K 没有提高的说法既没有得到证实，也没有被否定（证实它需要 Pass@{K} 的区间落在 ±{margin} 之内）",
    "the start ahead in Pass@{K}, as Yue et al. report at large K":
        "起点模型的 Pass@{K} 领先，与 Yue 等人在较大的 K 处报告的一致",
    "the paper's picture is neither shown nor refuted here": "这里既没有证实也没有否定论文的图景",
    "the SFT model's Maj@{K} left {mid_range} on some seed ({values}): pick another sft_steps before reading "
    "this run":
        "SFT 模型的 Maj@{K} 在某个随机种子上超出了 {mid_range}（{values}）：先换一个 sft_steps，再解读这次运行",
    "The verdict rule: the unit is the seed (each re-runs the training); at one primary K, K = {K}, for "
    "Maj@K and Pass@K alike, the m verdicts a result reads get simultaneous Student-t intervals over the "
    "seeds (Bonferroni: each at 1 - {alpha} / m), so that all of them hold together with 95 % "
    "probability. Raised or lowered when the interval lies above or below 0; no change only when it lies "
    "inside +/- {margin} and the start could have moved by more; otherwise no clear change. Every other K "
    "is descriptive: its 95 % interval, no verdict. Fewer than {seeds} seeds: no verdict.":
        "结论规则：计数的单位是随机种子（每个随机种子都重新训练一次）；只在一个主 K（K = {K}）上下结论，Maj@K 与 "
        "Pass@K 相同；一个结果读出的 m 个结论各用一个跨随机种子的联合 Student-t 区间（Bonferroni 校正：每个区间取 "
        "1 - {alpha} / m 的置信水平），使它们以 95 % 的概率同时成立。区间整个在 0 之上就是提高了，整个在 0 之下就是降低了；"
        "只有区间落在 ±{margin} 之内、并且起点本可以变动得比这更多时，才说没有变化；其余情况都是没有明确变化。"
        "其他 K 只作描述：给出 95 % 区间，不下结论。随机种子少于 {seeds} 个：不下结论。",
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
    # experiments/real_model.py: Figure 7 on SmolLM2 (notebook 12)
    "base model": "基座模型",
    "Figure 7 on SmolLM2-135M-Instruct: {seeds} seed(s), {n} held-out sums, {samples} samples, T = {temperature}":
        "SmolLM2-135M-Instruct 上的图 7：{seeds} 个随机种子，{n} 道留出加法题，{samples} 个样本，T = {temperature}",
    # experiments/field_arms.py, teachers.py, stale_samples.py: the 2026 field's figures (notebook 13)
    "held-out greedy accuracy difference (95 % interval over seeds)": "留出集贪心准确率之差（跨随机种子的 95 % 区间）",
    "tokens sampled": "已采样的 token 数",
    "greedy accuracy (eval questions)": "贪心准确率（评估问题）",
    "accuracy per sampled token": "每个采样 token 的准确率",
    "teacher, held-out questions": "教师模型，留出问题",
    "start, held-out questions": "起点（SFT 模型），留出问题",
    "Teachers on the lab: {seeds} seed(s), {steps} steps per arm, a {teacher}-step GRPO teacher":
        "实验环境中的教师模型：{seeds} 个随机种子，每个实验组 {steps} 步，教师是训练了 {teacher} 步的 GRPO 模型",
    "sampler lag (steps)": "采样器的滞后（步）",
    "GRPO, {steps} steps, on stale samples": "在陈旧样本上的 GRPO，{steps} 步",
    "Stale samples on the lab: {seeds} seed(s)": "实验环境中的陈旧样本：{seeds} 个随机种子",
}
