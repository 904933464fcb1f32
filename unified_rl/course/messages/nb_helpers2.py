"""Sentences, table headers and labels of nb_preference (notebook 11): its findings quote measured numbers."""

MESSAGES = {
    "nb.pref.row": ("row (first half | second half)", "行（前一半 | 后一半）"),
    "nb.pref.one_scale": ("GC (one scale, ±{vmax:.3g})", "GC（同一刻度，±{vmax:.3g}）"),
    "nb.pref.x_label": ("x = Δ mean log π per token since SFT", "x = 自 SFT 以来每个 token 平均 log π 的变化 Δ"),
    "nb.pref.x_title": ("fixed pairs: x⁺ chosen (solid), x⁻ rejected (dashed)", "固定的偏好对：x⁺ 被选中（实线），x⁻ 被拒绝（虚线）"),
    "nb.pref.arm_head": ("| arm | held-out accuracy | x⁺ = Δ mean log π(o⁺) | x⁻ = Δ mean log π(o⁻) | margin | pairs with x⁺ < 0 |",
                         "| 组 | 留出集准确率 | x⁺ = Δ mean log π(o⁺) | x⁻ = Δ mean log π(o⁻) | 间隔 | x⁺ < 0 的对 |"),
    "nb.pref.cmp_head": ("| arm | method, settings | lr | held-out accuracy | per seed | vs SFT | x⁺ at the end | x⁻ at the end | "
                         "pairs whose x⁺ a DPO step lowers |",
                         "| 组 | 方法，设置 | lr | 留出集准确率 | 每个种子 | 相对 SFT | 结束时的 x⁺ | 结束时的 x⁻ | "
                         "一步 DPO 会降低其 x⁺ 的对 |"),
    "nb.pref.sft_model": ("SFT model", "SFT 模型"),
    "nb.pref.cos": ("At the SFT model the cosine between a pair's ∇x⁺ and ∇x⁻ averages {sft} over the seeds; "
                    "after DPO at 2e-5 it is {fast} (median {median}).",
                    "在 SFT 模型处，一对的 ∇x⁺ 与 ∇x⁻ 之间的余弦在各种子上平均为 {sft}；以 2e-5 做 DPO 之后为 {fast}（中位数 {median}）。"),
    "nb.pref.fast_end": ("DPO at 2e-5: x⁺ ended below zero on {below} of {n} seeds ({x_plus}, against {x_minus} "
                         "for x⁻), on {fell} of the pairs, while the margin grew to {margin}.",
                         "以 2e-5 做 DPO：在 {n} 个种子中有 {below} 个的 x⁺ 最终低于零（{x_plus}，而 x⁻ 为 {x_minus}），"
                         "涉及 {fell} 的偏好对，同时间隔增长到 {margin}。"),
    "nb.pref.own_rate": ("DPO at its own rate: x⁺ peaked at step {lo:.0f} to {hi:.0f} and was lower at the end "
                         "on {fell} of {n} seeds, ending at {x_plus} with {below} of the pairs below zero (cosine {cos}).",
                         "以它自己的学习率做 DPO：x⁺ 在第 {lo:.0f} 到 {hi:.0f} 步达到峰值，并在 {n} 个种子中的 {fell} 个上"
                         "结束时更低，最终为 {x_plus}，有 {below} 的偏好对低于零（余弦 {cos}）。"),
    "nb.pref.lowered": ("Pairs whose x⁺ a plain-gradient DPO step would lower: {sft} at the SFT model, {fast} after DPO at 2e-5.",
                        "一步普通梯度的 DPO 会降低其 x⁺ 的偏好对：在 SFT 模型处为 {sft}，以 2e-5 做 DPO 之后为 {fast}。"),
    "nb.pref.x_end": ("x⁺ at the end: ORPO {orpo}, SFT on the chosen answers {sft}, IPO {ipo}; "
                      "held-out accuracy IPO {acc_ipo}, DPO at IPO's rate {acc_fast}.",
                      "结束时的 x⁺：ORPO {orpo}，在被选中答案上做 SFT {sft}，IPO {ipo}；"
                      "留出集准确率 IPO {acc_ipo}，以 IPO 的学习率做 DPO {acc_fast}。"),
    "nb.pref.sft_seeds": ("SFT models of the seeds: {accs} held-out accuracy.", "各种子的 SFT 模型的留出集准确率：{accs}。"),
    "nb.pref.four": ("DPO, IPO, SimPO, KTO: {accs}; their means span {span:.3f}, less than the smallest of their "
                     "stds over seeds ({std:.3f}).",
                     "DPO、IPO、SimPO、KTO：{accs}；它们的均值相差 {span:.3f}，小于它们在各种子上的标准差中最小的那个（{std:.3f}）。"),
    "nb.pref.lifted": ("Those four lifted the weaker SFT models by {lo:.2f} to {hi:.2f}; on the strong one "
                       "(seed {seed}: {sft:.3f}) they ended at {after_lo:.3f} to {after_hi:.3f}.",
                       "这四种方法把较弱的 SFT 模型提高了 {lo:.2f} 到 {hi:.2f}；在较强的那个上"
                       "（种子 {seed}：{sft:.3f}）它们最终为 {after_lo:.3f} 到 {after_hi:.3f}。"),
    "nb.pref.orpo": ("ORPO {orpo} (strong seed {strong:.3f}); SFT on the chosen answers alone (ORPO with λ = 0) {sft}; "
                     "ORPO ahead of it on {ahead} of {n} seeds.",
                     "ORPO {orpo}（强种子 {strong:.3f}）；只在被选中答案上做 SFT（λ = 0 的 ORPO）{sft}；"
                     "ORPO 在 {n} 个种子中的 {ahead} 个上领先于它。"),
    "nb.pref.fast": ("DPO at 2e-5 {acc}, below DPO at its own rate on {below} of {n} seeds; its held-out accuracy "
                     "peaked at step {lo:.0f} to {hi:.0f}.",
                     "以 2e-5 做 DPO {acc}，在 {n} 个种子中的 {below} 个上低于以它自己学习率做的 DPO；它的留出集准确率"
                     "在第 {lo:.0f} 到 {hi:.0f} 步达到峰值。"),
}
