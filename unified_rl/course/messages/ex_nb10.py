"""Texts of the exercises of `unified_rl.course.ex.nb10_beyond_grpo`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb10.q1.title': (
        "Q1: implement Dr. GRPO's coefficient",
        'Q1：实现 Dr. GRPO 的系数'),
    'nb10.q1.hint1': (
        'The advantage is `r - mean(r)` within each group: `rewards.view(-1, group_size)`, no std.',
        '优势是每组内的 `r - mean(r)`：`rewards.view(-1, group_size)`，不除以标准差。'),
    'nb10.q1.hint2': (
        "Eq 5 divides each response by `|o_i| = mask.sum(-1)`; Dr. GRPO divides by the constant `max_len`, so the coefficient carries `|o_i| / max_len`. Add GRPO's KL term `beta * (exp(logp_ref - logp) - 1)`, multiply by the mask and detach.",
        '公式 5 把每个回答除以 `|o_i| = mask.sum(-1)`；Dr. GRPO 除以常数 `max_len`，所以系数带有 `|o_i| / max_len`。加上 GRPO 的 KL 项 `beta * (exp(logp_ref - logp) - 1)`，乘以 mask 并 detach。'),
    'nb10.q2.title': (
        "Q2: implement CISPO's coefficient",
        'Q2：实现 CISPO 的系数'),
    'nb10.q2.hint1': (
        "A-hat is GRPO's: `(r - mean) / (sample std + 1e-6)` per group, 0 in an all-equal group (`advantages.group_relative`). The weight is `exp(logp - logp_old).clamp(max=1 + clip_eps_high)`.",
        'A-hat 与 GRPO 的相同：每组 `(r - mean) / (sample std + 1e-6)`，组内全部相等时为 0（`advantages.group_relative`）。权重是 `exp(logp - logp_old).clamp(max=1 + clip_eps_high)`。'),
    'nb10.q2.hint2': (
        "Token-mean over each group: every row carries `G |o_i| / sum_{{j in group}} |o_j|`. Multiply weight, A-hat and that factor, mask, and detach: CISPO's weight is a stop-gradient.",
        '在每组上做 token 平均：每一行带有 `G |o_i| / sum_{{j in group}} |o_j|`。把权重、A-hat 和这个因子相乘，乘以 mask，再 detach：CISPO 的权重是 stop-gradient。'),
    'nb10.q3.title': (
        'Q3: derive the GC term of the k2 penalty',
        'Q3：推导 k2 惩罚的 GC 项'),
    'nb10.q3.hint1': (
        'The per-token penalty is `-beta * (ell - ell_ref)**2 / 2`; its GC term is its derivative in `ell`.',
        '每个 token 的惩罚是 `-beta * (ell - ell_ref)**2 / 2`；它的 GC 项是它对 `ell` 的导数。'),
    'nb10.q3.hint2': (
        "`sympy.diff(-beta * (ell - ell_ref)**2 / 2, ell)`: compare it with k3's `beta * (exp(ell_ref - ell) - 1)`.",
        '`sympy.diff(-beta * (ell - ell_ref)**2 / 2, ell)`：把它和 k3 的 `beta * (exp(ell_ref - ell) - 1)` 比较。'),
    'nb10.q3.solution': (
        "```python\nk2_gc = sympy.diff(-beta * (ell - ell_ref) ** 2 / 2, ell)\n# = beta * (ell_ref - ell) = beta * log(pi_ref / pi): k3's term to first order in the log-ratio\n```",
        "```python\nk2_gc = sympy.diff(-beta * (ell - ell_ref) ** 2 / 2, ell)\n# = beta * (ell_ref - ell) = beta * log(pi_ref / pi): k3's term to first order in the log-ratio\n```"),
    'nb10.q4.title': (
        "Q4: whose gradient does GRPO's k3 penalty follow?",
        'Q4：GRPO 的 k3 惩罚遵循的是谁的梯度？'),
    'nb10.q4.hint1': (
        'Its GC term is `beta (pi_ref/pi - 1)`. Average `(pi_ref/pi - 1) grad log pi` over `o ~ pi`: `sum_o pi_ref(o) grad log pi(o) - grad sum_o pi(o)`.',
        '它的 GC 项是 `beta (pi_ref/pi - 1)`。在 `o ~ pi` 上对 `(pi_ref/pi - 1) grad log pi` 取平均：`sum_o pi_ref(o) grad log pi(o) - grad sum_o pi(o)`。'),
    'nb10.q4.hint2': (
        "`-sum_o pi_ref(o) grad log pi(o)` is the gradient of which KL's `pi`-dependent part?",
        '`-sum_o pi_ref(o) grad log pi(o)` 是哪个 KL 中依赖于 `pi` 的部分的梯度？'),
    'nb10.q4.why.KL_pi_pi_ref': (
        "that is what k3's value estimates, and what k2 or k3 x ratio follow; k3's own expected gradient is -grad KL(pi_ref || pi)",
        '那是 k3 的值所估计的，也是 k2 或 k3 x ratio 所遵循的；k3 自身的期望梯度是 -grad KL(pi_ref || pi)'),
    'nb10.q4.why.neither_zero_in_expectation': (
        'that is k1 used as a loss: its GC term is the constant -beta',
        '那是把 k1 当作损失：它的 GC 项是常数 -beta'),
    'nb10.q5.title': (
        "Q5: RLOO's advantage of the one right answer among four",
        'Q5：四个答案中唯一正确的那个在 RLOO 下的优势'),
    'nb10.q5.hint1': (
        "RLOO's baseline for answer i is the mean reward of the other G - 1 answers.",
        'RLOO 对答案 i 的基线是其余 G - 1 个答案的平均奖励。'),
    'nb10.q5.hint2': (
        'For the right answer the others are (0, 0, 0): baseline 0.',
        '对正确的答案，其余答案是 (0, 0, 0)：基线为 0。'),
    'nb10.q4.option.KL_pi_pi_ref': (
        'the reverse KL, the one the k3 value estimates',
        '反向 KL，即 k3 的值所估计的那个'),
    'nb10.q4.option.KL_pi_ref_pi': (
        'the forward KL',
        '正向 KL'),
    'nb10.q4.option.neither_zero_in_expectation': (
        'like k1 used as a loss',
        '就像把 k1 用作损失时那样'),
    'nb10.q1.case.one_right_answer_in_four_pi_pi_ref': (
        'one right answer in four, pi = pi_ref',
        '四个中一个正确答案，pi = pi_ref'),
    'nb10.q1.case.an_all_right_group_only_the_KL_term': (
        'an all-right group: only the KL term',
        '一个全部正确的组：只有 KL 项'),
    'nb10.q1.case.rewards_0_2_and_0_9_two_groups': (
        'rewards 0.2 and 0.9, two groups',
        '奖励 0.2 和 0.9，两组'),
    'nb10.q2.case.on_policy_ratio_1': (
        'on-policy (ratio 1)',
        '同策略（比率为 1）'),
    'nb10.q2.case.ratios_far_above_1_eps_high': (
        'ratios far above 1 + eps_high',
        '比率远高于 1 + eps_high'),
    'nb10.q2.case.two_groups_of_two': (
        'two groups of two',
        '两组，每组两个'),
}
