"""Texts of the exercises of `unified_rl.course.ex.nb06_grpo`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb06.q1.title': (
        "Q1: derive the KL term of GRPO's coefficient",
        'Q1：推导 GRPO 系数中的 KL 项'),
    'nb06.q1.hint1': (
        'Write `pi_ref/pi` as `exp(ell_ref - ell)` and differentiate `-beta * k3` with `sympy.diff(..., ell)`.',
        '把 `pi_ref/pi` 写成 `exp(ell_ref - ell)`，并用 `sympy.diff(..., ell)` 对 `-beta * k3` 求导。'),
    'nb06.q1.hint2': (
        '`d/d ell` of `exp(ell_ref - ell)` is `-exp(ell_ref - ell)`; of `-(ell_ref - ell)` it is `+1`.',
        '`exp(ell_ref - ell)` 的 `d/d ell` 是 `-exp(ell_ref - ell)`；`-(ell_ref - ell)` 的是 `+1`。'),
    'nb06.q1.solution': (
        "```python\nkl_gc = sympy.diff(-beta * (sympy.exp(ell_ref - ell) - (ell_ref - ell) - 1), ell)\n# = beta * (exp(ell_ref - ell) - 1) = beta * (pi_ref / pi - 1): eq 21's second term\n```",
        "```python\nkl_gc = sympy.diff(-beta * (sympy.exp(ell_ref - ell) - (ell_ref - ell) - 1), ell)\n# = beta * (exp(ell_ref - ell) - 1) = beta * (pi_ref / pi - 1)：公式 21 的第二项\n```"),
    'nb06.q2.title': (
        'Q2: implement eq 21',
        'Q2：实现公式 21'),
    'nb06.q2.hint1': (
        'A-hat comes from `advantages.group_relative(rewards, group_size)`; give it a token axis with `[:, None]`.',
        'A-hat 来自 `advantages.group_relative(rewards, group_size)`；用 `[:, None]` 给它加上 token 维度。'),
    'nb06.q2.hint2': (
        '`pi_ref / pi = exp(logp_ref - logp)`. Multiply by the mask and return a detached tensor.',
        '`pi_ref / pi = exp(logp_ref - logp)`。乘以 mask 并返回 detach 之后的张量。'),
    'nb06.q3.title': (
        'Q3: predict the chance that a group of 4 carries no signal (p = 0.25)',
        'Q3：预测一组 4 个回答不带任何信号的概率（p = 0.25）'),
    'nb06.q3.hint1': (
        'A group carries no signal when all G answers are right or all G are wrong.',
        '当 G 个答案全对或全错时，这一组不带信号。'),
    'nb06.q3.hint2': (
        'Independent samples: P(all right) = p^G and P(all wrong) = (1 - p)^G; add them.',
        '样本相互独立：P(全对) = p^G，P(全错) = (1 - p)^G；把两者相加。'),
    'nb06.q4.title': (
        'Q4: predict the value of eq 19 at pi_theta = pi_old = pi_ref',
        'Q4：预测 pi_theta = pi_old = pi_ref 时公式 19 的值'),
    'nb06.q4.hint1': (
        'At `pi_theta = pi_old` every ratio is 1, and at `pi_theta = pi_ref` the `k3` penalty is 0.',
        '在 `pi_theta = pi_old` 时每个比率都是 1，在 `pi_theta = pi_ref` 时 `k3` 惩罚为 0。'),
    'nb06.q4.hint2': (
        'What is left is the mean of A-hat over the batch; what does A-hat sum to in a group?',
        '剩下的是 A-hat 在批次上的平均；A-hat 在一组内的总和是多少？'),
    'nb06.q5.title': (
        'Q5: by what factor does the group-mean baseline scale the expected gradient at G = 4?',
        'Q5：G = 4 时，组均值基线把期望梯度缩放了多少倍？'),
    'nb06.q5.hint1': (
        "Write the mean as `r_i / G` plus the other answers' rewards over `G`. The other answers are independent of `o_i`, so `E[r_j grad log pi(o_i)] = E[r_j] E[grad log pi(o_i)] = 0` for them.",
        '把均值写成 `r_i / G` 加上其他答案的奖励除以 `G`。其他答案与 `o_i` 独立，所以对它们有 `E[r_j grad log pi(o_i)] = E[r_j] E[grad log pi(o_i)] = 0`。'),
    'nb06.q5.hint2': (
        'What is left is `E[(r_i - r_i / G) grad log pi(o_i)]`.',
        '剩下的是 `E[(r_i - r_i / G) grad log pi(o_i)]`。'),
    'nb06.q2.case.one_right_answer_in_four': (
        'one right answer in four',
        '四个中一个正确答案'),
    'nb06.q2.case.an_all_right_group_no_signal_from_the_reward': (
        'an all-right group (no signal from the reward)',
        '一个全部正确的组（奖励没有信号）'),
    'nb06.q2.case.two_groups_one_right_answer_in_each': (
        'two groups, one right answer in each',
        '两组，每组一个正确答案'),
    'nb06.q2.case.pi_theta_pi_ref_no_KL_push': (
        'pi_theta = pi_ref (no KL push)',
        'pi_theta = pi_ref（没有 KL 推动）'),
}
