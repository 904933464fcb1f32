"""Notebook 02's printed sentences in Chinese (i18n.tr): 02_rft.ipynb."""

SENTENCES = {
    "max |grad J_RFT - (-grad surrogate)| = {diff:.1e}": "max |grad J_RFT - (-grad 替代损失)| = {diff:.1e}",
    "gradient on the rows of wrong samples:": "错误样本所在行上的梯度：",
    "max |grad_theta J_RFT - grad_theta surrogate| = {diff:.1e}": "max |grad_theta J_RFT - grad_theta 替代损失| = {diff:.1e}",
    # five values in one column (a Chinese character is two columns wide)
    "greedy accuracy on these questions:       {greedy:.2f}": "这些问题上的贪心解码准确率：   {greedy:.2f}",
    "share of samples that survive (rule):      {kept:.3f}": "留下来的样本比例（规则）：     {kept:.3f}",
    "share of samples with a nonzero GC:        {kept:.3f}": "GC 非零的样本比例：            {kept:.3f}",
    "questions with no surviving sample:        {share:.2f}": "没有样本留下来的问题比例：     {share:.2f}",
    "questions whose {n} samples all survive:    {share:.2f}": "{n} 个样本全部留下来的问题比例： {share:.2f}",
    "surviving samples out of {n}": "{n} 个样本中留下来的个数",
    "questions": "问题数",
    "RFT's filter on the SFT model's samples": "RFT 对 SFT 模型样本的筛选",
    "explorer: kept {kept} of {n}": "探索器：{n} 个中保留 {kept} 个",
    "held-out greedy accuracy of the SFT model: {acc:.3f}": "SFT 模型在留出集上的贪心解码准确率：{acc:.3f}",
    "{steps} steps in {seconds:.0f} s": "{steps} 步，用时 {seconds:.0f} 秒",
    "RFT from the SFT model": "从 SFT 模型出发的 RFT",
    "SFT model": "SFT 模型",
    "SFT model, 1024 samples": "SFT 模型，1024 个样本",
    "largest change of a parameter of the policy:  {moved:.2e}": "策略参数的最大变化：   {moved:.2e}",
    "largest change of a parameter of the sampler: {moved:.2e}": "采样器参数的最大变化： {moved:.2e}",
    "|grad(all samples) - grad(correct samples only)| / |grad| = {rel:.1e}":
        "|grad(全部样本) - grad(仅正确样本)| / |grad| = {rel:.1e}",
    "mean change of log pi(o|q), correct samples: {change:+.3f}": "正确样本上 log pi(o|q) 的平均变化：{change:+.3f}",
    "mean change of log pi(o|q), wrong samples:   {change:+.3f}": "错误样本上 log pi(o|q) 的平均变化：{change:+.3f}",
}
