"""Notebook 11's printed sentences in Chinese (i18n.tr): DPO's successors IPO, SimPO, KTO and ORPO."""

SENTENCES = {
    # 0. setup and the table of methods
    "preset {name}: {pairs} pairs (or {answers} KTO answers) per step":
        "预设 {name}：每步 {pairs} 个偏好对（或 {answers} 个 KTO 答案）",
    "| method | data source | reward | GC | π_ref used | settings | paper |\n|---|---|---|---|---|---|---|\n":
        "| 方法 | 数据来源 | 奖励 | GC | 是否使用 π_ref | 设置 | 论文 |\n|---|---|---|---|---|---|---|\n",
    # the autograd checks
    "{name:6s} max |grad J - grad surrogate| = {diff:.1e}": "{name:6s} |grad J - grad 替代损失| 的最大值 = {diff:.1e}",
    "{name:6s} max |grad_theta J - grad_theta surrogate| = {diff:.1e}":
        "{name:6s} |grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.1e}",
    # 6. training the five
    "{name:6s} {source}: {generated:.0f} samples generated per step, {rows:.0f} trained rows":
        "{name:6s} {source}：每步生成 {generated:.0f} 个样本，训练 {rows:.0f} 行",
    "pairs / KTO: {ratio:.1f}x the samples per step": "偏好对 / KTO：每步样本数的 {ratio:.1f} 倍",
    "this run's KTO batch: p = {p:.2f} right; lambda_D = {lam_d:g} meets the rule for p in "
    "[{lo:.3f}, {hi:.3f}]: lambda_D n_D / (lambda_U n_U) = {balance:.2f}":
        "本次运行的 KTO 批次：p = {p:.2f} 的答案正确；lambda_D = {lam_d:g} 在 p ∈ [{lo:.3f}, {hi:.3f}] 时满足这条规则："
        "lambda_D n_D / (lambda_U n_U) = {balance:.2f}",
    "{label:12s} held-out accuracy {acc0:.3f} -> {acc:.3f} ({seconds:.0f} s)":
        "{label:12s} 留出准确率 {acc0:.3f} -> {acc:.3f}（{seconds:.0f} 秒）",
    "KTO after {steps} steps, on a batch of its source: |z| <= {z_max:.4f} (z0 = {z0:.4f}); "
    "its GC is {gc_min:.5f} to 1 times lambda beta / 4":
        "KTO 训练 {steps} 步后，在其数据来源的一个批次上：|z| <= {z_max:.4f}（z0 = {z0:.4f}）；"
        "它的 GC 是 lambda beta / 4 的 {gc_min:.5f} 到 1 倍",
    # 7. does the chosen log-probability fall?
    "SFT model": "SFT 模型",
    "after DPO at 2e-5": "以 2e-5 做 DPO 之后",
    "after ORPO": "ORPO 之后",
    "{label:18s} cos(grad x+, grad x-) mean {mean:+.2f}, median {median:+.2f}; "
    "a DPO step would lower x+ on {lowered:.0%} of the pairs":
        "{label:18s} cos(grad x+, grad x-) 均值 {mean:+.2f}，中位数 {median:+.2f}；一步 DPO 会在 {lowered:.0%} 的偏好对上降低 x+",
    # 8. over three seeds
    "- {seeds} seeds, {steps} steps per arm": "- {seeds} 个随机种子，每个实验组 {steps} 步",
    "SFT model: {mean:.3f} ± {std:.3f}\n\n": "SFT 模型：{mean:.3f} ± {std:.3f}\n\n",
    "**Section 7, over the seeds:**\n\n": "**第 7 节，跨随机种子：**\n\n",
    "IPO's target 1/(2 tau) = {target:.2f}; margins reached: IPO {ipo:+.3f}, DPO at 2e-5 {dpo:+.3f}":
        "IPO 的目标间隔 1/(2 tau) = {target:.2f}；达到的间隔：IPO {ipo:+.3f}，以 2e-5 做 DPO {dpo:+.3f}",
    "GC on the chosen tokens there, over its value at margin 0: IPO {ipo:.3f}, DPO {dpo:.3f}":
        "在该间隔处被选中 token 上的 GC 与其在间隔为 0 时的值之比：IPO {ipo:.3f}，DPO {dpo:.3f}",
    # 9. what your TRL config means
    "model oracle, each of the {n} DPO options: max |grad_theta J - grad_theta surrogate| = {worst:.1e}":
        "模型预言机（model oracle），{n} 个 DPO 选项逐一检查：|grad_theta J - grad_theta 替代损失| 的最大值 = {worst:.1e}",
    "trained live in section 6: {live}; the registry's others: {left}":
        "第 6 节现场训练的：{live}；注册表中的其他方法：{left}",
    "none": "无",
    "in the shipped comparison of section 8: {arms}; the registry's others: {left}":
        "第 8 节随课程提供的比较中的：{arms}；注册表中的其他方法：{left}",
    "DPO trained here: its default, {loss} on {norm} log-ratios (TRL's sigmoid_norm); the table's other {n} loss "
    "types and the summed log-ratios are checked (the model oracle above, the tests), not trained":
        "这里训练的 DPO：它的默认做法，即在 {norm} 对数比上的 {loss}（TRL 的 sigmoid_norm）；表中其余 {n} 种损失类型"
        "以及求和的对数比只做了检查（上面的模型预言机和测试），没有训练",
}
