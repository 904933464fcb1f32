"""Texts of the exercises of `unified_rl.course.ex.nb01_sft`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb01.q1.title': (
        'Q1: the GC hidden in a token mean',
        'Q1：藏在 token 平均里的 GC'),
    'nb01.q1.hint1': (
        'Differentiate the token mean with respect to one log-prob of response 1: every token has the same weight, `1 / (n1 + n2)`.',
        '对回答 1 的某个对数概率求 token 平均的导数：每个 token 的权重都相同，`1 / (n1 + n2)`。'),
    'nb01.q1.hint2': (
        'Eq 5 on a batch of `B = 2` gives that token the weight `GC / (2 * n1)`. Set the two equal and solve for `GC` (`sympy.solve`).',
        '在 `B = 2` 的批次上，公式 5 给这个 token 的权重是 `GC / (2 * n1)`。令两者相等并解出 `GC`（`sympy.solve`）。'),
    'nb01.q1.solution': (
        '```python\ntoken_mean_gc = 2 * n1 / (n1 + n2)\n```',
        '```python\ntoken_mean_gc = 2 * n1 / (n1 + n2)\n```'),
    'nb01.q2.title': (
        'Q2: write the SFT objective (eq 6)',
        'Q2：写出监督微调（SFT）的目标函数（公式 6）'),
    'nb01.q2.hint1': (
        "For each response: the sum of its tokens' log-probs (`(logp * mask).sum(-1)`) divided by its length `|o|` (`mask.sum(-1)`).",
        '对每个回答：它的 token 对数概率之和（`(logp * mask).sum(-1)`）除以它的长度 `|o|`（`mask.sum(-1)`）。'),
    'nb01.q2.hint2': (
        'Then average over the responses of the batch. It is an objective: no minus sign. The checker also compares the gradient that reaches `logp`.',
        '然后在批次的回答上取平均。这是目标函数：没有负号。检查器还会比较流到 `logp` 的梯度。'),
    'nb01.q3.title': (
        'Q3: predict the per-token weight ratio, short over long',
        'Q3：预测每个 token 的权重之比（短回答比长回答）'),
    'nb01.q3.hint1': (
        'Under eq 6 every response has the same total weight, spread over its `|o|` tokens.',
        '在公式 6 下，每个回答的总权重相同，平摊到它的 `|o|` 个 token 上。'),
    'nb01.q3.hint2': (
        "`|o|` counts the response's characters plus the closing `<eos>` token.",
        '`|o|` 数的是回答的字符数，再加上结尾的 `<eos>` token。'),
    'nb01.q3.solution': (
        '```python\nshort_over_long = 13 / 8   # |o| = 12 + 1 for the long response, 7 + 1 for the short one\n```',
        '```python\nshort_over_long = 13 / 8   # |o| = 12 + 1 for the long response, 7 + 1 for the short one\n```'),
    'nb01.q2.case.lengths_1_and_3': (
        'lengths 1 and 3',
        '长度 1 和 3'),
    'nb01.q2.case.a_prompt_token_off_the_mask': (
        'a prompt token off the mask',
        '一个在掩码之外的提示 token'),
}
