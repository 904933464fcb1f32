"""Texts of the exercises of `unified_rl.course.ex.nb00_paradigm`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb00.q1.title': (
        'Q1: GRPO vs online RFT',
        'Q1：GRPO 与在线拒绝采样微调（Online RFT）'),
    'nb00.q1.hint': (
        'Look at the rows of `online-rft` and `grpo` in the table: which column differs?',
        '看表中 `online-rft` 和 `grpo` 这两行：哪一列不同？'),
    'nb00.q1.why.data_source': (
        'both sample the current policy (`PolicySamples`)',
        '两者都从当前策略采样（`PolicySamples`）'),
    'nb00.q1.why.reward_function': (
        'both score a sample with the same rule (`RuleReward`)',
        '两者都用同一条规则给样本打分（`RuleReward`）'),
    'nb00.q2.title': (
        'Q2: predict d(surrogate)/d logp[0, 0]',
        'Q2：预测 d(surrogate)/d logp[0, 0]'),
    'nb00.q2.hint1': (
        'The surrogate is `-(1/B) sum_i (1/|o_i|) sum_t GC * logp[i, t]`; differentiate it with respect to one entry.',
        '替代损失（surrogate）是 `-(1/B) sum_i (1/|o_i|) sum_t GC * logp[i, t]`；对其中一个元素求导。'),
    'nb00.q2.hint2': (
        '`B = 2`, `|o_0| = 4` and `GC = 1`: the derivative is `-GC / (B |o_0|)`.',
        '`B = 2`、`|o_0| = 4`、`GC = 1`：导数是 `-GC / (B |o_0|)`。'),
    'nb00.q2.solution': (
        '```python\nd_loss_d_logp = -1 / (2 * 4)   # -GC / (B |o_0|) = -0.125\n```',
        '```python\nd_loss_d_logp = -1 / (2 * 4)   # -GC / (B |o_0|) = -0.125\n```'),
    'nb00.q3.title': (
        'Q3: write the eq-5 surrogate',
        'Q3：写出公式 5 的替代损失'),
    'nb00.q3.hint1': (
        'Per response: sum `coef * logp` over its tokens (times `mask`) and divide by its length `mask.sum(-1)`; then average over the batch and negate (it is a loss to minimise).',
        '对每个回答：把 `coef * logp` 在它的 token 上求和（乘以 `mask`），再除以它的长度 `mask.sum(-1)`；然后在批次上取平均并取负（这是要最小化的损失）。'),
    'nb00.q3.hint2': (
        'Detach the coefficient (`coef.detach()`): GC is a weight, not something to differentiate. The checker backpropagates your loss and looks at the gradient that reaches `coef`.',
        '把系数 detach（`coef.detach()`）：GC 是权重，不是求导的对象。检查器会对你的损失做反向传播，并查看流到 `coef` 的梯度。'),
    'nb00.q1.option.data_source': (
        'where (q, o) come from',
        '(q, o) 从哪里来'),
    'nb00.q1.option.reward_function': (
        'how o is scored',
        'o 如何打分'),
    'nb00.q1.option.gradient_coefficient': (
        "how hard each token's log-prob is pushed",
        '每个 token 的对数概率被推动的力度'),
    'nb00.q3.case.two_responses_of_equal_length': (
        'two responses of equal length',
        '两个等长的回答'),
    'nb00.q3.case.lengths_1_and_3': (
        'lengths 1 and 3',
        '长度 1 和 3'),
    'nb00.q3.case.a_prompt_token_off_the_mask': (
        'a prompt token off the mask',
        '一个在掩码之外的提示 token'),
}
