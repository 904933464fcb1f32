"""The test suite as a measuring instrument: plant realistic one-line bugs, one at a time, and see
whether the fast suite notices.

    python scripts/mutants.py             # every mutant; exit 1 if any survives or is stale
    python scripts/mutants.py -k gae,dpo  # only the mutants whose id contains one of these
    python scripts/mutants.py --check     # only check that every original text is still there, once

Each mutant is (id, file, exact original text, replacement, test files likely to kill it). The
repository's tracked and untracked-but-not-ignored files are copied into a temporary folder (the
real tree is never edited); for each mutant the original text must occur exactly once in its file,
else the mutant is reported as stale. The text is replaced, the likely test files run first
(`pytest -x`, the fast suite's markers), and only if they all pass the whole fast suite
(`-m "not slow and not browser"`);
then the file is restored. A mutant is killed when a test fails; it survives when the fast suite
passes. What survives names a test to write. Runs on demand (`make mutants`), not in CI.
"""

import argparse
import concurrent.futures
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKERS = ["-m", "not slow and not browser"]  # the fast suite's selection, for the likely tests too
FAST = [*MARKERS, "tests"]

P = "unified_rl/"
FEEDS, ORACLE = "tests/test_feeds.py", "tests/test_oracle.py"
EFFECTS = "tests/test_step_effects.py"
PPO_BY_HAND = FEEDS + "::test_ppo_returns_and_critic_targets_by_hand"
PAIRS = FEEDS + "::test_preference_pairs_put_a_right_answer_first_and_a_wrong_one_second"
EVAL = FEEDS + "::test_evaluation_reads_the_questions_it_is_given_and_decodes_greedily"


def REF(method):
    return f"tests/test_reference_step.py::test_one_update_equals_the_reference[{method}]"


def SOURCE(method):
    return f"{FEEDS}::test_each_source_samples_the_model_its_paper_names[{method}]"

MUTANTS = [
    # coefficients
    ("coef-grpo-kl-ratio-inverted", P + "parts/kl_terms.py", "        return beta * torch.expm1(x)\n",
     "        return beta * torch.expm1(-x)\n", [ORACLE + "::test_grpo_outcome"]),
    ("coef-dpo-sigmoid-argument", P + "parts/pair_losses/sigmoid.py", "a = beta * torch.sigmoid(-(beta * (s1 - s2)))",
     "a = beta * torch.sigmoid(beta * (s1 - s2))", [ORACLE + "::test_dpo"]),
    ("coef-clip-ends-swapped", P + "parts/policy_terms/vanilla.py",
     "inside = (ratio >= 1 - low) & (ratio <= 1 + high)", "inside = (ratio >= 1 - high) & (ratio <= 1 + low)",
     ["tests/test_coefficient_record.py"]),
    ("coef-kto-z0-not-clamped", P + "parts/pair_losses/kto.py", ".mean().clamp(min=0.0)", ".mean()",
     ["tests/test_preference_oracle.py::test_kto_reference_point_is_a_clamped_detached_mean"]),
    ("coef-orpo-sft-term-lost", P + "coefficients/preference.py", 'composed("logp", "odds_ratio", ("sft",))',
     'composed("logp", "odds_ratio")', ["tests/test_preference_oracle.py::test_orpo"]),
    ("coef-kto-undesirable-sign", P + "parts/pair_losses/kto.py",
     "torch.where(desirable > 0, lam_d * push, -lam_u * push)",
     "torch.where(desirable > 0, lam_d * push, lam_u * push)", ["tests/test_preference_oracle.py::test_kto"]),
    # TRL's DPO loss types and the two log-ratio conventions
    ("coef-dpo-loss-sum-without-length", P + "parts/pair_scores.py",
     'if norm == "mean" else (torch.ones_like(n), n)', 'if norm == "mean" else (torch.ones_like(n), torch.ones_like(n))',
     ["tests/test_dpo_losses.py"]),
    ("coef-dpo-loss-aot-unsorted", P + "parts/pair_losses/aot.py",
     "a = placed(aot_g(pol_sorted - ref_sorted, beta, eps), order)", "a = aot_g(v.p1 - v.p2 - (v.r1 - v.r2), beta, eps)",
     ["tests/test_dpo_losses.py"]),
    ("coef-kto-sum-without-length", P + "coefficients/preference.py", "(kto_push(sc.s, desirable, z0, beta, lam_d, lam_u) * k)",
     "kto_push(sc.s, desirable, z0, beta, lam_d, lam_u)", ["tests/test_dpo_losses.py"]),
    ("method-dpo-norm-ignored", P + "parts/pair_composition.py",
     'norm = getattr(hp, f"{self.prefix}_norm") if self.norms else self.norm', "norm = self.norm",
     ["tests/test_reference_step.py"]),
    # methods: how a coefficient meets its batch
    ("method-dpo-factor-2-lost", P + "parts/pair_composition.py", "return out(2 * (a * k)[:, None] * v.mask, v.mask)",
     "return out((a * k)[:, None] * v.mask, v.mask)", [REF("dpo")]),
    # advantages
    ("adv-gae-gamma-lam-swapped", P + "methods/hooks.py",
     "adv, _ = advantages.gae(rewards, values, m, lab.preset.rl.gamma, lab.preset.rl.lam)",
     "adv, _ = advantages.gae(rewards, values, m, lab.preset.rl.lam, lab.preset.rl.gamma)", [REF("ppo")]),
    ("adv-gae-lambda-dropped", P + "advantages.py",
     "next_adv = (delta + gamma * lam * next_adv * on_next) * mask[:, t]",
     "next_adv = (delta + gamma * next_adv * on_next) * mask[:, t]", [PPO_BY_HAND]),
    ("adv-critic-target-without-v", P + "methods/hooks.py", "return (adv + self.values(batch)) * batch.mask",
     "return adv * batch.mask", [PPO_BY_HAND]),
    ("adv-kl-reward-sign", P + "methods/hooks.py", "rewards = -lab.preset.rl.beta * estimate(v)",
     "rewards = lab.preset.rl.beta * estimate(v)", [PPO_BY_HAND]),
    ("adv-outcome-on-first-token", P + "methods/hooks.py", "rewards[torch.arange(len(batch)), last] +=",
     "rewards[torch.arange(len(batch)), 0] +=", [PPO_BY_HAND]),
    ("adv-group-std-population", P + "advantages.py", "/ (n - 1).clamp(min=1)", "/ n.clamp(min=1)",
     [REF("grpo")]),
    ("adv-leave-one-out-divisor", P + "advantages.py", "others = (r.sum(-1, keepdim=True) - r) / (group_size - 1)",
     "others = (r.sum(-1, keepdim=True) - r) / group_size", [REF("rloo")]),
    ("adv-process-sum-backwards", P + "advantages.py", "adv = norm.flip(-1).cumsum(-1).flip(-1)",
     "adv = norm.cumsum(-1)", [REF("grpo-process")]),
    ("adv-reinforce-pp-batch-baseline", P + "parts/advantages/reinforce_plus_plus.py",
     "r = r - r.view(-1, v.group_size).mean(-1).repeat_interleave(v.group_size)", "r = r - r.mean()",
     [REF("reinforce++")]),
    # KL
    ("kl-k3-sign", P + "kl/estimators.py", "return torch.expm1(x) - x", "return torch.expm1(x) + x",
     [ORACLE + "::test_grpo_outcome"]),
    ("kl-k3-gc-inverted", P + "kl/gc.py", "return torch.expm1(x)  #", "return torch.expm1(-x)  #",
     ["tests/test_kl_study.py"]),
    # wiring: the Step and pi_old
    ("wiring-logp-old-ref-swapped", P + "wiring.py",
     "return Step(prep.batch, prep.scores, logp, logp_old, prep.logp_ref, prep.adv, cfg, hp, prep.targets,",
     "return Step(prep.batch, prep.scores, logp, prep.logp_ref, logp_old, prep.adv, cfg, hp, prep.targets,", [REF("grpo")]),
    ("wiring-adv-targets-swapped", P + "wiring.py",
     "return Step(prep.batch, prep.scores, logp, logp_old, prep.logp_ref, prep.adv, cfg, hp, prep.targets,",
     "return Step(prep.batch, prep.scores, logp, logp_old, prep.logp_ref, prep.targets, cfg, hp, prep.adv,", [REF("ppo")]),
    ("wiring-ref-is-the-policy", P + "wiring.py", "logp_ref = policy_logp(lab.ref, batch,",
     "logp_ref = policy_logp(lab.policy, batch,", [REF("grpo")]),
    ("loop-pi-old-refreshed", P + "loop.py", "if logp_old is None:  # pi_old", "if True:  # pi_old", [REF("grpo")]),
    # data sources
    ("data-rft-samples-the-policy", P + "data/core.py",
     "return self.draw(lab.ref, self.questions(cfg.prompts_per_step), cfg.frozen_samples,",
     "return self.draw(lab.policy, self.questions(cfg.prompts_per_step), cfg.frozen_samples,", [SOURCE("rft")]),
    ("data-dpo-pairs-from-the-policy", P + "data/core.py",
     "return self.lab.ref, self.lab.preset.rl.frozen_samples",
     "return self.lab.policy, self.lab.preset.rl.frozen_samples", [SOURCE("dpo")]),
    ("data-chosen-from-the-wrong", P + "data/core.py", "chosen.append(r.texts[self.rng.choice(good)])",
     "chosen.append(r.texts[self.rng.choice(bad)])", [PAIRS]),
    ("data-pairs-order", P + "data/core.py", "return cat_rollouts([c, x], pad_token_id=lab.tokenizer.pad_token_id)",
     "return cat_rollouts([x, c], pad_token_id=lab.tokenizer.pad_token_id)", [PAIRS]),
    ("data-kto-not-mismatched", P + "data/preference.py", "shifted = texts[1:] + texts[:1]", "shifted = texts",
     ["tests/test_preference_methods.py"]),
    ("data-kto-samples-the-policy", P + "data/preference.py",
     "r = self.draw(lab.ref, problems, 1, temperature=cfg.temperature)",
     "r = self.draw(lab.policy, problems, 1, temperature=cfg.temperature)", [SOURCE("kto")]),
    ("data-dapo-keeps-equal-groups", P + "data/policy_gradient.py", "groups = ((right.amax(1) != right.amin(1))",
     "groups = ((right.amax(1) == right.amin(1))", ["tests/test_policy_methods.py"]),
    ("data-remax-baseline-sampled", P + "data/policy_gradient.py",
     "greedy = self.draw(lab.policy, problems, 1, greedy=True)",
     "greedy = self.draw(lab.policy, problems, 1, temperature=cfg.temperature)",
     ["tests/test_policy_methods.py"]),
    # rewards
    ("reward-rule-inverted", P + "rewards/core.py", "float(answer_of(p, t) == p.answer)",
     "float(answer_of(p, t) != p.answer)", ["tests/test_rewards.py"]),
    ("reward-noisy-flip-rate", P + "rewards/core.py",
     "flip = torch.rand(rewards.shape, generator=self.generator) < self.flip_prob",
     "flip = torch.rand(rewards.shape, generator=self.generator) > self.flip_prob", ["tests/test_rewards.py"]),
    ("reward-overlong-slope", P + "rewards/policy_gradient.py", "soft = ((max_len - cache_len) - lengths) / cache_len",
     "soft = ((max_len - cache_len) - lengths) / max_len", ["tests/test_policy_methods.py::test_overlong_penalty_and_reward"]),
    ("reward-parse-first-equals", P + "task.py", "answer = text.rsplit(ANSWER_SEP, 1)[1]",
     "answer = text.split(ANSWER_SEP, 1)[1]", ["tests/test_task.py", "tests/test_rewards.py"]),
    # sampling
    ("sample-temperature-ignored", P + "sampling.py", "tok = torch.multinomial((logits / temperature).softmax(-1), 1)",
     "tok = torch.multinomial(logits.softmax(-1), 1)",
     [FEEDS + "::test_sampling_draws_from_the_tempered_distribution"]),
    ("sample-eos-forgotten", P + "sampling.py", "done = done | torch.isin(tok, stops)", "done = torch.isin(tok, stops)",
     ["tests/test_sampling.py"]),
    ("sample-mask-off-by-one", P + "sampling.py", "((pos >= prompt_len) & (pos < prompt_len + lengths[:, None]))",
     "((pos > prompt_len) & (pos <= prompt_len + lengths[:, None]))", ["tests/test_sampling.py"]),
    # evaluation
    ("eval-pass-maj-other-questions", P + "evaluation.py",
     "sample_answers(policy, tokenizer, problems[:k_problems], samples, temperature,",
     "sample_answers(policy, tokenizer, problems[-k_problems:], samples, temperature,", [EVAL]),
    ("eval-greedy-sampled", P + "evaluation.py", "r = sample(policy, tokenizer, chunk, greedy=True)",
     "r = sample(policy, tokenizer, chunk)", [EVAL]),
    ("eval-on-training-questions", P + "loop.py", "lab.test_problems[: preset.eval_problems]",
     "lab.rl_problems[: preset.eval_problems]",
     [FEEDS + "::test_the_loop_evaluates_on_held_out_questions"]),
    # the optimizer and resume
    ("opt-clip-norm-10", P + "loop.py", "clip_grad_norm_(policy.parameters(), 1.0, error_if_nonfinite=True)",
     "clip_grad_norm_(policy.parameters(), 10.0, error_if_nonfinite=True)",
     [FEEDS + "::test_learning_rate_of_every_step_and_clipping"]),
    ("opt-warmup-off-by-one", P + "loop.py", "return min(1.0, (step + 1) / max(1, total // 10))",
     "return min(1.0, step / max(1, total // 10))",
     [FEEDS + "::test_learning_rate_of_every_step_and_clipping"]),
    ("resume-optimizer-forgotten", P + "runs.py", 'fsdp.load_optimizer_state(self.opt, state["optimizer"])', "pass",
     ["tests/test_resume.py", "tests/test_runs.py"]),
    ("resume-source-forgotten", P + "runs.py", 'self.source.set_state(state["source"])', "pass",
     ["tests/test_resume.py", "tests/test_runs.py"]),
    ("resume-rng-forgotten", P + "runs.py", 'set_rng_state(rng)\n', "\n",
     ["tests/test_resume.py", "tests/test_runs.py"]),
    ("resume-skips-a-step", P + "runs.py", 'self.step, self.rng = state["step"], rng',
     'self.step, self.rng = state["step"] + 1, rng', ["tests/test_resume.py", "tests/test_runs.py"]),
    # runs and summaries
    ("runs-last-metrics-row-lost", P + "runs.py",
     'f.writelines(json.dumps(row, allow_nan=False) + "\\n" for row in run.metrics)',
     'f.writelines(json.dumps(row, allow_nan=False) + "\\n" for row in run.metrics[:-1])',
     ["tests/test_run_records.py", "tests/test_runs.py"]),
    ("runs-overwrite-silently", P + "run_folder.py", "    if not overwrite:\n        raise ValueError(f\"{out} already holds a run",
     "    if False:\n        raise ValueError(f\"{out} already holds a run", ["tests/test_runs.py", "tests/test_cli.py"]),
    ("runs-state-may-run-code", P + "runs.py", 'state = torch.load(path, map_location="cpu", weights_only=True)',
     'state = torch.load(path, map_location="cpu", weights_only=False)', ["tests/test_runs.py"]),
    # the experiments' statistics
    ("stats-population-std", P + "experiments/measure.py", '"std": float(v.std(ddof=1))', '"std": float(v.std())',
     ["tests/test_experiments.py", "tests/test_provenance.py"]),
    ("stats-curves-population-std", P + "experiments/measure.py", "a.std(0, ddof=1)", "a.std(0)",
     ["tests/test_experiments.py"]),
    ("stats-verdict-spread", P + "experiments/verdicts.py",
     "half = t_quantile(1 - (1 - level) / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))",
     "half = t_quantile(1 - (1 - level) / 2, len(d) - 1) * d.std() / math.sqrt(len(d))",
     ["tests/test_experiments.py::test_verdict_words_follow_the_simultaneous_interval"]),
    ("stats-verdict-no-bonferroni", P + "experiments/verdicts.py", "level = 1 - ALPHA / m", "level = 1 - ALPHA",
     ["tests/test_experiments.py::test_verdict_words_follow_the_simultaneous_interval"]),
    # exercise checkers
    ("checker-detach-not-checked", P + "course/compare.py", "if not w.any() and g.any():", "if False:",
     ["tests/test_exercises.py"]),
    ("checker-grpo-solution-ratio", P + "course/ex/nb06_grpo.py",
     "kl_term = beta * (torch.exp(logp_ref - logp) - 1)  # (B, T)", "kl_term = beta * (torch.exp(logp - logp_ref) - 1)  # (B, T)",
     ["tests/test_exercises.py"]),
    ("checker-ppo-solution-lambda", P + "course/ex/nb05_ppo.py",
     "next_adv = (delta + gamma * lam * next_adv * on_next) * mask[:, t]",
     "next_adv = (delta + gamma * next_adv * on_next) * mask[:, t]", ["tests/test_exercises.py"]),
    # around the gradient: the optimizer, the logged metrics, the pairs, a setting the run ignores
    ("loop-adamw-weight-decay", P + "loop.py", "opt = torch.optim.AdamW(params, weight_decay=0.0)",
     "opt = torch.optim.AdamW(params)", [EFFECTS + "::test_the_optimizer_step_is_adamw_without_weight_decay"]),
    ("loop-kl-metric-swapped", P + "loop.py", "k3(step.logp.detach()[m], step.logp_ref[m])",
     "k3(step.logp_ref[m], step.logp.detach()[m])", [EFFECTS + "::test_logged_metrics_equal_their_definitions"]),
    ("pairs-another-questions-prompt", P + "data/core.py", "problems.append(r.problems[g * G])",
     "problems.append(r.problems[(g * G + G) % len(r)])", [EFFECTS]),
    ("clip-high-setting-ignored", P + "parts/policy_terms/vanilla.py",
     'low, high = clip_range(v.cfg.clip_eps, v.setting("clip_eps_high"))', "low, high = clip_range(v.cfg.clip_eps, 0.28)",
     [EFFECTS]),
    # parts: a part's page and the composition
    ("part-aggregation-group-for-batch", P + "parts/aggregations.py",
     '_register("token-mean", lambda v: token_mean_weight(v.mask, v.across)',
     '_register("token-mean", lambda v: group_token_mean_weight(v.mask, v.group_size)', ["tests/test_coefficient_record.py"]),
    ("part-mask-on-the-kl-term-too", P + "parts/composition.py",
     "        return aggregations.weight(v, v.setting(\"aggregation\", \"seq-mean-token-mean\")) * term * v.mask",
     "        return aggregations.weight(v, v.setting(\"aggregation\", \"seq-mean-token-mean\")) * term * keep",
     ["tests/test_coefficient_record.py"]),
    ("part-remax-rows-not-rescaled", P + "parts/composition.py", " * (v.full.shape[0] / int(keep.sum()))", "",
     [REF("remax")]),
    # the student build
    ("student-stub-kinds-swapped", P + "course/student.py", 'if cell_type != "code":\n        return MARKDOWN_STUB',
     'if cell_type != "code":\n        return CODE_STUB', ["tests/test_student.py"]),
    ("student-instructor-notes-copied", P + "course/student.py", 'INSTRUCTOR_ONLY = {"INSTRUCTORS.md"}',
     "INSTRUCTOR_ONLY = set()", ["tests/test_student.py"]),
]


def copy_tree(dst):
    """The repository's tracked and untracked-but-not-ignored files, copied into `dst`."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = os.path.join(ROOT, f)
        if os.path.isfile(src) and not os.path.islink(src):
            os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
            shutil.copy2(src, os.path.join(dst, f))


def stale(tree, mutant):
    """None if the original text occurs exactly once in its file, else why the mutant is stale."""
    _, path, original, replacement, tests = mutant
    if original == replacement:
        return "the replacement is the original"
    full = os.path.join(tree, path)
    if not os.path.isfile(full):
        return f"no file {path}"
    n = open(full).read().count(original)
    if n != 1:
        return f"the original text occurs {n} times in {path}"
    missing = [t for t in tests if not os.path.isfile(os.path.join(tree, t.split("::")[0]))]
    return f"no test file {missing[0]}" if missing else None


RUNNING = set()  # the pytest processes now running, to stop them if this script is stopped
STOP = []  # set when this script is stopped: no further mutant starts


def pytest(tree, args, timeout):
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env["UNIFIED_RL_CACHE"] = os.path.join(tree, ".mutant-cache")  # each copy trains its own SFT cache
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args]
    p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    RUNNING.add(p)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return "timeout", ""
    finally:
        RUNNING.discard(p)
    if STOP:
        return "stopped", ""
    lines = [line for line in out.splitlines() if line.startswith("FAILED") or line.startswith("ERROR")]
    return ("pass" if p.returncode == 0 else "fail"), (lines[0] if lines else out.strip()[-200:])


def run_one(tree, mutant, timeout, quick=False):
    """(result, by, seconds) of one mutant applied to `tree` and then undone."""
    name, path, original, replacement, tests = mutant
    if STOP:
        return "stopped", "", 0.0
    why = stale(tree, mutant)
    if why:
        return "STALE", why, 0.0
    full = os.path.join(tree, path)
    text = open(full).read()
    t0 = time.time()
    try:
        with open(full, "w") as f:
            f.write(text.replace(original, replacement))
        for stage in ([*MARKERS, *tests], FAST) if not quick else ([*MARKERS, *tests],):
            status, detail = pytest(tree, stage, timeout)
            if status == "stopped":
                return "stopped", "", time.time() - t0
            if status != "pass":
                return "killed", ("timeout: " if status == "timeout" else "") + detail, time.time() - t0
        return ("SURVIVED", "the fast suite passed", time.time() - t0) if not quick else \
            ("not-yet", "its likely tests passed", time.time() - t0)
    finally:
        with open(full, "w") as f:
            f.write(text)


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="comma-separated parts of mutant ids to run (default: all)")
    ap.add_argument("--skip", default="", help="comma-separated parts of mutant ids not to run")
    ap.add_argument("--check", action="store_true", help="only check that every mutant applies")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per pytest run")
    ap.add_argument("--quick", action="store_true", help="run only each mutant's likely tests (a survey)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="mutants run at once, each in its own copy")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupted)  # a kill still restores the copy and removes it
    wanted = [w for w in args.k.split(",") if w]
    skip = [w for w in args.skip.split(",") if w]
    chosen = [m for m in MUTANTS if (not wanted or any(w in m[0] for w in wanted)) and not any(w in m[0] for w in skip)]
    if len({m[0] for m in MUTANTS}) != len(MUTANTS):
        sys.exit("two mutants share an id")
    trees = [tempfile.mkdtemp(prefix="unified-rl-mutants-") for _ in range(max(1, args.jobs))]
    free = list(trees)

    def one(m):
        if args.check:
            why = stale(trees[0], m)
            return (m[0], "STALE" if why else "applies", why or "", 0.0)
        tree = free.pop()  # each worker holds one copy while its mutant runs
        try:
            return (m[0], *run_one(tree, m, args.timeout, args.quick))
        finally:
            free.append(tree)

    rows = []
    try:
        for tree in trees:
            copy_tree(tree)
        with concurrent.futures.ThreadPoolExecutor(len(trees)) as pool:
            try:
                for row in pool.map(one, chosen):
                    rows.append(row)
                    print(f"{row[0]:36s} {row[1]:9s} {row[3]:6.0f}s  {row[2][:110]}", flush=True)
            except KeyboardInterrupt:
                STOP.append(True)
                for p in list(RUNNING):
                    p.kill()
                pool.shutdown(wait=True, cancel_futures=True)
                print("stopped", flush=True)
    finally:
        for tree in trees:
            shutil.rmtree(tree, ignore_errors=True)  # only the copies this script made
    bad = [r for r in rows if r[1] in ("SURVIVED", "STALE", "not-yet")]
    killed = sum(r[1] == "killed" for r in rows)
    if not args.check:
        print(f"\n{killed}/{len(rows)} killed ({100 * killed / max(1, len(rows)):.0f} %); "
              f"{sum(r[1] == 'SURVIVED' for r in rows)} survived, {sum(r[1] == 'STALE' for r in rows)} stale")
    return 2 if STOP else 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
