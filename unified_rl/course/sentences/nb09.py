"""Notebook 09's printed sentences in Chinese (i18n.tr): the summary's checks, runs and table headers."""

SENTENCES = {
    "preset {name}: {n_params:,} policy parameters": "预设 {name}：策略共 {n_params:,} 个参数",
    "max abs difference of the parameter gradients": "参数梯度的最大绝对差",
    "For all {n} methods, grad_theta J = grad_theta surrogate_loss(logp, GC, mask) "
    "to within {worst:.1e} on {n_params:,} parameters.":
        "对全部 {n} 种方法，在 {n_params:,} 个参数上，grad_theta J = grad_theta surrogate_loss(logp, GC, mask)，"
        "误差不超过 {worst:.1e}。",
    "{name:<11} done in {seconds:5.1f} s": "{name:<11} 完成，用时 {seconds:5.1f} 秒",
    "held-out greedy accuracy, {steps} steps from the same SFT model": "留出问题上的贪心准确率，从同一个 SFT 模型起训练 {steps} 步",
    # the headers and two values of the comparison table
    "data": "数据",
    "offline": "离线",
    "online": "在线",
    "held-out before": "训练前留出准确率",
    "after": "训练后",
    "change": "变化",
    "KL to pi_ref": "与 pi_ref 的 KL",
    "std of GC": "GC 的标准差",
    "seconds": "秒",
}
