"""Notebook 04's printed sentences in Chinese (i18n.tr): 04_dpo.ipynb."""

SENTENCES = {
    "preset {preset}: {pairs} pairs per step, {samples} SFT samples per question to build them, "
    "dpo_beta = {beta}":
        "预设 {preset}：每步 {pairs} 个偏好对，每个问题采样 {samples} 个 SFT 样本来构造它们，dpo_beta = {beta}",
    "method {name!r}: reward {reward}, coefficient {coefficient}\n": "方法 {name!r}：奖励函数 {reward}，梯度系数 {coefficient}\n",
    "GC of the first chosen token:  ": "被选中回答第一个 token 的 GC：",
    "| token | sympy: $\\lvert o\\rvert\\,\\partial J/\\partial\\ell$ | by hand | autograd | printed eq 14 | printed × β |\n"
    "|---|---|---|---|---|---|\n":
        "| token | sympy：$\\lvert o\\rvert\\,\\partial J/\\partial\\ell$ | 手推形式 | autograd | 印出的公式 14 | 印出的公式 14 × β |\n"
        "|---|---|---|---|---|---|\n",
    "max |grad J - grad surrogate| = {diff:.2e}": "max |grad J - grad 替代损失| = {diff:.2e}",
    "two-term surrogate vs the trainer's stacked one: {diff:.2e}": "两项之和的替代损失与训练器拼成一个的替代损失之差：{diff:.2e}",
    "dpo: max |grad_theta J - grad_theta surrogate| = {diff:.2e}": "dpo：max |grad_theta J - grad_theta 替代损失| = {diff:.2e}",
    "{n} fixed pairs, e.g.": "{n} 个固定的偏好对，例如：",
    "  {prompt:<8} chosen {chosen:<16} rejected {rejected}": "  {prompt:<8} 被选中 {chosen:<16} 被拒绝 {rejected}",
    "DPO's own defaults: {defaults}    the shared RL learning rate: {lr}": "DPO 自己的默认值：{defaults}    共用的 RL 学习率：{lr}",
    "{name}: held-out greedy accuracy {accs}  (steps 0, {every}, ...; {seconds:.0f} s)":
        "{name}：留出集上的贪心解码准确率 {accs}（第 0、{every}、... 步；{seconds:.0f} 秒）",
    "held-out greedy accuracy, DPO from the SFT model": "留出集上的贪心解码准确率，从 SFT 模型出发的 DPO",
    # the table of the fixed pairs before and after training
    "mean log π(o⁺) per token": "每个 token 的平均 log π(o⁺)",
    "mean log π(o⁻) per token": "每个 token 的平均 log π(o⁻)",
    "x⁺ (chosen log-ratio)": "x⁺（被选中回答的对数比）",
    "x⁻ (rejected log-ratio)": "x⁻（被拒绝回答的对数比）",
    "margin x⁺ − x⁻": "间隔 x⁺ − x⁻",
    "pairs with x⁺ < 0": "x⁺ < 0 的偏好对",
    "pairs with x⁺ > x⁻": "x⁺ > x⁻ 的偏好对",
    "mean GC c = β σ(β x⁻ − β x⁺)": "平均 GC c = β σ(β x⁻ − β x⁺)",
    "| on the fixed pairs | before | ": "| 在固定的偏好对上 | 训练前 | ",
    "after, {run}": "训练后，{run}",
    "{run}: margin {margin:+.3f} (x+ {x_plus:+.3f}, x- {x_minus:+.3f}); chosen less likely than under pi_sft "
    "on {fell:.0%} of the pairs; held-out accuracy {acc0:.3f} -> peak {peak:.3f} -> {final:.3f} at step {step}":
        "{run}：间隔 {margin:+.3f}（x+ {x_plus:+.3f}，x- {x_minus:+.3f}）；在 {fell:.0%} 的偏好对上，被选中回答的概率"
        "低于在 pi_sft 下；留出集准确率 {acc0:.3f} -> 峰值 {peak:.3f} -> 第 {step} 步 {final:.3f}",
}
