"""The derivations' prose in Chinese: {English template: Chinese template}.

`unified_rl.derivations` returns its notes, claim statements and case names as `unified_rl.text.Text`
(the English sentence, which keeps its template and fields); in the Chinese edition `i18n` shows
them through this table. Equations, symbols, identifiers and numbers are the English ones; the
{fields} and a doubled literal brace ("{{", "}}") too (tests/test_text.py).
"""

SENTENCES = {
    # cases and the words put into other sentences
    "for all values": "对所有取值",
    "{sign}, {ratio}": "{sign}，{ratio}",
    "chosen": "被选中",
    "rejected": "被拒绝",
    "desirable": "理想",
    "zero": "零",
    "reverse": "反向",
    "forward": "正向",
    # paper: SFT, RFT, Online RFT, DPO
    "Exact: the GC of eq 7 is 1 on every token.": "精确：公式 7 的梯度系数 GC 在每个 token 上都是 1。",
    "Exact: I(o) is a constant of theta, so GC = I(o) (eq 10).":
        "精确：I(o) 是 theta 的常数，所以 GC = I(o)（公式 10）。",
    "Only the data source differs from RFT: o ~ pi_theta. Eq 11, like every method here, differentiates the "
    "per-sample term with the samples held fixed; the gradient of the expectation over o ~ pi_theta itself "
    "would add a score-function term.":
        "与 RFT 相比只有数据来源不同：o ~ pi_theta。公式 11 与这里的每个方法一样，在样本固定的前提下对单个样本的项求导；"
        "若对 o ~ pi_theta 上的期望本身求梯度，还会多出一个得分函数项。",
    "The exact GC is beta * sigmoid(beta x- - beta x+) on chosen tokens and its negative on rejected ones, "
    "x the length-normalised log-ratio of eq 12.":
        "精确的 GC 在被选中回答的 token 上是 beta * sigmoid(beta x- - beta x+)，在被拒绝回答的 token 上是它的相反数，"
        "x 是公式 12 中按长度归一化的对数比。",
    "Eq 14 omits the leading beta (the inner derivative of beta * x) and writes the sigmoid's argument per "
    "token, pairing position t of both responses; eq 12's sigmoid only sees the sequence means, so the printed "
    "GC is not the derivative of eq 12.":
        "公式 14 漏掉了前面的 beta（beta * x 的内层导数），并且把 sigmoid 的自变量写成逐 token 的形式，"
        "把两个回答的第 t 个位置配成一对；公式 12 的 sigmoid 只看到序列的平均值，所以论文印出的 GC 不是公式 12 的导数。",
    "Eq 12-14 condition on o_{{<=t}}; o_{{<t}} is meant.": "公式 12–14 以 o_{{<=t}} 为条件；本意是 o_{{<t}}。",
    "exact / printed = beta on {side} tokens once eq 14's per-token arguments are the sequence means":
        "把公式 14 的逐 token 自变量换成序列平均值后，在{side}回答的 token 上 精确 / 印出 = beta",
    # paper: PPO, GRPO
    "The exact GC is r_t A_t, r_t = pi_theta / pi_old; eq 17/18's A_t is its value at pi_old = pi_theta (one "
    "update per exploration stage, as the paper assumes).":
        "精确的 GC 是 r_t A_t，r_t = pi_theta / pi_old；公式 17/18 的 A_t 是它在 pi_old = pi_theta 时的值"
        "（如论文所假设，每个探索阶段只更新一次）。",
    "A_t (GAE) is computed from rewards and the value model V_psi, a constant of theta.":
        "A_t（GAE）由奖励和价值模型 V_psi 算出，是 theta 的常数。",
    "Eq 15-16 condition on o_{{<=t}}; o_{{<t}} is meant.": "公式 15–16 以 o_{{<=t}} 为条件；本意是 o_{{<t}}。",
    "at pi_old = pi_theta token {t}'s GC is A_t (eq 17, 18)": "在 pi_old = pi_theta 时，token {t} 的 GC 是 A_t（公式 17、18）",
    "The GC of min(r A, clip(r, 1-eps, 1+eps) A) is r A where the unclipped term is active and 0 where the clip "
    "is (A > 0 and r > 1+eps, or A < 0 and r < 1-eps). With A > 0 and r < 1-eps the min picks r A, so the GC "
    "stays r A there.":
        "min(r A, clip(r, 1-eps, 1+eps) A) 的 GC 在未裁剪项起作用处是 r A，在裁剪起作用处是 0"
        "（A > 0 且 r > 1+eps，或 A < 0 且 r < 1-eps）。当 A > 0 且 r < 1-eps 时 min 取 r A，所以那里的 GC 仍是 r A。",
    "At the kinks r = 1 +- eps J has no derivative; sympy's Heaviside(0) = 1/2 averages.":
        "在折点 r = 1 +- eps 处 J 不可导；sympy 的 Heaviside(0) = 1/2 取两侧的平均。",
    "The k3 term pi_ref/pi - log(pi_ref/pi) - 1 with pi = exp(ell) has derivative 1 - pi_ref/pi, so -beta * k3 "
    "contributes beta * (pi_ref/pi - 1) for every pi_theta: eq 20/21 are exact for the KL term.":
        "k3 项 pi_ref/pi - log(pi_ref/pi) - 1（pi = exp(ell)）的导数是 1 - pi_ref/pi，所以 -beta * k3 对任意 pi_theta "
        "都贡献 beta * (pi_ref/pi - 1)：公式 20/21 对 KL 项是精确的。",
    "The ratio term gives r * A-hat, which is eq 21's A-hat at pi_old = pi_theta.":
        "比率项给出 r * A-hat，在 pi_old = pi_theta 时就是公式 21 的 A-hat。",
    "GC = G |o_i| dJ/d ell_{{i,t}}: the 1/G of eq 19 is the mean over the batch in eq 5.":
        "GC = G |o_i| dJ/d ell_{{i,t}}：公式 19 的 1/G 就是公式 5 中对批次取的平均。",
    "Eq 20 writes {{o_t}}_{{t=1}}^G for {{o_i}}_{{i=1}}^G and drops q from pi(o_{{i,t}} | o_{{i,<t}}); eq 19 "
    "conditions on o_{{i,<=t}} where o_{{i,<t}} is meant.":
        "公式 20 把 {{o_i}}_{{i=1}}^G 写成了 {{o_t}}_{{t=1}}^G，并从 pi(o_{{i,t}} | o_{{i,<t}}) 中省去了 q；"
        "公式 19 以 o_{{i,<=t}} 为条件，本意是 o_{{i,<t}}。",
    "at pi_old = pi_theta token {i},{t}'s GC is eq 21": "在 pi_old = pi_theta 时，token {i},{t} 的 GC 就是公式 21",
    # preference: IPO, SimPO, KTO, ORPO
    "The GC is c = 1/tau - 2 (x+ - x-) on chosen tokens and -c on rejected ones: J regresses the margin onto "
    "1/(2 tau).":
        "GC 在被选中回答的 token 上是 c = 1/tau - 2 (x+ - x-)，在被拒绝回答的 token 上是 -c：J 把间隔回归到 1/(2 tau)。",
    "Unlike DPO's beta sigmoid(-beta margin), c does not fade as the margin grows: it shrinks linearly, is 0 at "
    "the target and reverses sign past it, pulling the margin back.":
        "与 DPO 的 beta sigmoid(-beta margin) 不同，c 不会随间隔增大而消失：它线性减小，在目标处为 0，"
        "越过目标后变号，把间隔拉回来。",
    "The paper's h sums log-ratios over tokens; here x is the per-token mean, as in DeepSeekMath's eq 12, so the "
    "target 1/(2 tau) is a margin per token.":
        "论文的 h 对 token 的对数比求和；这里的 x 与 DeepSeekMath 的公式 12 一样取逐 token 的平均，"
        "所以目标 1/(2 tau) 是每个 token 的间隔。",
    "the GC is linear in the margin (no sigmoid, no saturation)": "GC 是间隔的线性函数（没有 sigmoid，不会饱和）",
    "at margin = 1/(2 tau) + delta the chosen GC is -2 delta: 0 on target, reversed past it":
        "在 margin = 1/(2 tau) + delta 处被选中回答的 GC 是 -2 delta：在目标处为 0，越过目标后反向",
    "the GC is the same on every {side} token (token {t} = token 1)":
        "{side}回答的每个 token 的 GC 都相同（token {t} = token 1）",
    "The GC is c = beta sigmoid(gamma - beta (l+ - l-)) on chosen tokens and -c on rejected ones, l the mean "
    "log-prob of eq 4: DPO's coefficient with no pi_ref and a margin shifted by gamma.":
        "GC 在被选中回答的 token 上是 c = beta sigmoid(gamma - beta (l+ - l-))，在被拒绝回答的 token 上是 -c，"
        "l 是公式 4 的平均对数概率：即没有 pi_ref、间隔平移了 gamma 的 DPO 系数。",
    "The 1/|y| of eq 4 is exactly eq 5's 1/|o|: the GC is one number per response.":
        "公式 4 的 1/|y| 正是公式 5 的 1/|o|：每个回答的 GC 是同一个数。",
    "with gamma = 0 and pi_ref in the log-probs, SimPO's GC is DPO's exact GC":
        "当 gamma = 0 且对数概率中带上 pi_ref 时，SimPO 的 GC 就是 DPO 的精确 GC",
    "The GC is lambda_D beta sigmoid(z) sigmoid(-z) on a desirable response's tokens and -lambda_U beta "
    "sigmoid(z) sigmoid(-z) on an undesirable one's, z = beta (x - z0): the paper's gradient (eq 9) with the "
    "length-normalised log-ratio x.":
        "GC 在理想回答的 token 上是 lambda_D beta sigmoid(z) sigmoid(-z)，在不理想回答的 token 上是 "
        "-lambda_U beta sigmoid(z) sigmoid(-z)，z = beta (x - z0)：即论文的梯度（公式 9），x 取按长度归一化的对数比。",
    "z0 is a symbol here, a constant of theta: the paper estimates it on mismatched pairs and does not "
    "backpropagate through it.":
        "z0 在这里是一个符号，是 theta 的常数：论文在不匹配的配对上估计它，并且不对它反向传播。",
    "sigmoid(z) sigmoid(-z) fades on both sides of z = 0: responses far on the right side of z0 are left alone, "
    "and so are those far on the wrong side.":
        "sigmoid(z) sigmoid(-z) 在 z = 0 两侧都会消失：远在 z0 正确一侧的回答不再被推动，远在错误一侧的回答也是如此。",
    "the desirable push is largest where x = z0 (its slope in x vanishes there)":
        "对理想回答的推动在 x = z0 处最大（它对 x 的斜率在那里为零）",
    "The GC is 1 + lambda P-/D on chosen tokens and -lambda P-(1-P+)/((1-P-) D) on rejected ones, P = exp(mean "
    "log-prob), D = P-(1-P+) + P+(1-P-): SFT's coefficient plus the odds-ratio term, with no pi_ref.":
        "GC 在被选中回答的 token 上是 1 + lambda P-/D，在被拒绝回答的 token 上是 -lambda P-(1-P+)/((1-P-) D)，"
        "P = exp(mean log-prob)，D = P-(1-P+) + P+(1-P-)：即 SFT 的系数加上几率比项，没有 pi_ref。",
    "Eq 8-10 print the odds-ratio gradient as delta(d) h(d), delta = 1/(1 + odds+/odds-) and h = grad log "
    "P+/(1-P+) - grad log P-/(1-P-); the hand form is that product rewritten to stay finite when P+ = 1.":
        "公式 8–10 把几率比的梯度印成 delta(d) h(d)，delta = 1/(1 + odds+/odds-)，h = grad log P+/(1-P+) - grad log "
        "P-/(1-P-)；手推形式是把这个乘积改写成在 P+ = 1 时仍然有限的形式。",
    "eq 8-10's delta(d) h(d), plus the SFT term, equals the hand form on chosen tokens":
        "在被选中回答的 token 上，公式 8–10 的 delta(d) h(d) 加上 SFT 项等于手推形式",
    "... and on rejected tokens": "……在被拒绝回答的 token 上也是如此",
    "with lambda = 0 ORPO's GC is SFT's: 1 on chosen, 0 on rejected tokens":
        "当 lambda = 0 时 ORPO 的 GC 就是 SFT 的：被选中回答的 token 上为 1，被拒绝回答的 token 上为 0",
    # policy-gradient family
    "No std and no 1/|o_i|: as eq 5 divides by |o_i|, the GC carries |o_i| / L, so every token of every "
    "response gets the same push A_i / L, whatever its length.":
        "没有 std，也没有 1/|o_i|：由于公式 5 除以 |o_i|，GC 带有 |o_i| / L，所以每个回答的每个 token "
        "不论回答多长都得到同样的推动 A_i / L。",
    "at pi_old = pi_theta token {k}'s GC is |o_i|/L (R_i - mean R + KL term)":
        "在 pi_old = pi_theta 时，token {k} 的 GC 是 |o_i|/L (R_i - mean R + KL 项)",
    "Token-mean over the group: the GC of o_i carries G |o_i| / sum_j |o_j|.":
        "在组内对 token 取平均：o_i 的 GC 带有 G |o_i| / sum_j |o_j|。",
    "Clip-higher: the push on a token with A > 0 stops at r > 1 + eps_high, on one with A < 0 at r < 1 - "
    "eps_low; eps_high > eps_low leaves rising tokens more room.":
        "Clip-higher：A > 0 的 token 在 r > 1 + eps_high 时不再被推动，A < 0 的 token 在 r < 1 - eps_low 时不再被推动；"
        "eps_high > eps_low 给概率上升的 token 留出更多空间。",
    "s_i = exp(mean_t (ell - ell^old)) has d s_i / d ell_{{i,t}} = s_i / |o_i|: with the |o_i| of eq 5 the GC is "
    "s_i A_i on every token of o_i, or 0 on all of them where the sequence clip binds.":
        "s_i = exp(mean_t (ell - ell^old)) 满足 d s_i / d ell_{{i,t}} = s_i / |o_i|：乘上公式 5 的 |o_i| 后，"
        "o_i 的每个 token 的 GC 都是 s_i A_i；在序列级裁剪起作用处则全部为 0。",
    "response token {t} has the GC of token {first}": "回答中 token {t} 的 GC 与 token {first} 相同",
    "The weight sg(clip(r)) is not differentiated: the GC is G |o_i| / sum_j |o_j| * clip(r) * A, never 0 where "
    "A is not (PPO's and DAPO's clip set it to 0).":
        "权重 sg(clip(r)) 不参与求导：GC 是 G |o_i| / sum_j |o_j| * clip(r) * A，只要 A 不为 0 它就不为 0"
        "（PPO 和 DAPO 的裁剪会把它置为 0）。",
    "REINFORCE on whole sequences (a token sum): GC = |o_i| (R_i - mean of the others), which is |o_i| k/(k-1) "
    "(R_i - mean R): GRPO's centred reward, without std, scaled by k/(k-1).":
        "对整个序列做 REINFORCE（对 token 求和）：GC = |o_i| (R_i - 其余回答的平均)，即 |o_i| k/(k-1) "
        "(R_i - mean R)：GRPO 的中心化奖励，不除以 std，再乘以 k/(k-1)。",
    "The KL sits in the return: token t's advantage holds -beta times the k1 of itself and every later token "
    "(kl.gc.kl_in_reward), then the batch's mean and std normalise it.":
        "KL 放在回报里：token t 的优势包含 -beta 乘以它自身及其后每个 token 的 k1（kl.gc.kl_in_reward），"
        "再用批次的均值和 std 归一化。",
    "at pi_old = pi_theta token {t}'s GC is the normalised return A_t":
        "在 pi_old = pi_theta 时，token {t} 的 GC 是归一化的回报 A_t",
    "B = 2 rows per question (sampled, greedy): GC = 2 |o| (R - R_greedy) on the sampled row; J does not depend "
    "on the greedy row's log-probs, so its GC is 0.":
        "每个问题 B = 2 行（采样的、贪心的）：采样行上 GC = 2 |o| (R - R_greedy)；J 不依赖贪心行的对数概率，"
        "所以贪心行的 GC 为 0。",
    "Per-token terms A_i ell_{{i,t}} aggregated by {aggregation}; two responses of {n} and {n_plus_1} tokens. The "
    "GC is A_i times the row factor w_i of parts/aggregations.py.":
        "逐 token 的项 A_i ell_{{i,t}} 按 {aggregation} 聚合；两个回答分别有 {n} 和 {n_plus_1} 个 token。"
        "GC 是 A_i 乘以 parts/aggregations.py 给出的行因子 w_i。",
    "The claims sum over every token of a 3-token vocabulary (pi = softmax(z), pi_ref = softmax(w)), on-policy: "
    "the expected gradient is {what}.":
        "这些断言在一个 3-token 词表的每个 token 上求和（pi = softmax(z)，pi_ref = softmax(w)），同策略：期望梯度是{what}。",
    "E_pi[GC grad log pi] = {said} (d/dz_{j})": "E_pi[GC grad log pi] = {said}（d/dz_{j} 分量）",
    "minus beta times the gradient of the {target} KL": "负 beta 乘以{target} KL 散度的梯度",
    "-beta grad KL {target}": "-beta 乘以{target} KL 的梯度",
    # -- GRPO's options, the methods TRL and verl ship
    "Two-sided clipping (INTELLECT-2; TRL's delta, verl's dual-clip clip_ratio_c): min(r, delta) in the unclipped "
    "term. Where A < 0 and r > delta the objective is delta A, a constant, so the GC is 0: a token the update "
    "already made far likelier stops being pushed down.":
        "双侧裁剪（INTELLECT-2；TRL 的 delta，verl 的 dual-clip clip_ratio_c）：未裁剪的那一项里用 min(r, delta)。"
        "在 A < 0 且 r > delta 处目标函数是常数 delta A，所以 GC 为 0：一个已经被更新变得可能得多的 token 不再被往下压。",
    "TRL's use_bias_correction_kl multiplies k3 by the importance weight; at the sequence level the weight s is "
    "shared by the row's tokens, so each token's GC also carries the row's mean k3.":
        "TRL 的 use_bias_correction_kl 把 k3 乘以重要性权重；在序列层面，一行的所有 token 共用同一个权重 s，"
        "所以每个 token 的 GC 里还带着这一行 k3 的平均值。",
    "with one token it is the token-level r k3 term, beta r x": "只有一个 token 时它就是 token 层面的 r k3 项，beta r x",
    "mask_truncated_completions drops the cut row from J and from the token count N; the entropy mask e and the "
    "off-policy mask o are numbers fixed before the update, so each multiplies its token's GC: GC = B |o_i| / N * "
    "o_i e_{{i,t}} A_i on the kept rows, 0 on the cut one.":
        "mask_truncated_completions 把被截断的那一行从 J 和 token 总数 N 里去掉；熵掩码 e 和异策略掩码 o 是更新前就定好的数，"
        "所以各自乘在对应 token 的 GC 上：保留的行上 GC = B |o_i| / N * o_i e_{{i,t}} A_i，被截断的行上为 0。",
    "The gate 4/tau sigmoid(tau (r - 1)) has slope 1 at r = 1 and flattens as r leaves 1, so the GC 4 sigma "
    "(1 - sigma) r A fades smoothly where PPO's clip would cut it to 0; tau is tau_pos where A > 0 and tau_neg "
    "otherwise.":
        "门函数 4/tau sigmoid(tau (r - 1)) 在 r = 1 处斜率为 1，r 离开 1 后逐渐变平，所以 GC = 4 sigma (1 - sigma) r A "
        "在 PPO 的裁剪会把它一刀切成 0 的地方平滑地衰减；A > 0 时 tau 取 tau_pos，否则取 tau_neg。",
    "at pi_old = pi_theta token {t}'s GC is A": "在 pi_old = pi_theta 时第 {t} 个 token 的 GC 是 A",
    "phi(W) = e^lambda W^k e^(-lambda W) weighs A log pi without being differentiated: the GC is phi(W_i) A_i on "
    "every token, largest at W = k / lambda and never a hard 0.":
        "phi(W) = e^lambda W^k e^(-lambda W) 给 A log pi 加权，但本身不被求导：每个 token 上 GC 都是 phi(W_i) A_i，"
        "在 W = k / lambda 处最大，从不硬性变成 0。",
    "phi(1) = 1: at pi_old = pi_theta the GC is A": "phi(1) = 1：在 pi_old = pi_theta 时 GC 是 A",
    "GSPO's term of each sequence times its length |o_i| (a token sum of the constant per-token term): the GC is "
    "|o_i| s_i A_i, so a long answer's tokens are pushed as hard as a short one's in total, not per token.":
        "GSPO 中每个序列的项再乘以它的长度 |o_i|（对逐 token 相同的项按 token 求和）：GC 是 |o_i| s_i A_i，"
        "所以长回答的 token 被推动的力度按总量而不是按每个 token 与短回答相当。",
    "The sequence's weight is the geometric mean of its token ratios, each clipped in log space on the side A's "
    "sign makes pessimistic; d/d ell_t of exp(mean_t c) is rho / |o|, so the GC is A rho on the tokens whose "
    "log-ratio is inside the clip and 0 on the others.":
        "序列的权重是它各 token 比率的几何平均，每个比率在对数空间里按 A 的符号从悲观的一侧裁剪；"
        "exp(mean_t c) 对 ell_t 的导数是 rho / |o|，所以对数比在裁剪范围内的 token 上 GC 是 A rho，其余 token 上为 0。",
    "Clip-Cov multiplies PPO's term of a few tokens by c = 0 (drawn among the unclipped tokens whose covariance "
    "of A and log pi is in (lb, ub)); c is chosen before the update, so the GC is c times PPO's.":
        "Clip-Cov 把少数 token 的 PPO 项乘以 c = 0（从未被裁剪、且 A 与 log pi 的协方差落在 (lb, ub) 内的 token 中随机抽取）；"
        "c 在更新前就选定，所以 GC 是 c 乘以 PPO 的 GC。",
    "KL-Cov has no clip: the GC is r A, minus kappa sign(log r) on the chosen tokens, which pulls their log-ratio "
    "back to 0 (and is 0 at pi_old = pi_theta).":
        "KL-Cov 不裁剪：GC 是 r A，在选中的 token 上再减去 kappa sign(log r)，把它们的对数比拉回 0"
        "（在 pi_old = pi_theta 时这一项为 0）。",
    "GPG is REINFORCE on alpha (R - mean R): no ratio, so the GC is the same at every update of a batch; alpha = "
    "B / (the samples whose advantage is not 0) scales the batch up by the share of groups that carry no signal.":
        "GPG 是在 alpha (R - mean R) 上的 REINFORCE：没有重要性比率，所以同一批次的每次更新 GC 都相同；"
        "alpha = B / （优势不为 0 的样本数）按没有信号的组所占的比例把整批放大。",
    "b minimises sum_i |o_i| (R_i - b)^2, the variance of the gradient when the score function's squared norm "
    "grows with |o|":
        "b 使 sum_i |o_i| (R_i - b)^2 最小，这就是得分函数的平方范数随 |o| 增长时梯度的方差",
    "OPO's baseline is the mean reward weighted by length; on the token sum log pi(o | q) the GC is |o_i| (R_i - b) "
    "on every token.":
        "OPO 的基线是按长度加权的平均奖励；在按 token 求和的 log pi(o | q) 上，每个 token 的 GC 是 |o_i| (R_i - b)。",
    "Pass@k training gives the group's best answer (R_max - R_second) / sigma and every other answer 0: the GC "
    "pushes up only the answer that decides whether one of k samples is right, and never pushes a wrong answer "
    "down.":
        "Pass@k 训练给组里最好的回答 (R_max - R_second) / sigma，其余回答都是 0：GC 只抬高决定 k 个样本中是否有一个答对的那个回答，"
        "从不往下压错误的回答。",
    "a reward column that moves by a constant in the group changes no advantage": "组内整体平移一个常数的奖励列不改变任何优势",
    "GDPO normalises each reward within its group before summing (then normalises the sum over the batch): a "
    "reward with a large spread no longer drowns one with a small spread. The GC is that advantage, as in GRPO "
    "(eps = 0 here).":
        "GDPO 先把每个奖励在组内归一化再相加（然后在整个批次上对和再归一化）：离散度大的奖励不再淹没离散度小的奖励。"
        "GC 就是这个优势，与 GRPO 相同（这里 eps = 0）。",
    # every loss_type of TRL's DPOTrainer (parts/pair_losses/)
    "norm = mean: s is the per-token mean log-ratio (eq 12's x), so the GC is dJ/ds, one number per response, "
    "whatever its length.":
        "norm = mean：s 是逐 token 平均的对数比（公式 12 的 x），所以 GC 就是 dJ/ds，每个回答一个数，与回答长度无关。",
    "norm = sum: s is the sequence log-ratio, so the GC is |o| dJ/ds: a longer response is pushed harder (here "
    "the chosen response has n tokens, the rejected one n + 1).":
        "norm = sum：s 是整个序列的对数比，所以 GC 是 |o| dJ/ds：越长的回答被推得越用力"
        "（这里被选中的回答有 n 个 token，被拒绝的回答有 n + 1 个）。",
    "J = -l(s+, s-) for one pair, l TRL's {loss_type} loss; u = beta (s+ - s-).":
        "J = -l(s+, s-)，针对一对回答，l 是 TRL 的 {loss_type} 损失；u = beta (s+ - s-)。",
    "the GC is beta while u < 1 ...": "当 u < 1 时 GC 为 beta……",
    "... and 0 once u > 1: past the margin 1/beta the pair is left alone":
        "……一旦 u > 1 就为 0：间隔超过 1/beta 之后，这对回答不再被推动",
    "the GC is 0 at the target margin s+ - s- = 1/(2 beta) and reverses past it":
        "在目标间隔 s+ - s- = 1/(2 beta) 处 GC 为 0，超过之后反向",
    "the GC is 0 where u = log((1 - epsilon)/epsilon): the margin is pulled to that target":
        "在 u = log((1 - epsilon)/epsilon) 处 GC 为 0：间隔被拉向这个目标",
    "the chosen GC is 0 where beta s+ = log 2 and reverses past it":
        "被选中回答的 GC 在 beta s+ = log 2 处为 0，超过之后反向",
    "with epsilon = 0 robust's GC is sigmoid's": "epsilon = 0 时 robust 的 GC 就是 sigmoid 的 GC",
    "the chosen GC is 0 at s+ = 1/(2 beta) ...": "被选中回答的 GC 在 s+ = 1/(2 beta) 处为 0……",
    "... and the rejected GC at s- = -1/(2 beta): each response has a target of its own":
        "……被拒绝回答的 GC 在 s- = -1/(2 beta) 处为 0：每个回答各有自己的目标",
    "the chosen GC does not depend on the rejected response: no pair coupling":
        "被选中回答的 GC 不依赖被拒绝的回答：两者之间没有耦合",
    "pair {a} < pair {b} in the first sorted quantity, pair {c} < pair {d} in the second":
        "在第一个被排序的量中第 {a} 对 < 第 {b} 对，在第二个中第 {c} 对 < 第 {d} 对",
    "Two pairs. {what} are each sorted over the batch and matched by rank: a response's GC is g(d) of the sorted "
    "position it holds, g(d) = beta ((1 - epsilon) sigmoid(-beta d) - epsilon sigmoid(beta d)).":
        "两对回答。{what}各自在批次内排序，再按名次配对：一个回答的 GC 是它所占排序位置上的 g(d)，"
        "g(d) = beta ((1 - epsilon) sigmoid(-beta d) - epsilon sigmoid(beta d))。",
    "The chosen and the rejected log-ratios": "被选中回答的对数比和被拒绝回答的对数比",
    "The policy's margins and pi_ref's margins": "策略的间隔和 pi_ref 的间隔",
    "sft is SFT on the chosen responses (eq 6-7's GC of 1) with no pi_ref; the rejected ones get GC 0. TRL "
    "averages over every chosen token of the batch: under norm = sum the GC is |o| / (the batch's mean chosen "
    "length), under mean it is 1.":
        "sft 就是在被选中的回答上做 SFT（公式 6–7 的 GC 为 1），不用 pi_ref；被拒绝的回答 GC 为 0。"
        "TRL 对批次中所有被选中回答的 token 取平均：在 norm = sum 下 GC 是 |o| /（批次中被选中回答的平均长度），"
        "在 mean 下是 1。",
    "with z0 = 0, J is TRL's apo_zero_unpaired loss (APO-zero, arXiv 2408.06266, unpaired)":
        "当 z0 = 0 时，J 就是 TRL 的 apo_zero_unpaired 损失（APO-zero，arXiv 2408.06266，不配对版本）",
    "norm = sum: x is the sequence log-ratio, as the paper and TRL's KTOTrainer take it, so the GC carries a "
    "factor |o|.":
        "norm = sum：x 是整个序列的对数比，和论文以及 TRL 的 KTOTrainer 一样，所以 GC 带上一个因子 |o|。",
    "A response's score is one number; its derivative is the same on every token: k = 1 under the mean norm, |o| "
    "under the sum, whatever the loss of the scores.":
        "一个回答的分数是一个数；它对每个 token 的导数都相同：mean 归一化下 k = 1，sum 下 k = |o|，与分数的损失无关。",
    # MaxRL's advantage, DRO's policy term (parts/advantages/maxrl.py, parts/policy_terms/dro.py)
    "with one right answer in three, it gets (1 - p) / p = 2 (eps = 0)":
        "三个回答里只有一个正确时，它得到 (1 - p) / p = 2（eps = 0）",
    "MaxRL divides the centred reward by the group's mean (its success rate p): a hard question's right answer "
    "weighs 1/p, the gradient of log p rather than of p.":
        "MaxRL 把中心化的奖励除以组内均值（即成功率 p）：难题的正确回答权重为 1/p，跟随的是 log p 的梯度，而不是 p 的梯度。",
    "The square's derivative is -beta log rho: a token whose probability rose is pushed back in proportion to how "
    "far, with no clip and no zero.":
        "平方项的导数是 -beta log rho：概率上升了的 token 按上升的幅度被推回，不裁剪，也不会变成零。",
    # the 2026 field's losses (parts/sampler_corrections.py, policy_terms/{dppo,topr,kimi}.py, extra_terms.py,
    # advantages/reward_norm.py)
    "with pi_sampler = pi_old and C >= 1 the weight is 1: the GC is A r":
        "当 pi_sampler = pi_old 且 C >= 1 时权重为 1：GC 就是 A r",
    "a token whose rho_s is above the band's top gets GC 0":
        "rho_s 超过区间上界的 token 的 GC 为 0",
    "rho_s = pi_old / pi_sampler is fixed before the update, so TIS's min(rho_s, C) and MIS's band multiply the "
    "token's GC: GC = w_t m_t A r_t, the weight never differentiated.":
        "rho_s = pi_old / pi_sampler 在更新之前就已确定，所以 TIS 的 min(rho_s, C) 和 MIS 的区间掩码直接乘在 token 的 "
        "GC 上：GC = w_t m_t A r_t，权重本身从不求导。",
    "a token whose probability rose by more than delta gets GC 0 where A > 0":
        "当 A > 0 时，概率上升超过 delta 的 token 的 GC 为 0",
    "a token that rose from 0.5 to 0.9 (binary KL 0.51 > delta = 0.05) gets GC 0 where A > 0":
        "当 A > 0 时，概率从 0.5 升到 0.9 的 token（二元 KL 0.51 > delta = 0.05）的 GC 为 0",
    "a token whose probability fell keeps its GC min(r, C) A where A > 0":
        "当 A > 0 时，概率下降了的 token 保留它的 GC min(r, C) A",
    "a rare token may triple (r = 3) and keep its GC 3 A: PPO's clip at 1 + eps would zero it":
        "罕见 token 的概率可以变成三倍（r = 3）并保留 GC 3 A：PPO 在 1 + eps 处的裁剪会把它变成 0",
    "The trust region bounds a divergence of the token's probability, not the ratio p / q: a token of probability "
    "0.01 may triple and keep its GC, one of probability 0.5 may not move far. The kept tokens' weight min(r, C) is "
    "not differentiated, so the GC is min(r, C) A.":
        "信赖域限制的是 token 概率的散度，而不是比率 p / q：概率为 0.01 的 token 可以变成三倍并保留 GC，"
        "概率为 0.5 的 token 却不能移动太远。保留下来的 token 的权重 min(r, C) 不求导，所以 GC 是 min(r, C) A。",
    "a negative token the update made likelier (rho > 1) keeps the GC w- A, not w- rho A":
        "更新使其概率变大（rho > 1）的负样本 token 的 GC 是 w- A，而不是 w- rho A",
    "a positive token's GC w+ A does not read rho":
        "正样本 token 的 GC w+ A 不依赖 rho",
    "Positive rows: GC w+ A whatever pi_theta / pi_old (SFT on them); negative rows: w- min(rho, 1) A, the ratio "
    "tapered at 1 and not differentiated.":
        "正样本行：无论 pi_theta / pi_old 是多少，GC 都是 w+ A（相当于在它们上做 SFT）；负样本行：w- min(rho, 1) A，"
        "比率在 1 处截断，并且不求导。",
    "at pi_old = pi_theta the GC is |o_i| A_i, REINFORCE's with the token sum":
        "当 pi_old = pi_theta 时 GC 是 |o_i| A_i，即按 token 求和的 REINFORCE 的 GC",
    "The square of the response's log-ratio pulls every token of o_i back by tau times the summed log-ratio of the "
    "response, not by its own (ROLL's per-token square, verl's dro).":
        "整个回答的对数比的平方把 o_i 的每个 token 按 tau 乘以整个回答的对数比之和往回拉，"
        "而不是按各自的对数比（那是 ROLL 的逐 token 平方，即 verl 的 dro）。",
    "at pi_old = pi_theta the term's GC is 0":
        "当 pi_old = pi_theta 时该项的 GC 为 0",
    "The square pulls each token's log-ratio back toward pi_old with GC -2 tau log r, in the aggregation of the "
    "policy term (prime-rl sums both over the batch's tokens).":
        "平方项以 GC -2 tau log r 把每个 token 的对数比拉回 pi_old，聚合方式与策略项相同"
        "（prime-rl 把两者都在批次的所有 token 上求和）。",
    "a row with reward <= 0 gets no GC from the term":
        "奖励 <= 0 的行从该项得到的 GC 为 0",
    "The NLL is a function of the sampled tokens' log-probs, so its GC is exact: mu B |o_i| / N+ on the rows with "
    "reward > 0, N+ their tokens, whatever the policy term's aggregation.":
        "NLL 是采样 token 对数概率的函数，所以它的 GC 是精确的：在奖励 > 0 的行上为 mu B |o_i| / N+，"
        "N+ 是这些行的 token 数，与策略项的聚合方式无关。",
    "E_pi[GC grad log pi] = c grad H, the exact entropy's gradient (d/dz_{j})":
        "E_pi[GC grad log pi] = c grad H，即精确熵的梯度（d/dz_{j}）",
    "TRL's bonus is the entropy of the whole distribution at each prefix, no function of the sampled token's "
    "log-prob: its gradient is no GC. The importance-weighted surprisal -rho log pi estimates it, and its GC -c rho "
    "(log pi + 1) has TRL's gradient as its expectation over the sampled tokens, not on one batch.":
        "TRL 的熵奖励是每个前缀处整个分布的熵，不是采样 token 对数概率的函数：它的梯度不是一个 GC。"
        "重要性加权的惊奇度 -rho log pi 是它的估计，其 GC -c rho (log pi + 1) 在采样 token 上的期望等于 TRL 的梯度，"
        "但在单个批次上并不相等。",
    "a group whose two rewards are equal gets A = 0 under the group mean":
        "两个奖励相等的组在减去组内均值后 A = 0",
    "LitePPO subtracts each group's mean and divides by the batch's std: a question the policy nearly always solves "
    "keeps a small advantage instead of one its tiny group std blows up.":
        "LitePPO 减去组内均值、除以整个批次的 std：策略几乎总能答对的问题保留一个小的优势，"
        "而不会被它很小的组内 std 放大。",
    # a teacher as the reward: on-policy distillation, GKD on the sampled token; DFT
    # (parts/advantages/teacher.py, parts/policy_terms/gkd.py, parts/policy_terms/dft.py)
    "where the teacher gives token {t} the policy's probability its GC is 0":
        "教师给第 {t} 个 token 的概率与策略相同时，它的 GC 为 0",
    "The coefficient is the per-token reward of the reverse KL to the teacher, log pi_T - log pi_theta: a token the "
    "teacher likes more than the policy is pushed up, one it likes less down.":
        "系数就是到教师模型的反向 KL 的逐 token 奖励 log pi_T - log pi_theta：教师比策略更看好的 token 被推高，"
        "不那么看好的被压低。",
    "The divergence of two coins (the sampled token, any other) depends on the sampled token's probability alone, "
    "so its gradient is a coefficient on that token; GKD's divergence over the whole vocabulary is not.":
        "两点分布（采样的 token／其他任何 token）之间的散度只取决于采样 token 的概率，所以它的梯度是这个 token 上的"
        "系数；GKD 在整个词表上的散度则不是。",
    "a token the policy already gives probability 1 keeps SFT's GC, A":
        "策略已经给出概率 1 的 token 保留 SFT 的 GC，即 A",
    "Differentiating the weight too would give A pi (1 + log pi), which changes sign at pi = 1/e; DFT stops it: the "
    "GC is A pi, never negative for A > 0.":
        "如果连权重一起求导，会得到 A pi (1 + log pi)，它在 pi = 1/e 处变号；DFT 截断了这个梯度：GC 是 A pi，"
        "A > 0 时从不为负。",
}
