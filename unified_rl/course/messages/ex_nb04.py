"""Texts of the exercises of `unified_rl.course.ex.nb04_dpo`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb04.q1.title': (
        'Q1: the coefficient of a rejected token',
        'Q1：被拒绝回答中一个 token 的系数'),
    'nb04.q1.hint1': (
        'Write `J = sympy.log(1 / (1 + sympy.exp(-(beta*x_plus - beta*(l1 + l2)/2))))`, differentiate with respect to `l1`, and multiply by `|o-| = 2` (eq 5 divides by `|o|`, so `GC = |o| dJ/dl`).',
        '写出 `J = sympy.log(1 / (1 + sympy.exp(-(beta*x_plus - beta*(l1 + l2)/2))))`，对 `l1` 求导，再乘以 `|o-| = 2`（公式 5 除以 `|o|`，所以 `GC = |o| dJ/dl`）。'),
    'nb04.q1.hint2': (
        '`d/dz log sigmoid(z) = sigmoid(-z)`; the inner derivative of `-beta*(l1 + l2)/2` is `-beta/2`.',
        '`d/dz log sigmoid(z) = sigmoid(-z)`；`-beta*(l1 + l2)/2` 的内层导数是 `-beta/2`。'),
    'nb04.q1.solution': (
        '```python\nJ = sympy.log(1 / (1 + sympy.exp(-(beta * x_plus - beta * (l1 + l2) / 2))))\ngc_rejected_token = 2 * sympy.diff(J, l1)\n# = -beta * sigmoid(beta*x_minus - beta*x_plus), x_minus = (l1 + l2)/2: eq 14 with its beta\n```',
        '```python\nJ = sympy.log(1 / (1 + sympy.exp(-(beta * x_plus - beta * (l1 + l2) / 2))))\ngc_rejected_token = 2 * sympy.diff(J, l1)\n# = -beta * sigmoid(beta*x_minus - beta*x_plus), x_minus = (l1 + l2)/2：即带上 beta 的公式 14\n```'),
    'nb04.q2.title': (
        'Q2: implement the exact DPO coefficient',
        'Q2：实现精确的直接偏好优化（DPO）系数'),
    'nb04.q2.hint1': (
        '`x = ((logp - logp_ref) * mask).sum(-1) / mask.sum(-1)` for chosen and rejected; `c = beta * torch.sigmoid(beta * x_rejected - beta * x_chosen)`, one number per pair.',
        '对被选中和被拒绝的回答分别算 `x = ((logp - logp_ref) * mask).sum(-1) / mask.sum(-1)`；`c = beta * torch.sigmoid(beta * x_rejected - beta * x_chosen)`，每对一个数。'),
    'nb04.q2.hint2': (
        "Return `(c[:, None] * mask_chosen, -c[:, None] * mask_rejected)`, detached: the checker feeds log-probs that require grad and backpropagates eq 5's surrogate through your coefficient.",
        '返回 `(c[:, None] * mask_chosen, -c[:, None] * mask_rejected)`，并且要 detach：检查器会输入需要梯度的对数概率，并把公式 5 的替代损失经你的系数反向传播。'),
    'nb04.q3.title': (
        'Q3: predict the coefficient of a pair with margin x+ - x- = 4 at beta = 0.5',
        'Q3：预测 beta = 0.5 时间隔 x+ - x- = 4 的一对回答的系数'),
    'nb04.q3.hint1': (
        '`c = beta * sigmoid(-beta * margin) = 0.5 * sigmoid(-2)`.',
        '`c = beta * sigmoid(-beta * margin) = 0.5 * sigmoid(-2)`。'),
    'nb04.q3.hint2': (
        '`sigmoid(-2) = 1 / (1 + e^2) ≈ 0.119`.',
        '`sigmoid(-2) = 1 / (1 + e^2) ≈ 0.119`。'),
    'nb04.q4.title': (
        'Q4: what does eq 12 constrain?',
        'Q4：公式 12 约束的是什么？'),
    'nb04.q4.hint': (
        'Write J as a function of x+ and x-: does it change if both fall by the same amount?',
        '把 J 写成 x+ 和 x- 的函数：如果两者下降同样多，J 会变吗？'),
    'nb04.q4.why.x_plus': (
        'J = log sigmoid(beta (x+ - x-)) is unchanged when x+ and x- fall together',
        '当 x+ 和 x- 一起下降时，J = log sigmoid(beta (x+ - x-)) 不变'),
    'nb04.q4.why.length': (
        'the normalisation is the same before and after; it cannot make x+ fall',
        '归一化前后相同；它不会让 x+ 下降'),
    'nb04.q4.why.beta': (
        'beta scales the margin; J still depends on x+ and x- only through x+ - x-',
        'beta 缩放间隔；J 仍只通过 x+ - x- 依赖于 x+ 和 x-'),
    'nb04.q4.option.margin': (
        'J depends on a pair only through the margin x+ - x-',
        'J 只通过间隔 x+ - x- 依赖于一对回答'),
    'nb04.q4.option.x_plus': (
        'J rewards a larger x+ on its own',
        'J 单独奖励更大的 x+'),
    'nb04.q4.option.length': (
        '|o+| and |o-| differ, so the normalisation pushes x+ down',
        '|o+| 和 |o-| 不同，所以归一化把 x+ 往下推'),
    'nb04.q4.option.beta': (
        'a small beta lets x+ fall; a large beta would hold it up',
        '小的 beta 让 x+ 下降；大的 beta 会把它撑住'),
    'nb04.q2.case.equal_log_ratios_beta_0_1': (
        'equal log-ratios, beta = 0.1',
        '对数比相等，beta = 0.1'),
    'nb04.q2.case.a_pair_already_ranked_right_margin_8': (
        'a pair already ranked right (margin 8)',
        '一对已经排对了的回答（间隔 8）'),
    'nb04.q2.case.a_mis_ranked_pair_margin_8': (
        'a mis-ranked pair (margin -8)',
        '一对排错了的回答（间隔 -8）'),
    'nb04.q2.case.ragged_lengths_with_padding': (
        'ragged lengths with padding',
        '长度参差不齐，带填充'),
}
