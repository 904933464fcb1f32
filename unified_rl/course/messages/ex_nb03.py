"""Texts of the exercises of `unified_rl.course.ex.nb03_online_rft`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb03.q1.title': (
        'Q1: what eq 11 estimates, for any sampler',
        'Q1：对任意采样器，公式 11 估计的是什么'),
    'nb03.q1.hint1': (
        "Two outcomes under the sampler: right with probability `rho` (`I(o) = 1`), wrong with `1 - rho` (`I(o) = 0`). The log-prob that is differentiated is the policy's: `log p` for the right answer.",
        '在采样器下有两种结果：以概率 `rho` 答对（`I(o) = 1`），以 `1 - rho` 答错（`I(o) = 0`）。被求导的对数概率属于策略：答对时是 `log p`。'),
    'nb03.q1.hint2': (
        '`E[I(o) d log pi_theta(o)/dtheta] = rho * d(log p)/dtheta + (1 - rho) * 0`: write it with `sympy.diff` and `sympy.log`.',
        '`E[I(o) d log pi_theta(o)/dtheta] = rho * d(log p)/dtheta + (1 - rho) * 0`：用 `sympy.diff` 和 `sympy.log` 写出来。'),
    'nb03.q1.solution': (
        '```python\np = 1 / (1 + sympy.exp(-theta))\nexpected_online_grad = rho * sympy.diff(sympy.log(p), theta) + (1 - rho) * 0   # = rho (1 - p)\n```',
        '```python\np = 1 / (1 + sympy.exp(-theta))\nexpected_online_grad = rho * sympy.diff(sympy.log(p), theta) + (1 - rho) * 0   # = rho (1 - p)\n```'),
    'nb03.q2.title': (
        'Q2: write the online RFT objective',
        'Q2：写出在线拒绝采样微调（Online RFT）的目标函数'),
    'nb03.q2.hint1': (
        'Per sample: `I(o)` (`correct[:, None]`) times the mean log-prob of its response tokens; then the mean over all samples.',
        '对每个样本：`I(o)`（`correct[:, None]`）乘以它回答 token 的平均对数概率；然后对所有样本取平均。'),
    'nb03.q2.hint2': (
        'Wrong samples still count in the batch mean (with 0): dividing by the number of survivors changes the scale. The checker also compares the gradient that reaches `logp`.',
        '错误样本仍计入批次平均（贡献为 0）：除以存活样本数会改变尺度。检查器还会比较流到 `logp` 的梯度。'),
    'nb03.q3.title': (
        'Q3: in which run can the share of surviving samples change?',
        'Q3：在哪次运行中，存活样本的比例会变化？'),
    'nb03.q3.hint': (
        'The share of samples that survive is the accuracy of whichever model draws them.',
        '存活样本的比例就是生成这些样本的模型的准确率。'),
    'nb03.q3.why.RFT': (
        "RFT's sampler is the frozen SFT model: its accuracy cannot change",
        'RFT 的采样器是冻结的 SFT 模型：它的准确率不会变'),
    'nb03.q3.why.both': (
        "RFT's sampler is frozen",
        'RFT 的采样器是冻结的'),
    'nb03.q3.why.neither': (
        'online RFT samples the policy, whose accuracy changes as it trains',
        '在线 RFT 从策略采样，而策略的准确率随训练而变化'),
    'nb03.q3.option.RFT': (
        'samples of the frozen SFT model',
        '冻结的 SFT 模型的样本'),
    'nb03.q3.option.online_RFT': (
        'samples of the policy being trained',
        '正在训练的策略的样本'),
    'nb03.q2.case.one_right_one_wrong': (
        'one right, one wrong',
        '一个正确，一个错误'),
    'nb03.q2.case.three_samples_one_right': (
        'three samples, one right',
        '三个样本，一个正确'),
}
