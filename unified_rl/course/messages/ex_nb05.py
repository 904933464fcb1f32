"""Texts of the exercises of `unified_rl.course.ex.nb05_ppo`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb05.q1.title': (
        'Q1: the exact coefficient of eq 16',
        'Q1：公式 16 的精确系数'),
    'nb05.q1.hint1': (
        'For a one-token response, `J = ratio * A` with `ratio = exp(ell - ell_old)`; `GC = |o| dJ/d ell = dJ/d ell`.',
        '对只有一个 token 的回答，`J = ratio * A`，其中 `ratio = exp(ell - ell_old)`；`GC = |o| dJ/d ell = dJ/d ell`。'),
    'nb05.q1.hint2': (
        'Only `ell` depends on theta: `ell_old` was computed by the sampling policy and `A` by GAE.',
        '只有 `ell` 依赖于 theta：`ell_old` 由采样策略算出，`A` 由 GAE 算出。'),
    'nb05.q1.solution': (
        '```python\ngc_eq16 = sympy.diff(sympy.exp(ell - ell_old) * A, ell)   # = A * exp(ell - ell_old) = r * A\n```',
        '```python\ngc_eq16 = sympy.diff(sympy.exp(ell - ell_old) * A, ell)   # = A * exp(ell - ell_old) = r * A\n```'),
    'nb05.q2.title': (
        'Q2: GAE for the first of two tokens',
        'Q2：两个 token 中第一个的 GAE'),
    'nb05.q2.hint1': (
        '`delta_t = r_t + gamma V_{{t+1}} - V_t`, with `r_1 = 0`, `r_2 = R` and `V_3 = 0` (nothing after the response).',
        '`delta_t = r_t + gamma V_{{t+1}} - V_t`，其中 `r_1 = 0`、`r_2 = R`、`V_3 = 0`（回答之后什么都没有）。'),
    'nb05.q2.hint2': (
        '`A_1 = delta_1 + gamma * lam * delta_2`.',
        '`A_1 = delta_1 + gamma * lam * delta_2`。'),
    'nb05.q2.solution': (
        '```python\nadv_first_token = (gamma * V2 - V1) + gamma * lam * (R - V2)\n```',
        '```python\nadv_first_token = (gamma * V2 - V1) + gamma * lam * (R - V2)\n```'),
    'nb05.q3.title': (
        'Q3: implement GAE',
        'Q3：实现 GAE'),
    'nb05.q3.hint1': (
        'Walk the tokens backwards: `delta_t = r_t + gamma V_{{t+1}} - V_t` with `V = 0` after the last response token, then `A_t = delta_t + gamma lam A_{{t+1}}`.',
        '从后往前遍历 token：`delta_t = r_t + gamma V_{{t+1}} - V_t`，最后一个回答 token 之后 `V = 0`，然后 `A_t = delta_t + gamma lam A_{{t+1}}`。'),
    'nb05.q3.hint2': (
        'Return (adv, returns) with returns = adv + values, both 0 off the mask.',
        '返回 (adv, returns)，其中 returns = adv + values，两者在 mask 之外都为 0。'),
    'nb05.q4.title': (
        'Q4: predict the clipped coefficient for A = -1 at ratio 1.3 (clip_eps = 0.2)',
        'Q4：预测 ratio 为 1.3（clip_eps = 0.2）、A = -1 时裁剪后的系数'),
    'nb05.q4.hint1': (
        'The clip only stops the push in the direction the advantage asks for: up for `A > 0`, down for `A < 0`.',
        '裁剪（clipping）只在优势（advantage）要求的方向上停止推动：`A > 0` 时向上，`A < 0` 时向下。'),
    'nb05.q4.hint2': (
        'For `A < 0` the term `min(rA, clip(r)A)` picks `rA` whenever `r > 1 - eps`: its derivative is `r A`.',
        '对 `A < 0`，只要 `r > 1 - eps`，`min(rA, clip(r)A)` 就取 `rA`：它的导数是 `r A`。'),
    'nb05.q5.title': (
        'Q5: implement the exact clipped coefficient of eq 15',
        'Q5：实现公式 15 精确的裁剪系数'),
    'nb05.q5.hint1': (
        '`ratio = torch.exp(logp - logp_old)`; the coefficient is `ratio * adv`, except 0 where the token has moved more than `clip_eps` in the direction its advantage asks for.',
        '`ratio = torch.exp(logp - logp_old)`；系数是 `ratio * adv`，但在 token 已沿其优势要求的方向移动超过 `clip_eps` 的地方为 0。'),
    'nb05.q5.hint2': (
        "That is `(adv > 0) & (ratio > 1 + clip_eps)` or `(adv < 0) & (ratio < 1 - clip_eps)`. Multiply by the mask and return it detached: the checker backpropagates eq 5's surrogate through your coefficient.",
        '即 `(adv > 0) & (ratio > 1 + clip_eps)` 或 `(adv < 0) & (ratio < 1 - clip_eps)`。乘以 mask 并返回 detach 之后的结果：检查器会把公式 5 的替代损失经你的系数反向传播。'),
    'nb05.q3.case.one_token_reward_1': (
        'one token, reward 1',
        '一个 token，奖励 1'),
    'nb05.q3.case.terminal_reward_only_gamma_lam_1': (
        'terminal reward only, gamma = lam = 1',
        '只有终点奖励，gamma = lam = 1'),
    'nb05.q3.case.padding_after_a_short_response_values_there_are_not_0': (
        'padding after a short response (values there are not 0)',
        '短回答之后的填充（那里的价值不是 0）'),
    'nb05.q5.case.on_policy_ratio_1': (
        'on-policy (ratio 1)',
        '同策略（比率为 1）'),
    'nb05.q5.case.one_token_in_each_region_of_the_table': (
        'one token in each region of the table',
        '表格的每个区域各一个 token'),
}
