"""Notebook 03's printed sentences in Chinese (i18n.tr): 03_online_rft.ipynb."""

SENTENCES = {
    "accuracy of the tiny SFT model: {acc:.3f} ({n_right} of 27 responses are right)":
        "微型 SFT 模型的准确率：{acc:.3f}（27 个回答中有 {n_right} 个正确）",
    "max |L * E[eq 11] - grad accuracy| = {diff:.1e}": "max |L * E[公式 11] - 准确率的梯度| = {diff:.1e}",
    # the table of three baselines
    "baseline b": "基线 b",
    "expected gradient, max |difference from b = 0|": "期望梯度，max |与 b = 0 时的差|",
    "variance of one sample's gradient": "单个样本梯度的方差",
    " (the accuracy)": "（即准确率）",
    # the tiny policy's plots
    "step": "步数",
    "tiny policy: exact accuracy": "微型策略：精确的准确率",
    "online RFT (samples of π_θ)": "在线 RFT（π_θ 的样本）",
    "RFT (samples of π_sft)": "RFT（π_sft 的样本）",
    "cosine with grad of accuracy": "与准确率梯度的余弦",
    "note:": "注：",
    "tensors:    max |grad J - (-grad surrogate)| = {diff:.1e}": "张量：     max |grad J - (-grad 替代损失)| = {diff:.1e}",
    "real model: max |grad_theta J - grad_theta surrogate| = {diff:.1e}":
        "真实模型： max |grad_theta J - grad_theta 替代损失| = {diff:.1e}",
    "held-out greedy accuracy of the SFT model: {acc:.3f}; the model has {n:,} parameters":
        "SFT 模型在留出集上的贪心解码准确率：{acc:.3f}；模型有 {n:,} 个参数",
    "{name:>10}: {seconds:.0f} s, held-out greedy accuracy {acc:.3f} at step {step}":
        "{name:>10}：{seconds:.0f} 秒，第 {step} 步时留出集上的贪心解码准确率 {acc:.3f}",
    "share of the batch that survives the filter (5-step running mean)": "批次中通过筛选的比例（5 步滑动平均）",
    # the table of sampling accuracy and survival
    "model": "模型",
    "share of its own samples that are right": "自身样本中正确的比例",
    "survival rate of the data it trained on": "其训练数据的留存率",
    "SFT model": "SFT 模型",
    "after {steps} steps of {name}": "{name} 训练 {steps} 步之后",
    "held-out greedy accuracy": "留出集上的贪心解码准确率",
    "solve Q1 first: then this cell compares your expectation with dp/dtheta":
        "先完成 Q1：然后这个单元格会把你得到的期望与 dp/dtheta 对比",
}
