"""Notebook 06 (GRPO)'s printed sentences in Chinese (i18n.tr): {English template: Chinese template}.

Labels printed above one another keep their columns: the Chinese is padded to the same display width
(a CJK character is two columns wide in a monospaced font)."""

SENTENCES = {
    "preset {name}: G = {group} answers per question, {prompts} questions per step, beta = {beta}, "
    "clip_eps = {clip_eps}, epochs per batch = {epochs}":
        "预设 {name}：每个问题 G = {group} 个答案，每步 {prompts} 个问题，beta = {beta}，"
        "clip_eps = {clip_eps}，每个批次的 epochs = {epochs}",
    "data source: {source}   reward: {reward}   advantage hook: {advantage}   critic: {critic}\n":
        "数据来源：{source}   奖励：{reward}   优势钩子：{advantage}   评论家：{critic}\n",
    "question {prompt}  reference {solution}": "问题 {prompt}  参考答案 {solution}",
    "  {text:<18} reward {reward:.0f}": "  {text:<18} 奖励 {reward:.0f}",
    "mean {mean:.4f}, sample std {std:.4f}": "均值 {mean:.4f}，样本标准差 {std:.4f}",
    "A-hat by hand:     ": "手算的 A-hat：     ",
    "sum over the group:": "组内求和：         ",
    "package:           ": "软件包的结果：         ",
    "textbook formula, eps = 0:": "教科书公式，eps = 0：",
    "advantages.group_relative, eps = 0:": "由 advantages.group_relative 计算，eps = 0：",
    "in the batch above, {n_silent} of {n_groups} groups are all-equal and get A-hat = 0":
        "在上面的批次中，{n_groups} 个组里有 {n_silent} 个组的奖励全部相等，得到 A-hat = 0",
    "\nwith the std (GRPO's A-hat, G = 8), one question solved with probability p:":
        "\n带上标准差（GRPO 的 A-hat，G = 8），一道以概率 p 答对的问题：",
    "G = {G}: group mean -> {centred:.6f} x the true gradient ((G-1)/G = {expected:.6f}); "
    "leave-one-out -> {loo:.6f} x":
        "G = {G}：组均值 -> 真实梯度的 {centred:.6f} 倍（(G-1)/G = {expected:.6f}）；"
        "留一法（leave-one-out） -> {loo:.6f} 倍",
    "  p = {p:.2f}: expected update = {factor:.3f} x the true gradient":
        "  p = {p:.2f}：期望更新 = 真实梯度的 {factor:.3f} 倍",
    "n = {n:>3}: |mean of n scores| = {mean_norm:7.2f}   mean |one score| = {single_norm:7.2f}   "
    "ratio {ratio:.3f}   (1/sqrt(n) = {expected:.3f})":
        "n = {n:>3}：|n 个得分函数的均值| = {mean_norm:7.2f}   |单个得分函数| 的均值 = {single_norm:7.2f}   "
        "比值 {ratio:.3f}   （1/sqrt(n) = {expected:.3f}）",
    "on-policy : derived {derived}, printed {printed}": "同策略：推导出 {derived}，论文印出 {printed}",
    "off-policy: derived {derived}, printed {printed}": "异策略：推导出 {derived}，论文印出 {printed}",
    "off-policy difference {diff} = (r - 1) * A-hat = {expected}":
        "异策略下的差 {diff} = (r - 1) * A-hat = {expected}",
    "on-policy (eq 19 vs eq 21)": "同策略（公式 19 vs 公式 21）",
    "clipped, pi_old != pi_theta": "带裁剪，pi_old != pi_theta",
    "process advantages": "过程优势",
    "{name:<30} max |grad J - grad surrogate| = {diff:.2e}":
        "{name:<30} |grad J - grad 替代损失| 的最大值 = {diff:.2e}",
    "eq 21 as printed, off-policy: {d_printed:.2e}    r * A-hat + KL term: {d_exact:.2e}":
        "论文印出的公式 21，异策略：{d_printed:.2e}    r * A-hat + KL 项：{d_exact:.2e}",
    "{name:<13} max |grad_theta J - grad_theta surrogate| = {diff:.2e}":
        "{name:<13} |grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.2e}",
    "mean of k3 under pi: {k3:.6f}   KL(pi || pi_ref): {kl:.6f}":
        "k3 在 pi 下的均值：{k3:.6f}   KL(pi || pi_ref)：{kl:.6f}",
    "expected KL coefficient vs -grad KL(pi_ref || pi): {diff:.1e}":
        "KL 系数的期望 vs -grad KL(pi_ref || pi)：{diff:.1e}",
    "expected KL coefficient vs -grad KL(pi || pi_ref): {diff:.1e}":
        "KL 系数的期望 vs -grad KL(pi || pi_ref)：{diff:.1e}",
    "value of eq 19 (the 'GRPO loss' with its sign flipped): {value:+.2e}   gradient norm {norm:.4f}":
        "公式 19 的值（即符号取反的“GRPO 损失”）：{value:+.2e}   梯度范数 {norm:.4f}",
    "value of the eq-5 surrogate:                            {value:+.4f}   gradient norm {norm:.4f}":
        "公式 5 替代损失的值：                    {value:+.4f}   梯度范数 {norm:.4f}",
    "max difference between the two gradients: {diff:.1e}": "两个梯度之差的最大值：{diff:.1e}",
    "held-out greedy accuracy: SFT {acc0:.3f} -> GRPO {acc:.3f} after {steps} steps ({seconds:.0f} s)":
        "留出集上的贪心解码准确率：SFT {acc0:.3f} -> GRPO {acc:.3f}，训练 {steps} 步（{seconds:.0f} 秒）",
    "GRPO from the SFT model": "从 SFT 模型开始的 GRPO",
    "GRPO's coefficients": "GRPO 的梯度系数",
    "eq 19 at a fresh batch of the trained policy: {value:+.6f};  -beta x mean per-answer k3: {kl_term:+.6f}":
        "训练后的策略新采样的一个批次上公式 19 的值：{value:+.6f}；-beta x 每个回答的 k3 的均值：{kl_term:+.6f}",
    "parameter step with GC x 1: norm {norm1:.3e};  with GC x 10: norm {norm10:.3e}":
        "GC x 1 时参数的一步更新：范数 {norm1:.3e}；GC x 10 时：范数 {norm10:.3e}",
    "| model | parameters | floats held by PPO | floats held by GRPO |\n|---|---:|---:|---:|\n":
        "| 模型 | 参数量 | PPO 占用的浮点数 | GRPO 占用的浮点数 |\n|---|---:|---:|---:|\n",
    "GRPO keeps {saving:.0%} fewer floats than PPO (before activations)":
        "GRPO 比 PPO 少占用 {saving:.0%} 的浮点数（不计激活值）",
    "answer {text!r} (reference {solution!r}), token by token:":
        "回答 {text!r}（参考答案 {solution!r}），逐 token：",
    "outcome supervision": "结果监督",
    "process supervision": "过程监督",
    "step r  ": "步骤 r  ",
    "outcome ": "结果    ",
    "process ": "过程    ",
    "GRPO, outcome": "GRPO，结果监督",
    "GRPO, process": "GRPO，过程监督",
    "held-out greedy accuracy": "留出集上的贪心解码准确率",
    "outcome": "结果",
    "process": "过程",
    "{name:<8} held-out {acc:.3f}   batch reward {reward:.3f}   KL {kl:.4f}   {seconds:.0f} s":
        "{name:<8} 留出集 {acc:.3f}   批次奖励 {reward:.3f}   KL {kl:.4f}   {seconds:.0f} 秒",
    "SFT model at temperature {temperature}: {right:.3f} of answers right; "
    "{none:.2f} of questions have no right answer in 16":
        "SFT 模型在温度 {temperature} 下：{right:.3f} 的回答正确；"
        "{none:.2f} 的问题在 16 个回答中没有一个正确",
    "  G  all right  all wrong  no signal  (drawn)   per {budget} samples:  questions with signal  samples in them":
        "  G       全对       全错     无信号   (抽取)   每 {budget} 个样本：            有信号的问题     其中的样本数",
    "no signal (counted)": "无信号（计数）",
    "no signal (drawn)": "无信号（抽取）",
    "all wrong": "全错",
    "all right": "全对",
    "group size G": "组大小 G",
    "fraction of groups": "组的比例",
    "groups with A-hat = 0": "A-hat = 0 的组",
    "questions with signal": "有信号的问题",
    "samples in them / 8": "其中的样本数 / 8",
    "per {budget} samples": "每 {budget} 个样本",
    "simulated, counting groups of 4 among 16 answers:": "模拟：在 16 个回答中按 4 个一组计数：",
}
