"""Reference steps of the policy-gradient methods TRL and verl ship, written from their papers (and from
TRL's loss and verl's core_algos where the paper leaves a detail to the code), for tests/test_reference_step.py.

Like the rest of REFERENCE they share nothing with the package: each is a plain loss over the log-probs
`c.lp` (with grad), `c.old` (pi_old), `c.ref`, the mask `c.m`, the rewards `c.r`, the run's `c.cfg` and
method settings `c.hp`, differentiated by autograd. Helpers are repeated here on purpose.
"""

import hashlib
import math

import torch


def seq_mean(x, m):
    return (x * m).sum(-1) / m.sum(-1)


def token_mean(x, m):
    return (x * m).sum() / m.sum()


def clipped(ratio, adv, low, high):
    return torch.minimum(ratio * adv, torch.clamp(ratio, 1 - low, 1 + high) * adv)


def normalised(values, eps=1e-6):
    """(v - mean) / (sample std + eps); all 0 when the values are equal."""
    n = len(values)
    mean = sum(values) / n
    if max(values) == min(values):
        return [0.0] * n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return [(v - mean) / (std + eps) for v in values]


def group_hat(r, G, eps=1e-6):
    out = []
    for g in range(len(r) // G):
        out += normalised(r[g * G:(g + 1) * G].tolist(), eps)
    return torch.tensor(out, dtype=torch.float64)


def k3(lp, ref):
    x = ref - lp
    return torch.exp(x) - x - 1


def grpo_loss(c, adv):
    """Eq 19 with eq 3's clip and the k3 penalty, each response averaged over its tokens."""
    eps = c.cfg.clip_eps
    return -seq_mean(clipped(torch.exp(c.lp - c.old), adv, eps, eps) - c.cfg.beta * k3(c.lp, c.ref), c.m).mean()


def ref_sapo(c):  # SAPO (arXiv 2511.20347): the soft gate 4/tau sigmoid(tau (r - 1)) on A, per response
    A = group_hat(c.r, c.G)[:, None] * c.m
    tau = torch.where(A > 0, torch.tensor(c.hp.sapo_tau_pos, dtype=torch.float64),
                      torch.tensor(c.hp.sapo_tau_neg, dtype=torch.float64))
    gate = torch.sigmoid(tau * (torch.exp(c.lp - c.old) - 1)) * 4 / tau
    return -seq_mean(gate * A, c.m).mean()


def ref_vespo(c):  # VESPO (arXiv 2602.10693): sg(e^lambda W^k e^(-lambda W)) A log pi, W = prod_t r
    A = group_hat(c.r, c.G)
    log_w = ((c.lp - c.old).detach() * c.m).sum(-1).clamp(math.log(1e-8), 20.0)
    pos = A >= 0
    k = torch.where(pos, c.hp.vespo_k_pos, c.hp.vespo_k_neg).double()
    lam = torch.where(pos, c.hp.vespo_lambda_pos, c.hp.vespo_lambda_neg).double()
    phi = torch.exp(lam + k * log_w - lam * torch.exp(log_w))
    return -token_mean((phi * A)[:, None] * c.lp, c.m)


def ref_luspo(c):  # LUSPO (arXiv 2602.05261): GSPO's clipped sequence ratio, each sequence times |o_i|
    s = torch.exp(seq_mean(c.lp - c.old, c.m))
    term = clipped(s, group_hat(c.r, c.G), c.hp.gspo_clip_eps, c.hp.gspo_clip_eps_high)
    return -(c.m.sum(-1) * term).mean()


def ref_gmpo(c):  # GMPO (arXiv 2507.20673): A (prod_t clipped r_t)^(1/|o|), clipped in log space by A's sign
    A = group_hat(c.r, c.G)
    lr = c.lp - c.old
    out = []
    for i in range(len(A)):
        on = c.m[i] > 0
        x = lr[i][on]
        if A[i] > 0:
            x = torch.minimum(x, torch.clamp(x, -c.hp.gmpo_clip_eps, c.hp.gmpo_clip_eps_high))
        elif A[i] < 0:
            x = torch.maximum(x, torch.clamp(x, -c.hp.gmpo_clip_eps, c.hp.gmpo_clip_eps_high))
        else:
            x = x * 0
        out.append(A[i] * torch.exp(x.mean()))
    return -torch.stack(out).mean()


def covariance(A, lp, m):
    on = m > 0
    return (A - A[on].mean()) * (lp.detach() - lp.detach()[on].mean())


def ref_clip_cov(c):  # Clip-Cov (arXiv 2505.22617): PPO's clip; no gradient on drawn high-covariance tokens
    A = group_hat(c.r, c.G)[:, None] * c.m
    r = torch.exp(c.lp - c.old)
    eps = c.cfg.clip_eps
    plain, clip = r * A, torch.clamp(r, 1 - eps, 1 + eps) * A
    cov = covariance(A, c.lp, c.m)
    ok = (cov > c.hp.clip_cov_lb) & (cov < c.hp.clip_cov_ub) & (c.m > 0) & ~(clip.detach() < plain.detach())
    candidates = [i for i, v in enumerate(ok.flatten().tolist()) if v]
    h = hashlib.sha256()  # the draw the package documents: a randperm seeded by the rewards and the lengths
    for x in (c.r, c.m.sum(-1)):
        h.update(x.detach().double().contiguous().numpy().tobytes())
    g = torch.Generator().manual_seed(int.from_bytes(h.digest()[:8], "little") % (2 ** 63))
    n = max(int(c.hp.clip_cov_ratio * c.m.sum().item()), 1)
    corr = torch.ones(c.m.numel(), dtype=torch.float64)
    for j in torch.randperm(len(candidates), generator=g)[:n].tolist():
        corr[candidates[j]] = 0
    return -token_mean(corr.view_as(c.m) * torch.minimum(plain, clip), c.m)


def ref_kl_cov(c):  # KL-Cov (arXiv 2505.22617): r A, minus coef |log r| on the top-covariance tokens
    A = group_hat(c.r, c.G)[:, None] * c.m
    cov = covariance(A, c.lp, c.m)
    n = max(int(c.hp.kl_cov_ratio * c.m.sum().item()), 1)
    flat = [(v, j) for j, (v, on) in enumerate(zip(cov.flatten().tolist(), c.m.flatten().tolist())) if on > 0]
    top = torch.zeros(c.m.numel(), dtype=torch.float64)
    for _, j in sorted(flat, reverse=True)[:n]:
        top[j] = 1
    lr = c.lp - c.old
    return -token_mean(torch.exp(lr) * A - c.hp.kl_cov_coef * top.view_as(c.m) * lr.abs(), c.m)


def ref_gpg(c):  # GPG (arXiv 2504.02546): alpha (r - mean) log pi, alpha = B / samples with A != 0
    r, G = c.r.tolist(), c.G
    A = [v - sum(r[i // G * G:(i // G + 1) * G]) / G for i, v in enumerate(r)]
    alpha = len(A) / max(sum(a != 0 for a in A), 1)
    return -token_mean(alpha * torch.tensor(A, dtype=torch.float64)[:, None] * c.lp, c.m)


def ref_opo(c):  # OPO (arXiv 2505.23585): r - sum |o| r / sum |o|, on the token sum; PPO's clip when reused
    n, r, G = c.m.sum(-1), c.r, c.G
    A = torch.cat([r[g:g + G] - (n[g:g + G] * r[g:g + G]).sum() / n[g:g + G].sum() for g in range(0, len(r), G)])
    eps = c.cfg.clip_eps
    return -(clipped(torch.exp(c.lp - c.old), A[:, None], eps, eps) * c.m).sum() / len(r)


def ref_grpo_passk(c):  # Pass@k training (arXiv 2503.19595): only each group's best answer, (r1 - r2) / std
    r, G = c.r.tolist(), c.G
    A = [0.0] * len(r)
    for g in range(0, len(r), G):
        group = r[g:g + G]
        best = group.index(max(group))
        second = sorted(group, reverse=True)[1]
        mean = sum(group) / G
        std = math.sqrt(sum((v - mean) ** 2 for v in group) / (G - 1))
        A[g + best] = (group[best] - second) / (std + 1e-6)
    return grpo_loss(c, torch.tensor(A, dtype=torch.float64)[:, None] * c.m)


def ref_gdpo(c):  # GDPO (arXiv 2601.05242): each reward normalised in its group, summed, normalised over the batch
    total = group_hat(c.r[:, 0], c.G) + group_hat(c.r[:, 1], c.G)
    A = torch.tensor(normalised(total.tolist()), dtype=torch.float64)
    return grpo_loss(c, A[:, None] * c.m)


def ref_dro(c):  # verl's dro (compute_policy_loss_dro): A log pi - beta/2 (log pi - log pi_old)^2, per response
    A = group_hat(c.r, c.G)[:, None]
    return -seq_mean(A * c.lp - c.hp.dro_beta / 2 * (c.lp - c.old) ** 2, c.m).mean()


def dppo_region(c, A, kind):  # DPPO's trust region (arXiv 2602.04879 eq 13-14; verl dppo_tv / dppo_kl at 1dda039b)
    p, q = torch.exp(c.lp).detach(), torch.exp(c.old)
    low, high = getattr(c.hp, f"dppo_{kind}_delta_low"), getattr(c.hp, f"dppo_{kind}_delta_high")
    if kind == "tv":
        up, down = p - q <= high, p - q >= -low
    else:
        kl = q * (c.old - torch.log(p)) + (1 - q) * torch.log((1 - q + 1e-8) / (1 - p + 1e-8))
        up, down = (kl <= high) | (p <= q), (kl <= low) | (p >= q)
    return torch.where(A > 0, up, down).double()


def ref_dppo(c, kind="tv"):  # DPPO as verl's example runs it: r - group mean, sg(r) A log pi in the region, sum / (B L)
    G, r = c.G, c.r
    A = torch.cat([r[g:g + G] - r[g:g + G].mean() for g in range(0, len(r), G)])[:, None] * c.m
    w = torch.exp(c.lp - c.old).detach()
    return -(w * dppo_region(c, A, kind) * A * c.lp * c.m).sum() / (len(r) * c.hp.max_len)


PEER_REFERENCE = {"dppo": ref_dppo, "dppo-kl": lambda c: ref_dppo(c, "kl"),
                  "dro": ref_dro, "sapo": ref_sapo, "vespo": ref_vespo, "luspo": ref_luspo, "gmpo": ref_gmpo,
                  "clip-cov": ref_clip_cov, "kl-cov": ref_kl_cov, "gpg": ref_gpg, "opo": ref_opo,
                  "grpo-passk": ref_grpo_passk, "gdpo": ref_gdpo}

# settings under which each update of the test batch exercises the method (the defaults are the papers')
PEER_OVERRIDES = {  # each far from the value tests/test_step_effects.py moves it to (default * 1.5 + 0.05)
    "luspo": {"gspo_clip_eps": 0.02, "gspo_clip_eps_high": 0.03},  # GSPO's 3e-4 clips every sequence
    "clip-cov": {"clip_cov_ratio": 0.02, "clip_cov_lb": 0.0, "clip_cov_ub": 0.3},  # some tokens among many
    "kl-cov": {"kl_cov_ratio": 0.2},
    "dro": {"dro_beta": 0.5},  # a pull the second update's log-ratios feel
    "dppo": {"dppo_tv_delta_low": 0.03, "dppo_tv_delta_high": 0.03},  # the second update moves some tokens past it
    "dppo-kl": {"dppo_kl_delta_low": 0.003, "dppo_kl_delta_high": 0.003},
}


def gdpo_scores(r, gen):
    """GDPO's two reward columns: the 0/1 rule and a length-like penalty in [-1, 0]."""
    return torch.stack([r, -torch.rand(len(r), generator=gen, dtype=torch.float64)], -1)


PEER_SCORES = {"gdpo": gdpo_scores}


# ---- a teacher as the reward, and SFT's relatives (each against TRL's own loss in tests/test_teachers.py). The
# teacher here is pi_ref shown the prompt (c.ref), as TEACHER_OVERRIDES ask of the rows whose default is another

def ref_opd(c):  # on-policy distillation (arXiv 2306.13649; TRL IW-OPD at gamma 0): sg(log pi_T - log pi) log pi
    return -token_mean((c.ref - c.lp).detach() * c.lp, c.m)


def ref_sdft(c):  # TRL SDFT's sampled-token loss (arXiv 2601.19897): each response's mean, then the batch's
    return -seq_mean((c.ref - c.lp).detach() * c.lp, c.m).mean()


def ref_gkd(c):  # GKD's generalized JSD (arXiv 2306.13649 eq 2-3) of the coins (p, 1 - p) and (q, 1 - q)
    b, keep = c.hp.gkd_beta, c.m.bool()
    p = torch.where(keep, c.lp, torch.full_like(c.lp, -1.0)).exp()  # off the response: any finite value
    q = torch.where(keep, c.ref, torch.full_like(c.ref, -1.0)).exp()

    def kl(x, y):
        return x * torch.log(x / y) + (1 - x) * torch.log((1 - x) / (1 - y))
    mix = (1 - b) * p + b * q
    d = kl(q, p) if b == 0 else kl(p, q) if b == 1 else b * kl(q, mix) + (1 - b) * kl(p, mix)
    return token_mean(d, c.m)


def ref_dft(c):  # DFT (arXiv 2508.05629 eq 8; TRL SFT loss_type="dft"): sg(pi) log pi over the batch's tokens
    return -token_mean(c.lp.exp().detach() * c.lp, c.m)


def ref_self_distill(c):  # SSD (arXiv 2604.01193): SFT on the policy's own samples, every one kept
    return -seq_mean(c.lp, c.m).mean()


PEER_REFERENCE.update({"opd": ref_opd, "gkd": ref_gkd, "sdft": ref_sdft, "opsd": ref_sdft, "dft": ref_dft,
                       "self-distill": ref_self_distill})
TEACHER_OVERRIDES = {"sdft": {"teacher_sees": "prompt"}, "opsd": {"teacher": "ref", "teacher_sees": "prompt"},
                     "opd": {"opd_gamma": 0.0}, "gkd": {"gkd_beta": 0.3}}
PEER_OVERRIDES.update(TEACHER_OVERRIDES)
