"""Texts of the exercises of `unified_rl.course.ex.example`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'example.q1.title': (
        'Q1: derive the DPO coefficient',
        'Q1：推导 DPO 的系数'),
    'example.q1.hint1': (
        'Differentiate `log(sigmoid(beta * x))` with respect to `x`; use `sympy.diff`.',
        '对 `x` 求 `log(sigmoid(beta * x))` 的导数；用 `sympy.diff`。'),
    'example.q1.hint2': (
        '`d/dz log sigmoid(z) = sigmoid(-z) = 1 - sigmoid(z)`; then apply the chain rule for `z = beta * x`.',
        '`d/dz log sigmoid(z) = sigmoid(-z) = 1 - sigmoid(z)`；然后对 `z = beta * x` 用链式法则。'),
    'example.q1.solution': (
        '```python\ndpo_gc = beta / (1 + sympy.exp(beta * x))   # = beta * sigmoid(-beta * x)\n```',
        '```python\ndpo_gc = beta / (1 + sympy.exp(beta * x))   # = beta * sigmoid(-beta * x)\n```'),
    'example.q2.title': (
        'Q2: group-relative advantages',
        'Q2：组相对（group relative）优势'),
    'example.q2.hint1': (
        'Reshape the rewards to `(n_groups, group_size)` and normalise each row.',
        '把奖励 reshape 成 `(n_groups, group_size)`，并对每一行归一化。'),
    'example.q2.hint2': (
        "Use the sample standard deviation (`torch.std`'s default) and return 0 for a group whose rewards are all equal.",
        '用样本标准差（`torch.std` 的默认值），对奖励全部相等的组返回 0。'),
    'example.q3.title': (
        'Q3: sign of GC on the rejected response',
        'Q3：被拒绝回答上 GC 的符号'),
    'example.q3.hint': (
        "DPO pushes the rejected response's log-probability down.",
        'DPO 把被拒绝回答的对数概率往下推。'),
    'example.q4.title': (
        "Q4: predict GRPO's coefficient for 1 correct answer in 4",
        'Q4：预测 4 个答案中有 1 个正确时 GRPO 的系数'),
    'example.q4.hint': (
        '`mean = 1/4`; the sample std of `(1, 0, 0, 0)` is `sqrt(1/4) = 0.5`.',
        '`mean = 1/4`；`(1, 0, 0, 0)` 的样本标准差是 `sqrt(1/4) = 0.5`。'),
    'example.q5.title': (
        'Q5: RFT vs online RFT',
        'Q5：RFT 与在线 RFT'),
    'example.q5.why.coefficient': (
        'both use GC = I(o) (eq 10 and eq 11 are the same function)',
        '两者都用 GC = I(o)（公式 10 和公式 11 是同一个函数）'),
    'example.q5.why.reward': (
        'both use the same rule that checks the answer',
        '两者都用同一条检查答案的规则'),
    'example.q5.option.data_source': (
        'where (q, o) come from',
        '(q, o) 从哪里来'),
    'example.q5.option.reward': (
        'how o is scored',
        'o 如何打分'),
    'example.q5.option.coefficient': (
        'GC',
        '梯度系数（GC）'),
    'example.q2.case.two_groups_of_two': (
        'two groups of two',
        '两组，每组两个'),
    'example.q2.case.one_group_all_correct_no_signal': (
        'one group, all correct (no signal)',
        '一组，全部正确（没有信号）'),
    'example.q2.case.all_equal_and_eps_0': (
        'all equal and eps=0',
        '全部相等且 eps=0'),
    'example.q2.case.real_valued_rewards': (
        'real-valued rewards',
        '实数值奖励'),
}
