"""The composition explorer's labels, table and sentences (widgets_compose.py, notebook 10)."""

MESSAGES = {
    "w.compose.title": ("Compose a coefficient from parts", "用部件组合出一个梯度系数"),
    "w.compose.note": ("One question, four answers of 3, 5, 6 and 8 tokens (two right), π<sub>θ</sub> moved from "
                       "π<sub>old</sub> by the slider. Pick one part per axis: the table names them, the heatmap is "
                       "their GC, the oracle compares it with autograd of their objective, and the button trains "
                       "them. GAE's and process supervision's advantage is a fixed stand-in here.",
                       "一个问题、四个回答，长度为 3、5、6、8 个 token（两个正确），π<sub>θ</sub> 相对 π<sub>old</sub> "
                       "移动的幅度由滑块决定。每个轴选一个部件：表格列出它们，热图是它们组合出的 GC，预言机把它与它们的目标函数的"
                       "自动求导梯度比较，按钮则训练这个组合。GAE 和过程监督的优势在这里是一个固定的替身。"),
    "w.compose.drift": ("how far π_θ moved from π_old", "π_θ 相对 π_old 移动的幅度"),
    "w.compose.advantage": ("advantage", "优势"),
    "w.compose.policy": ("policy term", "策略项"),
    "w.compose.kl": ("KL term", "KL 项"),
    "w.compose.no_kl": ("none: no KL term", "无：没有 KL 项"),
    "w.compose.in_loss": ("KL in the loss", "KL 在损失中"),
    "w.compose.in_reward": ("KL in the reward", "KL 在奖励中"),
    "w.compose.aggregation": ("aggregation", "聚合方式"),
    "w.compose.col.what": ("what", "内容"),
    "w.compose.col.value": ("this composition", "这个组合"),
    "w.compose.composition": ("parts", "部件"),
    "w.compose.gc_range": ("GC on the batch, smallest … largest", "批次上的 GC，最小 … 最大"),
    "w.compose.gc_zero": ("tokens with GC = 0", "GC = 0 的 token"),
    "w.compose.oracle": ("oracle: max |∇J − ∇surrogate|", "预言机：|∇J − ∇替代损失| 的最大值"),
    "w.compose.agree": ("{diff:.1e}: the GC is the gradient of the composed objective",
                        "{diff:.1e}：这个 GC 就是组合出的目标函数的梯度"),
    "w.compose.differ": ("{diff:.1e}: the GC is NOT the gradient of the composed objective",
                         "{diff:.1e}：这个 GC 不是组合出的目标函数的梯度"),
    "w.compose.train": ("train it for {steps} steps from the SFT model", "从 SFT 模型开始训练它 {steps} 步"),
    "w.compose.training": ("training {label} …", "正在训练 {label} …"),
    "w.compose.trained": ("{label}, {steps} steps ({seconds:.0f} s): held-out greedy accuracy {before:.3f} -> "
                          "{after:.3f}; its sampled answers right at the first step {first}, at the last {last}",
                          "{label}，{steps} 步（{seconds:.0f} 秒）：留出集上的贪心准确率 {before:.3f} -> {after:.3f}；"
                          "采样回答的正确率，第一步 {first}，最后一步 {last}"),
    "w.compose.rule": ("The composed GC of one group, o<sub>1</sub> of 1 token and o<sub>2</sub> of 2: "
                       "w<sub>i</sub> (P<sub>i,t</sub> + K<sub>i,t</sub>), w the aggregation's row factor, K the KL "
                       "term's piece in the loss, P the policy term's piece of the advantage A:",
                       "一组回答（o<sub>1</sub> 有 1 个 token，o<sub>2</sub> 有 2 个）组合出的 GC："
                       "w<sub>i</sub> (P<sub>i,t</sub> + K<sub>i,t</sub>)，w 是聚合方式给每行的因子，K 是损失中 KL 项的部分，"
                       "P 是策略项作用在优势 A 上的部分："),
    "w.compose.kl_in_reward": ("{kl} sits in the reward: K = 0, and the advantage is computed from "
                               "R − β Σ<sub>t′≥t</sub> {kl}<sub>t′</sub> of the sampled tokens.",
                               "{kl} 在奖励中：K = 0，优势由采样 token 的 R − β Σ<sub>t′≥t</sub> {kl}<sub>t′</sub> 算出。"),
    "w.compose.policy_piece": ("P, the policy term, as its derivation gives token 1's GC:",
                               "P，即策略项，它的推导给出的 token 1 的 GC："),
    "w.compose.advantage_piece": ("A, the advantage, as its derivation gives token 1's GC:",
                                  "A，即优势，它的推导给出的 token 1 的 GC："),
}
