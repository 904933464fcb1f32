"""Texts of the exercises of `unified_rl.course.ex.nb02_rft`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb02.q1.title': (
        'Q1: the GC of a mean over the kept samples',
        'Q1：在保留样本上取平均时的 GC'),
    'nb02.q1.hint1': (
        'Write `J = (I_1 * (ell_1 + ell_2) / 2 + I_2 * (ell_3 + ell_4) / 2) / (I_1 + I_2)` and differentiate with respect to `ell_1` (`sympy.diff`).',
        '写出 `J = (I_1 * (ell_1 + ell_2) / 2 + I_2 * (ell_3 + ell_4) / 2) / (I_1 + I_2)`，并对 `ell_1` 求导（`sympy.diff`）。'),
    'nb02.q1.hint2': (
        'Eq 5 on a batch of `B = 2` gives a token of sample 1 the weight `GC / (B * |o_1|)` with `|o_1| = 2`: so `GC = 4 * dJ/d ell_1`.',
        '在 `B = 2` 的批次上，公式 5 给样本 1 的一个 token 的权重是 `GC / (B * |o_1|)`，其中 `|o_1| = 2`：所以 `GC = 4 * dJ/d ell_1`。'),
    'nb02.q1.solution': (
        '```python\nJ = (I_1 * (ell_1 + ell_2) / 2 + I_2 * (ell_3 + ell_4) / 2) / (I_1 + I_2)\nkept_mean_gc = 2 * 2 * sympy.diff(J, ell_1)   # = 2 I_1 / (I_1 + I_2)\n```',
        '```python\nJ = (I_1 * (ell_1 + ell_2) / 2 + I_2 * (ell_3 + ell_4) / 2) / (I_1 + I_2)\nkept_mean_gc = 2 * 2 * sympy.diff(J, ell_1)   # = 2 I_1 / (I_1 + I_2)\n```'),
    'nb02.q2.title': (
        'Q2: write the RFT coefficient (eq 10)',
        'Q2：写出拒绝采样微调（RFT）的系数（公式 10）'),
    'nb02.q2.hint1': (
        'GC is `I(o)` on every response token of a sample: broadcast `correct` `(B,)` over the tokens `(B, T)` with `correct[:, None]`.',
        'GC 在样本的每个回答 token 上都是 `I(o)`：用 `correct[:, None]` 把 `correct` `(B,)` 广播到 token 上 `(B, T)`。'),
    'nb02.q2.hint2': (
        'Multiply by the mask: prompt and padding get 0, never `I(o)`.',
        '乘以 mask：提示词和填充部分得 0，而不是 `I(o)`。'),
    'nb02.q3.title': (
        'Q3: sign of GC on a wrong sample',
        'Q3：错误样本上 GC 的符号'),
    'nb02.q3.hint': (
        'Eq 10: `I(o)` for an incorrect answer.',
        '公式 10：错误答案的 `I(o)`。'),
    'nb02.q4.title': (
        'Q4: predict the survival rate over RFT training',
        'Q4：预测 RFT 训练过程中样本的存活率'),
    'nb02.q4.hint': (
        "Which model draws RFT's samples: the one being trained, or another one?",
        'RFT 的样本由哪个模型生成：正在训练的那个，还是另一个？'),
    'nb02.q4.why.rises': (
        'that would need samples of the improving policy; RFT samples the frozen SFT model',
        '那需要来自不断改进的策略的样本；而 RFT 从冻结的 SFT 模型采样'),
    'nb02.q4.why.falls': (
        'the sampler never changes, so neither does its accuracy',
        '采样器从不改变，所以它的准确率也不变'),
    'nb02.q4.option.rises': (
        'more and more of each batch survives the filter',
        '每个批次中通过过滤器的样本越来越多'),
    'nb02.q4.option.stays_at_the_SFT_model_s_level': (
        'it fluctuates around the same value',
        '它在同一个值附近波动'),
    'nb02.q4.option.falls': (
        'fewer and fewer samples survive',
        '通过的样本越来越少'),
    'nb02.q2.case.one_right_one_wrong': (
        'one right, one wrong',
        '一个正确，一个错误'),
    'nb02.q2.case.prompt_tokens_off_the_mask': (
        'prompt tokens off the mask',
        '掩码之外的提示 token'),
    'nb02.q2.case.all_wrong': (
        'all wrong',
        '全部错误'),
}
