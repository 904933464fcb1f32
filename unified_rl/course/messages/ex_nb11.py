"""Texts of the exercises of `unified_rl.course.ex.nb11_preference`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb11.q1.title': (
        "Q1: IPO's coefficient of a rejected token",
        'Q1：IPO 中被拒绝回答的一个 token 的系数'),
    'nb11.q1.hint1': (
        'Write `J = -(x_plus - (l1 + l2)/2 - 1/(2*tau))**2` with sympy, differentiate with respect to `l1`, and multiply by |o-| = 2 (eq 5 divides by |o|, so GC = |o| dJ/dl).',
        '用 sympy 写出 `J = -(x_plus - (l1 + l2)/2 - 1/(2*tau))**2`，对 `l1` 求导，再乘以 |o-| = 2（公式 5 除以 |o|，所以 GC = |o| dJ/dl）。'),
    'nb11.q1.hint2': (
        'The outer derivative is `-2 (h - 1/(2 tau))`, the inner one `-1/2`: the GC is linear in the margin h.',
        '外层导数是 `-2 (h - 1/(2 tau))`，内层是 `-1/2`：GC 关于间隔 h 是线性的。'),
    'nb11.q1.solution': (
        "```python\nJ_pair = -(x_plus - (l1 + l2) / 2 - 1 / (2 * tau)) ** 2\ngc_rejected_token = 2 * sympy.diff(J_pair, l1)\n# = 2 h - 1/tau with h = x_plus - (l1 + l2)/2: minus the chosen tokens' 1/tau - 2 h\n```",
        "```python\nJ_pair = -(x_plus - (l1 + l2) / 2 - 1 / (2 * tau)) ** 2\ngc_rejected_token = 2 * sympy.diff(J_pair, l1)\n# = 2 h - 1/tau with h = x_plus - (l1 + l2)/2: minus the chosen tokens' 1/tau - 2 h\n```"),
    'nb11.q2.title': (
        "Q2: implement SimPO's coefficient",
        'Q2：实现 SimPO 的系数'),
    'nb11.q2.hint1': (
        '`l = (logp * mask).sum(-1) / mask.sum(-1)` for chosen and rejected: the mean log-prob of eq 4, no reference model.',
        '对被选中和被拒绝的回答分别算 `l = (logp * mask).sum(-1) / mask.sum(-1)`：公式 4 的平均对数概率，没有参考模型。'),
    'nb11.q2.hint2': (
        '`c = beta * torch.sigmoid(gamma - beta * (l_chosen - l_rejected))`, one number per pair; return `(c on every chosen token, -c on every rejected token)`, detached.',
        '`c = beta * torch.sigmoid(gamma - beta * (l_chosen - l_rejected))`，每对一个数；返回 `(c on every chosen token, -c on every rejected token)`，并 detach。'),
    'nb11.q3.title': (
        "Q3: implement KTO's coefficient",
        'Q3：实现 KTO 的系数'),
    'nb11.q3.hint1': (
        '`x = ((logp - logp_ref) * mask).sum(-1) / mask.sum(-1)` and `z = beta * (x - z0)`, one number per response.',
        '`x = ((logp - logp_ref) * mask).sum(-1) / mask.sum(-1)`，`z = beta * (x - z0)`，每个回答一个数。'),
    'nb11.q3.hint2': (
        'The GC is the slope of `lam * sigmoid(+-z)` in x: `beta * sigmoid(z) * sigmoid(-z)`, times `lam_d` for a desirable response and `-lam_u` for an undesirable one; detached, on every response token.',
        'GC 是 `lam * sigmoid(+-z)` 关于 x 的斜率：`beta * sigmoid(z) * sigmoid(-z)`，对期望的回答乘以 `lam_d`，对不期望的回答乘以 `-lam_u`；detach，放在每个回答 token 上。'),
    'nb11.q4.title': (
        "Q4: predict IPO's coefficient on the chosen tokens at tau = 0.5 when the margin is 1.5",
        'Q4：预测 tau = 0.5、间隔为 1.5 时 IPO 在被选中 token 上的系数'),
    'nb11.q4.hint1': (
        'The target margin is `1/(2 tau) = 1`; the GC is `1/tau - 2 * margin`.',
        '目标间隔是 `1/(2 tau) = 1`；GC 是 `1/tau - 2 * margin`。'),
    'nb11.q4.hint2': (
        'Past the target the GC is negative: the chosen answer is pushed down.',
        '超过目标之后 GC 为负：被选中的答案被向下推。'),
    'nb11.q5.title': (
        "Q5: why does ORPO's chosen log-prob rise more than DPO's?",
        'Q5：为什么 ORPO 中被选中回答的对数概率比 DPO 的上升得更多？'),
    'nb11.q5.hint': (
        "Compare the arm 'sft-on-chosen' (lambda = 0) with ORPO in the comparison: what is left when lambda = 0?",
        "在对比中把 'sft-on-chosen' 这一组（lambda = 0）和 ORPO 比较：lambda = 0 时还剩下什么？"),
    'nb11.q5.why.no_reference': (
        "SimPO has no reference model either, and its chosen log-prob behaves like DPO's",
        'SimPO 同样没有参考模型，而它被选中回答的对数概率表现得和 DPO 一样'),
    'nb11.q5.why.odds_ratio': (
        'with lambda = 0 there is no odds-ratio term at all, and the chosen log-prob rises as much',
        'lambda = 0 时根本没有几率比（odds-ratio）项，而被选中回答的对数概率上升得一样多'),
    'nb11.q5.why.small_lambda': (
        'a small push would move the chosen log-prob little, not raise it the most',
        '小的推动只会让被选中回答的对数概率稍微移动，而不会让它上升得最多'),
    'nb11.q5.option.sft_term': (
        "its GC on chosen tokens is 1 + (odds-ratio term): SFT's push, whatever the margin",
        '它在被选中 token 上的 GC 是 1 +（几率比项）：无论间隔多大，都有 SFT 的推动'),
    'nb11.q5.option.no_reference': (
        'it has no reference model, so nothing pulls the chosen answer back',
        '它没有参考模型，所以没有什么把被选中的回答拉回来'),
    'nb11.q5.option.odds_ratio': (
        'the odds ratio pushes the rejected answer down more gently than a log-ratio',
        '几率比把被拒绝的回答往下推得比对数比更温和'),
    'nb11.q5.option.small_lambda': (
        'lambda = 0.1 makes every push small',
        'lambda = 0.1 让每次推动都很小'),
    'nb11.q2.case.equal_mean_log_probs_gamma_0': (
        'equal mean log-probs, gamma = 0',
        '平均对数概率相等，gamma = 0'),
    'nb11.q2.case.chosen_far_more_likely_margin_past_gamma': (
        'chosen far more likely (margin past gamma)',
        '被选中的回答可能性大得多（间隔超过 gamma）'),
    'nb11.q2.case.different_lengths_same_mean': (
        'different lengths, same mean',
        '长度不同，均值相同'),
    'nb11.q2.case.ragged_batch': (
        'ragged batch',
        '参差不齐的批次'),
    'nb11.q3.case.one_desirable_one_undesirable_at_z0': (
        'one desirable, one undesirable, at z0',
        '一个可取的，一个不可取的，在 z0 处'),
    'nb11.q3.case.ragged_batch': (
        'ragged batch',
        '参差不齐的批次'),
}
