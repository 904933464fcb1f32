"""Plot titles, axis labels and legends (plots, and the widgets' figures)."""

MESSAGES = {}

# plots.py
MESSAGES.update({
    'plot.step': ('step',
        '步数'),
    'plot.none_of': ('none of {keys} in the metrics',
        '指标中没有 {keys} 中的任何一项'),
    'plot.token_t': ('token t',
        'token t'),
    'plot.sample_i': ('sample i',
        '样本 i'),
})

# plots.LABELS: metric key -> label
MESSAGES.update({
    "plot.label.reward": ("mean reward", "平均奖励"),
    "plot.label.accuracy": ("accuracy of the batch's samples", "批次样本的准确率"),
    "plot.label.kl": ("KL(pi || pi_ref)", "KL(pi || pi_ref)"),
    "plot.label.clip_frac": ("clip fraction", "被裁剪的比例"),
    "plot.label.coef_mean": ("mean GC", "GC 的均值"),
    "plot.label.coef_std": ("std of GC", "GC 的标准差"),
    "plot.label.seconds": ("seconds per step", "每步秒数"),
    "plot.label.loss": ("surrogate loss", "替代损失"),
    "plot.label.eval_accuracy": ("held-out greedy accuracy", "留出集上的贪心解码准确率"),
    "plot.label.value_loss": ("value loss", "价值损失"),
    "plot.label.coef_zero_frac": ("share of tokens with GC = 0", "GC = 0 的 token 比例"),
    "plot.label.response_len": ("response length (tokens)", "回答长度（token 数）"),
    "plot.label.no_signal": ("groups with no signal", "没有信号的组"),
})
