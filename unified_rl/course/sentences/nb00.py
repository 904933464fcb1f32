"""Notebook 00's printed sentences in Chinese (i18n.tr): 00_unified_paradigm.ipynb."""

SENTENCES = {
    "{n} methods share one gradient; {k} of them are in the paper's appendix A.1":
        "{n} 种方法共用一个梯度；其中 {k} 种出自论文的附录 A.1",
    "preset: {preset} | device: {device}": "预设：{preset} | 设备：{device}",
    "{name:>10}: data source = {source:<20} reward = {reward:<11} coefficient = {coefficient}":
        "{name:>10}：数据来源 = {source:<20} 奖励函数 = {reward:<11} 梯度系数 = {coefficient}",
    "{name:>13}: GC of response 0 = {gc} ...": "{name:>13}：回答 0 的 GC = {gc} ...",
    "{name:>13}: max |eq 5 literally - grad of surrogate| = {diff:.2e};  "
    "|my_surrogate - paradigm.surrogate_loss| = {same:.1e}":
        "{name:>13}：max |逐项计算的公式 5 - 替代损失的梯度| = {diff:.2e}；  "
        "|my_surrogate - paradigm.surrogate_loss| = {same:.1e}",
    "\nThe package's surrogate:\n": "\n软件包的替代损失：\n",
    # the three values start in the same column (a Chinese character is two columns wide)
    "value of J_GRPO (eq 19):          {J:+.4f}": "J_GRPO（公式 19）的值：           {J:+.4f}",
    "value of minus the surrogate:     {minus_L:+.4f}   <- a different number":
        "负的替代损失的值：                {minus_L:+.4f}   <- 数值不同",
    "max |grad J - (-grad surrogate)|: {diff:.2e}   <- the same gradient":
        "max |grad J - (-grad 替代损失)|： {diff:.2e}   <- 梯度相同",
    "step {step}: {n} answers, {right:.2f} of them right, GC from {lo:+.2f} to {hi:+.2f}":
        "第 {step} 步：{n} 个答案，答对的比例 {right:.2f}，GC 从 {lo:+.2f} 到 {hi:+.2f}",
    "max |gradient of the loop above - gradient of the package's step| = {diff:.1e} "
    "(largest gradient entry {largest:.1e})":
        "max |上面循环的梯度 - 软件包一步的梯度| = {diff:.1e}（梯度的最大分量 {largest:.1e}）",
    # the table of one step of each method
    "method": "方法",
    "share of the batch answered correctly": "批次中答对的比例",
    "mean GC": "GC 的均值",
    "std of GC": "GC 的标准差",
    "GC = 0 on": "GC = 0 的位置",
    "— (no sampling)": "—（不采样）",
    "{pct:.0f}% of tokens": "{pct:.0f}% 的 token",
    "seed {seed}: {right} right answers in the two groups of 4": "随机种子 {seed}：两组（每组 4 个答案）中答对的个数为 {right}",
    "sample {i}: {prompt}{response:<16} reward {reward:.0f}": "样本 {i}：{prompt}{response:<16} 奖励 {reward:.0f}",
    "by hand:      ": "手算：  ",
    "the explorer: ": "探索器：",
}
