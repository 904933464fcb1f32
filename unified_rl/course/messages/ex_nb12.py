"""Texts of the exercises of `unified_rl.course.ex.nb12_real_model`: titles, hints, solutions' prose."""

MESSAGES = {
    'nb12.q1.title': (
        "Q1: a micro-batch's share of the loss",
        'Q1：一个微批次（micro-batch）在损失中的份额'),
    'nb12.q1.hint1': (
        '`paradigm.surrogate_loss(logp, coef, mask)` averages over *rows* (each row over its tokens). '
        "The whole batch's loss is the mean over its B rows; a micro-batch of n rows holds n of them.",
        '`paradigm.surrogate_loss(logp, coef, mask)` 按*行*取平均（每一行先在自己的 token 上平均）。'
        '整个批次的损失是 B 行的平均；一个 n 行的微批次占其中的 n 行。'),
    'nb12.q1.hint2': (
        "So the micro-batch's loss is `surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop])` "
        'times `(stop - start) / B`, with `B = logp.shape[0]`.',
        '所以微批次的损失是 `surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop])` '
        '乘以 `(stop - start) / B`，其中 `B = logp.shape[0]`。'),
    'nb12.q1.solution': (
        "```python\ndef my_micro_loss(logp, coef, mask, start, stop):\n"
        "    B = logp.shape[0]\n"
        "    part = surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop])\n"
        "    return part * (stop - start) / B   # sum_k n_k / B * mean_k = mean over the batch\n```",
        "```python\ndef my_micro_loss(logp, coef, mask, start, stop):\n"
        "    B = logp.shape[0]\n"
        "    part = surrogate_loss(logp[start:stop], coef[start:stop], mask[start:stop])\n"
        "    return part * (stop - start) / B   # sum_k n_k / B * mean_k = mean over the batch\n```"),
    'nb12.q2.title': (
        "Q2: a LoRA layer's forward",
        'Q2：LoRA 层的前向计算'),
    'nb12.q2.hint1': (
        "`weight` is (out, in) like `torch.nn.Linear`'s: the frozen part is `x @ weight.T`.",
        '`weight` 的形状是 (out, in)，与 `torch.nn.Linear` 的一样：冻结的部分是 `x @ weight.T`。'),
    'nb12.q2.hint2': (
        'The adapter first projects down with `lora_A` (r, in), then up with `lora_B` (out, r), and is scaled '
        'by `alpha / r`: `(alpha / r) * (x @ lora_A.T) @ lora_B.T`.',
        '适配器先用 `lora_A` (r, in) 向下投影，再用 `lora_B` (out, r) 向上投影，并乘以缩放系数 '
        '`alpha / r`：`(alpha / r) * (x @ lora_A.T) @ lora_B.T`。'),
    'nb12.q2.solution': (
        "```python\ndef my_lora_forward(x, weight, lora_A, lora_B, alpha, r):\n"
        "    return x @ weight.T + (alpha / r) * (x @ lora_A.T) @ lora_B.T\n```",
        "```python\ndef my_lora_forward(x, weight, lora_A, lora_B, alpha, r):\n"
        "    return x @ weight.T + (alpha / r) * (x @ lora_A.T) @ lora_B.T\n```"),
    'nb12.q3.title': (
        'Q3: per-token log-probs from the logits',
        'Q3：由 logits 得到每个 token 的对数概率'),
    'nb12.q3.hint1': (
        "The logits at position t are the model's distribution over token t + 1: drop the last position "
        '(`logits[:, :-1]`) and the first token (`input_ids[:, 1:]`).',
        '位置 t 的 logits 是模型对第 t + 1 个 token 的分布：去掉最后一个位置'
        '（`logits[:, :-1]`）和第一个 token（`input_ids[:, 1:]`）。'),
    'nb12.q3.hint2': (
        'Normalise with `log_softmax(-1)` over the vocabulary, pick each target with '
        '`.gather(-1, input_ids[:, 1:, None])[..., 0]`, and multiply by `mask`.',
        '用 `log_softmax(-1)` 在词表上归一化，用 '
        '`.gather(-1, input_ids[:, 1:, None])[..., 0]` 取出每个目标 token，再乘以 `mask`。'),
    'nb12.q3.solution': (
        "```python\ndef my_token_logp(logits, input_ids, mask):\n"
        "    lp = logits[:, :-1].log_softmax(-1)          # (B, T, V): position t predicts token t + 1\n"
        "    return lp.gather(-1, input_ids[:, 1:, None])[..., 0] * mask   # (B, T)\n```",
        "```python\ndef my_token_logp(logits, input_ids, mask):\n"
        "    lp = logits[:, :-1].log_softmax(-1)          # (B, T, V): position t predicts token t + 1\n"
        "    return lp.gather(-1, input_ids[:, 1:, None])[..., 0] * mask   # (B, T)\n```"),
    'nb12.q1.case.the_first_3_of_5_rows_uneven_micro_batches': (
        'the first 3 of 5 rows (uneven micro-batches)',
        '5 行中的前 3 行（不均匀的微批次）'),
    'nb12.q1.case.the_last_2_of_5_rows': (
        'the last 2 of 5 rows',
        '5 行中的最后 2 行'),
    'nb12.q1.case.half_of_4_rows': (
        'half of 4 rows',
        '4 行中的一半'),
    'nb12.q2.case.r_2_alpha_16_B_0_at_initialisation_only_W': (
        'r = 2, alpha = 16 (B = 0 at initialisation: only W)',
        'r = 2，alpha = 16（初始化时 B = 0：只有 W）'),
    'nb12.q3.case.one_row_the_last_two_tokens_the_response': (
        'one row, the last two tokens the response',
        '一行，最后两个 token 是回答'),
    'nb12.q1.case.a_group_of_4_rows_with_coefficient_0': (
        'the first 4 of 8 rows, the other 4 a group whose coefficient is 0 (equal rewards, beta = 0)',
        '8 行中的前 4 行，另外 4 行是一个系数为 0 的组（奖励全相同，beta = 0）'),
    'nb12.q4.title': (
        "Q4: the response mask of a chat rollout",
        'Q4：对话 rollout 的回答掩码'),
    'nb12.q4.hint1': (
        'The mask is aligned with the *targets* `input_ids[:, 1:]`: target `t + 1` sits at column `t`, so the '
        "reply's first token (`input_ids[:, prompt_len]`) is column `prompt_len - 1`. The prompt, its left "
        'padding and the chat template all belong to the first `prompt_len` tokens.',
        '掩码与*目标* `input_ids[:, 1:]` 对齐：目标 `t + 1` 在第 `t` 列，所以回答的第一个 token'
        '（`input_ids[:, prompt_len]`）在第 `prompt_len - 1` 列。提示、它的左填充和对话模板都在前 `prompt_len` 个 token 里。'),
    'nb12.q4.hint2': (
        'Padding uses the end-of-turn id too, so the reply ends at the *first* `eos_id` after the prompt, which '
        'itself counts (the policy must learn to stop). With `ends = (input_ids[:, prompt_len:] == eos_id).long()`, '
        'the positions before or at the first end are those where `ends.cumsum(-1) - ends == 0`. A row without '
        'an end was cut by the budget: its reply runs to the row\'s end.',
        '填充也用结束 id，所以回答在提示之后的*第一个* `eos_id` 处结束，而这个结束 token 本身也算（策略要学会停下）。'
        '令 `ends = (input_ids[:, prompt_len:] == eos_id).long()`，第一个结束及其之前的位置就是 '
        '`ends.cumsum(-1) - ends == 0` 的位置。没有结束 token 的行是被预算截断的：它的回答一直到行尾。'),
    'nb12.q4.solution': (
        "```python\ndef my_response_mask(input_ids, prompt_len, eos_id):\n"
        "    ends = (input_ids[:, prompt_len:] == eos_id).long()           # (B, N)\n"
        "    reply = (ends.cumsum(-1) - ends) == 0                        # up to and including the first end\n"
        "    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)  # (B, T)\n"
        "    mask[:, prompt_len - 1:] = reply.double()\n"
        "    return mask\n```",
        "```python\ndef my_response_mask(input_ids, prompt_len, eos_id):\n"
        "    ends = (input_ids[:, prompt_len:] == eos_id).long()           # (B, N)\n"
        "    reply = (ends.cumsum(-1) - ends) == 0                        # up to and including the first end\n"
        "    mask = torch.zeros(input_ids.shape[0], input_ids.shape[1] - 1, dtype=torch.float64)  # (B, T)\n"
        "    mask[:, prompt_len - 1:] = reply.double()\n"
        "    return mask\n```"),
    'nb12.q4.case.two_rows_one_ended_one_cut': (
        'two rows, prompt of 3 tokens: one reply ends and is padded, one is cut by the budget',
        '两行，提示 3 个 token：一个回答正常结束并被填充，另一个被预算截断'),
    'nb12.q5.title': (
        "Q5: pi_ref as the adapter switched off",
        'Q5：把适配器关掉就是 pi_ref'),
    'nb12.q5.hint1': (
        "A peft model's `disable_adapter()` is a context manager: inside it the model is the base model, "
        'outside it the adapter is back. `sampling.token_logp(model, input_ids, attention_mask)` gives the '
        '(B, T) log-probs, with the attention mask and positions that skip the left padding.',
        'peft 模型的 `disable_adapter()` 是一个上下文管理器：在它里面模型就是基座模型，出来后适配器恢复。'
        '`sampling.token_logp(model, input_ids, attention_mask)` 给出 (B, T) 的对数概率，'
        '带注意力掩码，位置跳过左填充。'),
    'nb12.q5.hint2': (
        'pi_ref is a constant of the objective: compute it under `torch.no_grad()`, so no gradient can reach the '
        'adapter through it.',
        'pi_ref 是目标函数中的常量：在 `torch.no_grad()` 下计算，这样梯度不会经由它流到适配器。'),
    'nb12.q5.solution': (
        "```python\ndef my_reference_logp(model, input_ids, attention_mask):\n"
        "    with model.disable_adapter(), torch.no_grad():\n"
        "        return token_logp(model, input_ids, attention_mask)   # (B, T)\n```",
        "```python\ndef my_reference_logp(model, input_ids, attention_mask):\n"
        "    with model.disable_adapter(), torch.no_grad():\n"
        "        return token_logp(model, input_ids, attention_mask)   # (B, T)\n```"),
}
