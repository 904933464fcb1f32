"""Notebook 01's printed sentences in Chinese (i18n.tr): 01_sft.ipynb."""

SENTENCES = {
    "preset {preset}: {digits}-digit operands, {n_sft} human-written solutions for SFT, {n_rl} questions for RL, "
    "{n_test} held-out questions":
        "预设 {preset}：{digits} 位数的操作数，{n_sft} 条人工写的解答用于 SFT，{n_rl} 个问题用于 RL，"
        "{n_test} 个留出集问题",
    "\nprompt q:   {prompt!r}\nsteps:      {steps}\nanswer:     {answer!r}\nresponse o: {response!r}":
        "\n提示词 q： {prompt!r}\n步骤：     {steps}\n答案：     {answer!r}\n回答 o：   {response!r}",
    "RL pool: {n_rl} questions; the SFT set is its first {n_sft}, with solutions; "
    "the other {n_other} are questions only. Held out: {n_test}.":
        "RL 问题池：{n_rl} 个问题；SFT 数据集是其中的前 {n_sft} 个，带解答；"
        "其余 {n_other} 个只有问题。留出集：{n_test} 个。",
    "max |grad J_SFT - (-grad surrogate)| = {diff:.1e}": "max |grad J_SFT - (-grad 替代损失)| = {diff:.1e}",
    # the table of response lengths and their weights
    "|o| (tokens)": "|o|（token 数）",
    "responses": "回答数",
    "share of responses": "回答占比",
    "weight of the group, eq 6": "该组的权重，公式 6",
    "weight of the group, token mean": "该组的权重，token 均值",
    "held-out J_SFT before training: {J:.3f}  (geometric mean of the per-token probability of the "
    "reference ≈ {p:.3f})":
        "训练前留出集上的 J_SFT：{J:.3f}（参考解答每个 token 概率的几何平均 ≈ {p:.3f}）",
    "RFT's eq 8 on them: {J:.4f}; minus the surrogate with GC = I(o): {minus_loss:.4f}":
        "在它们上的 RFT 公式 8：{J:.4f}；GC = I(o) 时负的替代损失：{minus_loss:.4f}",
    "{steps} steps in {seconds:.0f} s; held-out greedy accuracy {acc0:.2f} at step {step0} -> "
    "{acc1:.2f} at step {step1}":
        "{steps} 步，用时 {seconds:.0f} 秒；留出集上的贪心解码准确率：第 {step0} 步 {acc0:.2f} -> "
        "第 {step1} 步 {acc1:.2f}",
    "SFT from scratch": "从零开始的 SFT",
    "held-out J_SFT: {before:.3f} before -> {after:.3f} after "
    "(geometric-mean per-token probability of the reference {p_before:.3f} -> {p_after:.3f})":
        "留出集上的 J_SFT：训练前 {before:.3f} -> 训练后 {after:.3f}"
        "（参考解答每个 token 概率的几何平均 {p_before:.3f} -> {p_after:.3f}）",
    "max |grad_theta J_SFT - grad_theta surrogate| over {n} parameters: {diff:.1e}":
        "在 {n} 个参数上，max |grad_theta J_SFT - grad_theta 替代损失| = {diff:.1e}",
}
