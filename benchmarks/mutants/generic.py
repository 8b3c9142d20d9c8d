"""Mutants of the auditor (estimators, engine, attacks, one-run and white-box bounds, the
nightly's family-wise confidence) and of the DP primitives."""

from __future__ import annotations

from . import SourceMutant

_E = "audit/statistics.py"
_M = "learners/mechanisms.py"

MUTANTS: list[SourceMutant] = [
    # Clopper--Pearson and the epsilon bound from counts
    SourceMutant("est-cp-lower-at-alpha", _E,
                 "lo = clopper_pearson_lower(k_top, n_top, alpha / 2)", "lo = clopper_pearson_lower(k_top, n_top, alpha)",
                 "the two one-sided Clopper-Pearson bounds each at alpha instead of alpha/2 (union bound lost)"),
    SourceMutant("est-cp-lower-shape", _E,
                 "out = special.betaincinv(k, n - k + 1.0, alpha)", "out = special.betaincinv(k + 1.0, n - k, alpha)",
                 "Clopper-Pearson lower bound with the upper bound's beta parameters"),
    SourceMutant("est-delta-not-subtracted", _E,
                 "hi = clopper_pearson_upper(k_bottom, n_bottom, alpha / 2)\n    with np.errstate(divide=\"ignore\", "
                 "invalid=\"ignore\"):\n        val = np.log(lo - delta) - np.log(hi)",
                 "hi = clopper_pearson_upper(k_bottom, n_bottom, alpha / 2)\n    with np.errstate(divide=\"ignore\", "
                 "invalid=\"ignore\"):\n        val = np.log(lo) - np.log(hi)",
                 "(epsilon, delta) bound that forgets to subtract delta from the top probability"),
    SourceMutant("est-conditional-odds-ratio-as-rate-ratio", _E,
                 "            out = max(out, math.log(q) + math.log1p(-r) - math.log(r) - math.log1p(-q))",
                 "            out = max(out, eps)",
                 "conditional test that bounds the odds ratio by e^eps, as if it were the ratio of the probabilities"),
    SourceMutant("est-conditional-tail-excludes-observed", _E,
                 "    upper = support >= k_top\n", "    upper = support > k_top\n",
                 "conditional test's tail leaves out the observed count"),
    # multiplicity corrections
    SourceMutant("est-all-thresholds-bonferroni-dropped", _E,
                 "n_candidates=n_candidates, method=method, confidence=confidence)",
                 "n_candidates=1, method=method, confidence=confidence)",
                 "AllThresholds evaluates its chosen event without the Bonferroni correction"),
    SourceMutant("est-p-value-bonferroni-dropped", _E,
                 "delta=e.delta, alpha=alpha / e.n_candidates)", "delta=e.delta, alpha=alpha)",
                 "p_value ignores the estimate's multiplicity correction"),
    SourceMutant("est-small-space-half-correction", _E,
                 "    n_candidates = 2 * m\n", "    n_candidates = m\n",
                 "small declared output space corrected for half of its events"),
    # selection and evaluation
    SourceMutant("est-split-selects-on-evaluation", _E,
                 "pred, event = best_event(sel_in, sel_out, ev_in.size",
                 "pred, event = best_event(ev_in, ev_out, ev_in.size",
                 "Split chooses its event on the scores it then evaluates it on"),
    SourceMutant("est-event-orientation-swapped", _E,
                 "    return (k_in, n_in, k_out, n_out) if top == 1 else (k_out, n_out, k_in, n_in)",
                 "    return (k_in, n_in, k_out, n_out) if top == 0 else (k_out, n_out, k_in, n_in)",
                 "an event's counts put the wrong dataset on top"),
    SourceMutant("est-tie-coins-ignored", _E,
                 "return strict | ((s == self.threshold) & (np.asarray(coins) < self.tie_fraction))",
                 "return strict | (s == self.threshold)",
                 "a randomised event includes the whole atom instead of its tie fraction"),
    SourceMutant("core-evaluates-on-selection-trials", "audit/estimators/black_box.py",
                 "sel0, sel1, ev0, ev1 = out0[:n_sel0], out1[:n_sel1], out0[n_sel0:], out1[n_sel1:]",
                 "sel0, sel1, ev0, ev1 = out0[:n_sel0], out1[:n_sel1], out0, out1",
                 "the portfolio evaluates its chosen attack on trials that include the selection part"),
    SourceMutant("single-pattern-ranks-by-ratio", "audit/attacks/library.py",
                 "            z = (a1 / n1 - a0 / n0) / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))",
                 "            z = math.log((a1 + 0.5) / n1) - math.log((a0 + 0.5) / n0)",
                 "the single-pattern attack ranks patterns by their estimated ratio instead of the evidence"),
    SourceMutant("core-portfolio-picks-by-evidence", "audit/attacks/choice.py",
                 "best = max(scored, key=lambda c: c[1])", "best = max(scored, key=lambda c: c[3])",
                 "the portfolio ranks attacks by evidence of a difference instead of the bound they predict"),
    # engine
    SourceMutant("engine-same-stream-both-datasets", "audit/engine.py",
                 "for side, (data, child) in enumerate(zip((d0, d1), ss.spawn(2))):",
                 "for side, (data, child) in enumerate(zip((d0, d1), [ss, ss])):",
                 "both datasets' trials drawn from one random stream (coupled, not independent, samples)"),
    # one-run and white-box bounds
    SourceMutant("one-run-guess-accuracy-half-eps", "audit/one_run.py",
                 "q = float(special.expit(epsilon))", "q = float(special.expit(epsilon / 2))",
                 "one-run p-value with the guess accuracy of eps/2-DP"),
    SourceMutant("one-run-delta-term-halved", "audit/one_run.py",
                 "return float(min(beta + alpha * delta * 2 * m, 1.0))",
                 "return float(min(beta + alpha * delta * m, 1.0))",
                 "one-run p-value with half of the delta term"),
    SourceMutant("whitebox-target-level-squared", "audit/estimators/whitebox.py",
                 "    m = delta / scale\n    log_target = math.log(1.0 / (1.0 - confidence))",
                 "    m = delta / scale\n    log_target = 0.5 * math.log(1.0 / (1.0 - confidence))",
                 "white-box test rejects at capital sqrt(1/alpha) instead of 1/alpha"),
    SourceMutant("whitebox-pilot-in-evaluation", "audit/estimators/whitebox.py",
                 "    evaluation, _ = _build_sides(*eval_args, weight_bound, floor)",
                 "    evaluation, _ = _build_sides(*[None if a is None else np.concatenate([p, a])\n"
                 "                                   for p, a in zip(pilot_args, eval_args)], weight_bound, floor)",
                 "the test the pilot chose is also run on the pilot's own outputs"),
    SourceMutant("composition-band-without-bonferroni", "audit/estimators/composition.py",
                 "stats.beta.ppf(alpha / ranks.size, ranks", "stats.beta.ppf(alpha, ranks",
                 "the composition estimator's band holds each rank at alpha instead of alpha / K (no Bonferroni)"),
    SourceMutant("composition-plug-in-law", "audit/estimators/composition.py",
                 "return x[ranks - 1], np.diff(np.concatenate([[0.0], b]))",
                 "return x[ranks - 1], np.diff(np.concatenate([[0.0], ranks / x.size]))",
                 "the composition estimator composes the empirical law of the steps instead of its lower band"),
    SourceMutant("composition-directions-at-full-level", "audit/estimators/composition.py",
                 "alpha = (1.0 - confidence) / len(sides)", "alpha = 1.0 - confidence",
                 "both directions of the composition estimator at the full level (no Bonferroni over the two)"),
    # floating point
    SourceMutant("float-reachability-always-true", "audit/attacks/floating.py",
                 "ok = (c + (o - c)) == o", "ok = np.isfinite(o)",
                 "the floating-point attack's reachability feature says every output is reachable"),
    # the nightly's family-wise confidence
    SourceMutant("nightly-no-bonferroni", "reports/nightly.py",
                 "return 1.0 - (1.0 - family_confidence) / max(1, n_audits)",
                 "return 1.0 - (1.0 - family_confidence)",
                 "every audit of a night at the family's confidence (no Bonferroni)"),
    # the DP primitives
    SourceMutant("laplace-scale-halved", _M,
                 "    def scale(self) -> float:\n        return self.sensitivity / self.epsilon",
                 "    def scale(self) -> float:\n        return self.sensitivity / (2 * self.epsilon)",
                 "Laplace mechanism with half its noise scale"),
    SourceMutant("gaussian-sigma-halved", _M,
                 "return values + rng.normal(0.0, self.sigma, size=values.shape)",
                 "return values + rng.normal(0.0, self.sigma / 2, size=values.shape)",
                 "Gaussian mechanism releasing with half its calibrated sigma"),
    SourceMutant("rr-dp-event-noise-parameter", _M,
                 "p = self.k / (math.exp(self.epsilon) + self.k - 1)",
                 "p = self.k / (math.exp(2 * self.epsilon) + self.k - 1)",
                 "randomized response's DpEvent with the noise parameter of 2 eps"),
    SourceMutant("svt-threshold-scale-halved", _M,
                 "return self.sensitivity / (self.epsilon / 2.0)", "return self.sensitivity / self.epsilon",
                 "sparse vector's threshold noise at eps instead of eps/2"),
    SourceMutant("snapping-lattice-too-fine", _M,
                 "return 2.0 ** math.ceil(math.log2(1.0 / self.epsilon))",
                 "return 2.0 ** (math.ceil(math.log2(1.0 / self.epsilon)) - 40)",
                 "snapping mechanism rounds to a lattice far finer than its noise scale (float leak returns)"),
    SourceMutant("discrete-laplace-scale-halved", _M,
                 "y = (u + t * v) // s", "y = (u + t * v) // (2 * s)",
                 "exact discrete Laplace sampler drawing at half its scale"),
    # the neighbour search's relation
    SourceMutant("search-relation-ignores-radius", "audit/search.py",
                 "        return (self.clips and self.radius is None) or abs(b[i] - a[i]) <= self.step",
                 "        return True",
                 "the record domain's relation accepts a change of any size: the search may certify a pair its claim "
                 "does not cover"),
    # the sequential audit's stopping rule
    SourceMutant("seq-looks-read-evaluation", "audit/sequential.py",
                 "look = look_at_selection(outs.out0[:n_sel], outs.out1[:n_sel], estimator.candidates(outs.out0),",
                 "look = look_at_selection(outs.out0, outs.out1, estimator.candidates(outs.out0),",
                 "trials='auto' decides when to stop on all outputs so far, the evaluation part included: the "
                 "stopping rule peeks at the evidence the final bound is computed on (optional stopping)"),
    SourceMutant("seq-estimate-ignores-look-prefix", "audit/sequential.py",
                 "        at = (estimator if fixed_share and not read else\n",
                 "        at = (estimator if True else\n",
                 "trials='auto' estimates with the estimator's own split while its looks read a larger prefix: the "
                 "final bound evaluates on outputs the stopping rule has read"),
    SourceMutant("seq-unconfirmed-reuses-evaluation", "audit/sequential.py",
                 "            read, reason, evaluated, result = t_k, None, result, None",
                 "            reason, evaluated, result = None, result, None",
                 "trials='auto' goes on after an unconfirmed violation prediction but evaluates again on the outputs "
                 "that prediction's evaluation read (testing until significant)"),
    SourceMutant("seq-evaluations-share-no-confidence", "audit/sequential.py",
                 "            level = evaluation_confidence(confidence, evaluations + 1)",
                 "            level = evaluation_confidence(confidence, 1)",
                 "trials='auto' evaluates again after an unconfirmed prediction at the first evaluation's level: every "
                 "evaluation a test at that level, their false flags add up (no alpha spending)"),
    SourceMutant("seq-stops-on-evaluated-violation", "audit/sequential.py",
                 "        elif reason is not None:\n            break\n",
                 "        elif reason is not None:\n            break\n        else:\n"
                 "            result = estimate(outs, n_sel)\n            if result.violation:\n"
                 "                reason = \"violation predicted\"\n                break\n"
                 "            result = None\n",
                 "trials='auto' evaluates at every stage and stops at the first bound above the claim: sampling to a "
                 "foregone conclusion, the stop read off the evaluation part"),
    SourceMutant("seq-budget-prefix-early", "audit/sequential.py",
                 "        look = replace(look, budget_prefix=n_sel >= budget_selection)",
                 "        look = replace(look, budget_prefix=2 * n_sel >= budget_selection)",
                 "trials='auto' judges an unresolved event as the budget's own from half the budget's selection part "
                 "on: a guess at the budget's event taken for it"),
    SourceMutant("seq-reach-corner-optimism", "audit/statistics.py",
                 "    z_top, z_bot = joint_optimism(k_top, n_top, k_bottom, n_bottom, delta=delta, z=z)",
                 "    z_top, z_bot = z, z",
                 "trials='auto' judges an event's reach at the corner of its two rates' intervals: a futility rule "
                 "far more conservative than its stated error rate, spending trials on looks that could stop"),
    SourceMutant("seq-no-budget-look-stage", "audit/sequential.py",
                 "            schedule[:] = sorted(set(schedule) | {budget_look_trials(base, max_trials, first_trials, "
                 "chunk_size)})",
                 "            pass",
                 "trials='auto' has no stage where its looks first read the budget's selection part: the look whose "
                 "futility decision every later one repeats comes a growth step late"),
    SourceMutant("seq-budget-event-at-audit-pessimism", "audit/sequential.py",
                 "    if z_c <= OPTIMISM:\n        return z_c\n",
                 "    return z_c\n",
                 "trials='auto' predicts the budget's event with the audit's own pessimism on a small prefix: at a "
                 "high confidence the look judges a wide event the prefix resolves for the budget's rare one"),
]
