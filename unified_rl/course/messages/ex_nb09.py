"""Texts of the exercises of `unified_rl.course.ex.nb09_summary`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb09.q1.title': (
        'Q1: which methods have negative coefficients?',
        'Q1：哪些方法有负的系数？'),
    'nb09.q1.hint': (
        'Look at the GC column: which coefficients are an indicator or 1, and which can change sign?',
        '看 GC 这一列：哪些系数是示性函数或 1，哪些会变号？'),
    'nb09.q1.why.SFT_and_RFT': (
        'their GC is 1 or I(o), never below 0: they can only push up (or ignore)',
        '它们的 GC 是 1 或 I(o)，从不小于 0：只能向上推（或忽略）'),
    'nb09.q1.why.PPO_and_GRPO_only': (
        "DPO's rejected response gets -beta * sigma(...): it is pushed down",
        'DPO 被拒绝的回答得到 -beta * sigma(...)：它被向下推'),
    'nb09.q1.why.all_of_them': (
        "SFT's GC is always 1 and RFT's is 0 or 1",
        'SFT 的 GC 总是 1，RFT 的是 0 或 1'),
    'nb09.q2.title': (
        'Q2: on a batch, how many of the five coefficients have a negative entry?',
        'Q2：在一个批次上，五个系数中有几个含有负的元素？'),
    'nb09.q2.hint': (
        'The explorer shows five coefficients: SFT, RFT / online RFT, DPO, PPO and GRPO. Q1 told you which can be negative; on a batch with mixed rewards, all of those are.',
        '探索器显示五个系数：SFT、RFT / 在线 RFT、DPO、PPO 和 GRPO。Q1 已告诉你哪些可能为负；在奖励有对有错的批次上，它们都会为负。'),
}
