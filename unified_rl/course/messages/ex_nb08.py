"""Texts of the exercises of `unified_rl.course.ex.nb08_effective_rl`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb08.q1.title': (
        'Q1: the expected noisy reward',
        'Q1：带噪声奖励的期望'),
    'nb08.q1.hint1': (
        'With probability 1 - eps the reward is r, with probability eps it is 1 - r.',
        '奖励以概率 1 - eps 为 r，以概率 eps 为 1 - r。'),
    'nb08.q1.hint2': (
        'Collect the terms: the result is an affine function of r. What is its slope?',
        '合并同类项：结果是 r 的仿射函数。它的斜率是多少？'),
    'nb08.q1.solution': (
        '```python\nexpected_noisy_reward = r * (1 - epsilon) + (1 - r) * epsilon   # = epsilon + (1 - 2 epsilon) r\n```',
        '```python\nexpected_noisy_reward = r * (1 - epsilon) + (1 - r) * epsilon   # = epsilon + (1 - 2 epsilon) r\n```'),
    'nb08.q2.title': (
        'Q2: process-supervised advantages',
        'Q2：过程监督（process supervision）的优势'),
    'nb08.q2.hint1': (
        'Put every step reward of a group in one row (reshape to `(n_groups, group_size * T)`) and normalise with the mean and the sample std over the scored entries only (`step_mask`); 0 if they are all equal.',
        '把一组的所有步骤奖励放在一行（reshape 成 `(n_groups, group_size * T)`），只在被打分的位置（`step_mask`）上用均值和样本标准差归一化；若全部相等则为 0。'),
    'nb08.q2.hint2': (
        "A token's advantage is the sum of the normalised rewards of the steps that end at or after it: flip the token axis, cumsum, flip back.",
        '一个 token 的优势是在它处或之后结束的各步骤归一化奖励之和：翻转 token 维度，cumsum，再翻转回来。'),
    'nb08.q3.title': (
        'Q3: when does a noisy reward carry no signal?',
        'Q3：带噪声的奖励何时不带任何信号？'),
    'nb08.q3.hint': (
        'Use Q1: the expected reward is epsilon + (1 - 2 epsilon) r. When does it stop depending on r?',
        '用 Q1 的结论：期望奖励是 epsilon + (1 - 2 epsilon) r。它什么时候不再依赖于 r？'),
    'nb08.q4.title': (
        'Q4: which direction does the learned reward test?',
        'Q4：学到的奖励检验的是哪个方向？'),
    'nb08.q4.why.uncertainty': (
        'ModelReward returns one probability per response; nothing here models its uncertainty',
        'ModelReward 对每个回答返回一个概率；这里没有任何东西对它的不确定性建模'),
    'nb08.q4.why.process_rewards': (
        'the learned reward scores whole responses (outcome); the process arm uses the rule',
        '学到的奖励给整个回答打分（结果监督）；过程这一组用的是规则'),
    'nb08.q4.hint': (
        'The reward model is trained on samples of the SFT model, then scores samples of a policy that moves away from it.',
        '奖励模型（reward model）在 SFT 模型的样本上训练，然后给一个逐渐偏离它的策略的样本打分。'),
    'nb08.q4.option.generalization': (
        'the reward model must score outputs unlike the ones it was trained on',
        '奖励模型必须为不同于其训练数据的输出打分'),
    'nb08.q4.option.uncertainty': (
        'the reward model should say how sure it is',
        '奖励模型应当说出它有多确定'),
    'nb08.q4.option.process_rewards': (
        'fine-grained, per-step training signals',
        '细粒度的、逐步的训练信号'),
    'nb08.q2.case.two_answers_two_steps_each': (
        'two answers, two steps each',
        '两个答案，每个两步'),
    'nb08.q2.case.every_step_right_no_signal': (
        'every step right: no signal',
        '每一步都正确：没有信号'),
}
