"""Notebook 05 (PPO)'s printed sentences in Chinese (i18n.tr): {English template: Chinese template}."""

SENTENCES = {
    "preset {name}: {prompts} questions x {group} samples per step, clip_eps = {clip_eps}, gamma = {gamma}, "
    "lam = {lam}, KL beta = {beta}, epochs = {epochs}":
        "预设 {name}：每步 {prompts} 个问题 x 每题 {group} 个样本，clip_eps = {clip_eps}，gamma = {gamma}，"
        "lam = {lam}，KL beta = {beta}，epochs = {epochs}",
    "data source: {source}   reward: {reward}   advantage: {advantage}   critic: {critic}\n":
        "数据来源：{source}   奖励：{reward}   优势：{advantage}   评论家：{critic}\n",
    "coefficient: {parts}; its policy term is PPO's clip (parts/policy_terms/vanilla.py):\n":
        "系数：{parts}；它的策略项是 PPO 的裁剪（parts/policy_terms/vanilla.py）：\n",
    "A = {a:+d}, r = {r}: GC of eq 15 = {gc:+.2f}   (r A = {ra:+.2f})":
        "A = {a:+d}，r = {r}：公式 15 的 GC = {gc:+.2f}   （r A = {ra:+.2f}）",
    "regions proved:": "已证明的区域：",
    "| A | ratio r | sympy (eq 15) | by hand | `coefficients.ppo` | printed eq 18 |\n|---|---|---|---|---|---|\n":
        "| A | 比率 r | sympy（公式 15） | 手算 | `coefficients.ppo` | 论文印出的公式 18 |\n|---|---|---|---|---|---|\n",
    "off-policy with the printed GC = A_t: {diff:.2e}  ({n_out} of {n} tokens are outside the clip range)":
        "异策略时用论文印出的 GC = A_t：{diff:.2e}  （{n} 个 token 中有 {n_out} 个在裁剪范围之外）",
    "{name:<40} max |grad J - grad surrogate| = {diff:.2e}":
        "{name:<40} |grad J - grad 替代损失| 的最大值 = {diff:.2e}",
    "{name:<12} max |grad_theta J - grad_theta surrogate| = {diff:.2e}":
        "{name:<12} |grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.2e}",
    "{prompt} -> {text!r}  score {score:.0f}": "{prompt} -> {text!r}  得分 {score:.0f}",
    "row {i} by hand vs ppo.advantage: {d_row:.1e};  whole batch, step by step vs package: {d_batch:.1e};  "
    "critic targets = A + V: {d_targets:.1e}":
        "第 {i} 行，手算 vs ppo.advantage：{d_row:.1e}；整个批次，逐步计算 vs 软件包：{d_batch:.1e}；"
        "评论家的目标 = A + V：{d_targets:.1e}",
    "held-out greedy accuracy: SFT {acc0:.3f} -> PPO {acc:.3f} after {steps} steps ({seconds:.0f} s)":
        "留出集上的贪心解码准确率：SFT {acc0:.3f} -> PPO {acc:.3f}，训练 {steps} 步（{seconds:.0f} 秒）",
    "clip fraction at every step:": "每一步的裁剪比例：",
    "PPO from the SFT model (epochs = 1)": "从 SFT 模型开始的 PPO（epochs = 1）",
    "the critic and the coefficients": "评论家与梯度系数",
    "epochs = 4: clip fraction per step {clips}; held-out accuracy after {steps} steps {acc:.3f} ({seconds:.0f} s)":
        "epochs = 4：每步的裁剪比例 {clips}；{steps} 步后的留出集准确率 {acc:.3f}（{seconds:.0f} 秒）",
    "fraction of tokens outside [1 - ε, 1 + ε] at the last update":
        "最后一次更新时落在 [1 - ε, 1 + ε] 之外的 token 比例",
    "| one training step | trained parameters | frozen parameters | held before the step (MB) "
    "| allocated on top, at the peak (MB) | peak (MB) |\n|---|---:|---:|---:|---:|---:|\n":
        "| 一个训练步 | 训练的参数 | 冻结的参数 | 训练步之前已占用（MB） "
        "| 峰值时额外分配（MB） | 峰值（MB） |\n|---|---:|---:|---:|---:|---:|\n",
    "PPO / GRPO: {trained:.2f}x the trained parameters, {params:.2f}x all parameters, "
    "{memory:.2f}x the peak tensor memory of a step":
        "PPO / GRPO：训练的参数是 {trained:.2f} 倍，全部参数是 {params:.2f} 倍，"
        "一步的张量内存峰值是 {memory:.2f} 倍",
}
