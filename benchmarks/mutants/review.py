"""Reviewer's source mutants (``rv-*``): one-line privacy bugs in the code that decides the learners' verdicts.

Written without reading the tests or the other mutant modules, as a reviewer hunting for blind spots would:
noise scales and budget splits of the learners, the exact laws and tight epsilons of their audit designs, the
estimators the tight verdicts rest on, and the nightly's verdict rules. Each description says why the change
is a bug.
"""

from __future__ import annotations

from . import SourceMutant

_MECH = "learners/mechanisms.py"
_ACC = "learners/accounting.py"
_WIN = "learners/decision_lists_winnow/winnow.py"
_DL = "learners/decision_lists_winnow/decision_lists.py"
_T_DLW = "audit/targets/decision_lists_winnow.py"
_PERC = "learners/robust_halfspaces/perceptron.py"
_SPHERE = "learners/robust_halfspaces/sphere.py"
_T_RH = "audit/targets/robust_halfspaces.py"
_AG_COMMON = "learners/agnostic_halfspaces/common.py"
_AG_REG = "learners/agnostic_halfspaces/regression.py"
_SGD = "learners/dpsgd/sgd.py"
_COMP = "audit/estimators/composition.py"
_WB = "audit/estimators/whitebox.py"
_STATS = "audit/statistics.py"
_REG = "audit/targets/registry.py"
_NIGHTLY = "reports/nightly.py"
_SCHEMA = "reports/schema.py"

MUTANTS = [
    # --- DP primitives (learners/mechanisms.py): sparse vector, exponential-mechanism sampler, subsampling
    SourceMutant(
        "rv-svt-query-noise-ignores-cutoff", _MECH,
        "return (1.0 if self.monotone else 2.0) * self.cutoff * self.sensitivity / (self.epsilon / 2.0)",
        "return (1.0 if self.monotone else 2.0) * self.sensitivity / (self.epsilon / 2.0)",
        "SparseVector's query noise Lap(2 s / eps2) whatever the cutoff c: with c > 1 the c positive answers each "
        "spend eps2 / c only if the query scale carries the factor c (Lyu, Su & Li Alg. 1); without it the "
        "mechanism is about c * eps2 / 2 + eps1 DP, not eps"),
    SourceMutant(
        "rv-em-sampler-half-dropped", _MECH,
        "logits = (self.epsilon / (2.0 * self.sensitivity)) * values",
        "logits = (self.epsilon / self.sensitivity) * values",
        "ExponentialMechanism's Gumbel-max sampler uses exp(eps q / s) while log_probabilities and the guarantee "
        "use exp(eps q / 2s): the released index is 2 eps-DP for two-sided score changes, and the sampler no "
        "longer draws from the law its density states"),
    SourceMutant(
        "rv-poisson-amplification-linearised", _MECH,
        "eps = math.log1p(self.rate * math.expm1(g.epsilon))",
        "eps = self.rate * g.epsilon",
        "PoissonSubsampled's guarantee q eps instead of ln(1 + q (e^eps - 1)) (Balle, Barthe & Gaboardi Thm 8): "
        "q eps is below the amplified epsilon for every eps > 0, so the claim understates the leak"),
    # --- accounting helpers (learners/accounting.py): the exact privacy curve behind several tight values
    SourceMutant(
        "rv-hockey-stick-one-direction", _ACC,
        "return float(max(np.maximum(0.0, p0 - e * p1).sum(), np.maximum(0.0, p1 - e * p0).sum()))",
        "return float(np.maximum(0.0, p0 - e * p1).sum())",
        "hockey_stick_delta takes only the d0-over-d1 direction: for an asymmetric pair (the greedy-cover, "
        "sphere and selection pairs) the exact epsilon ignores the reverse direction and understates the tight "
        "epsilon"),
    # --- DP-Winnow (learners/decision_lists_winnow/winnow.py): calibration, batched AboveThreshold, exact law
    SourceMutant(
        "rv-winnow-eta-ignores-m", _WIN,
        "eta = lemma11_eta(epsilon, delta, K, m)",
        "eta = lemma11_eta(epsilon, delta, K, 1)",
        "DPWinnow.from_privacy calibrates eta for ONE sample per update: Lemma 11's eta = eps/(8 sqrt(2 m K "
        "ln(2/delta))) composes the m K draws, so with m > 1 the calibrated learner spends about sqrt(m) times "
        "its draws' budget"),
    SourceMutant(
        "rv-winnow-batch-queries-on-mistakes", _WIN,
        "asked = (valid if query_every_round else am) & ~h",
        "asked = am & ~h",
        "the batched DP-Winnow asks AboveThreshold only on mistake rounds whatever query_every_round says: the "
        "presence of a query then depends on the label (the non-private planted bug), in the path every audit "
        "and check runs"),
    SourceMutant(
        "rv-winnow-shared-threshold-noise", _WIN,
        "st.Lhat[idx] = self.L + rng.laplace(0.0, AboveThreshold.noise_scales(self.epsilon_hat)[0], idx.size)",
        "st.Lhat[idx] = self.L + rng.laplace(0.0, AboveThreshold.noise_scales(self.epsilon_hat)[0])",
        "the runs that fire together share ONE threshold noise for their next AboveThreshold instance (size "
        "forgotten): each run's law is unchanged but the batched runs are no longer independent, so the "
        "trials an audit treats as i.i.d. are correlated"),
    SourceMutant(
        "rv-winnow-replay-sgn0-not-mistake", _WIN,
        "mist = ((tw @ X.T) * y[None, :] <= 0.0) & win",
        "mist = ((tw @ X.T) * y[None, :] < 0.0) & win",
        "the exact-law replay of the shadow weights treats a zero score as correct while the learner counts "
        "sgn(0) as a mistake: on the round-0 canary pair (built on sgn-0 mistakes) the white-box log-likelihood "
        "ratio and the K = 1 tight epsilon are those of another learner"),
    # --- DP-GreedyCover (learners/decision_lists_winnow/decision_lists.py): calibration and exact law
    SourceMutant(
        "rv-greedy-step-relation-typo", _DL,
        'f = greedy_cover_epsilon_replace if neighbouring == "replace-one" else greedy_cover_epsilon_add_remove',
        'f = greedy_cover_epsilon_replace if neighbouring == "replace" else greedy_cover_epsilon_add_remove',
        "greedy_cover_step_for_epsilon compares with 'replace' (the option is 'replace-one'), so every "
        "calibration uses the add/remove accounting: eps_step is too large for a replace-one claim (the "
        "eps_step/2 of the reverse direction is never paid)"),
    SourceMutant(
        "rv-greedy-orbit-multiplicity-dropped", _DL,
        "logits += np.log(unused)[:, None]",
        "logits += 0.0",
        "the orbit enumeration of DP-GreedyCover forgets that a group with u unused exchangeable features is "
        "picked u times as often: the class probabilities, hence the exact (tight) epsilon on the pair, are "
        "wrong whenever a group has more than one feature"),
    # --- audit design of decision lists / Winnow (audit/targets/decision_lists_winnow.py)
    SourceMutant(
        "rv-greedy-llr-wrong-labels", _T_DLW,
        "return greedy_cover_log_likelihood(P0, y0, order, bits, e) - greedy_cover_log_likelihood(P1, y1, order, bits, e)",
        "return greedy_cover_log_likelihood(P0, y0, order, bits, e) - greedy_cover_log_likelihood(P1, y0, order, bits, e)",
        "the white-box privacy loss of DP-GreedyCover evaluates d1's likelihood with d0's labels: on a label-flip "
        "pair (greedy-cover-canary, the one-run canary pair) the loss is identically 0, so the audit can never "
        "see a leak there"),
    # --- DP Batch Perceptron (learners/robust_halfspaces/perceptron.py): stopping test, accounting, tight value
    SourceMutant(
        "rv-perceptron-batch-laplace-rate", _PERC,
        "nu = rng.laplace(0.0, P.b, idx.size) if P.b > 0 else np.zeros(idx.size)",
        "nu = rng.laplace(0.0, 1.0 / P.b, idx.size) if P.b > 0 else np.zeros(idx.size)",
        "the batched stopping test draws Lap(1/b) (the rate for the scale): with Lemma 19's b in the hundreds "
        "the noisy count is essentially exact, so the stop reveals the count (fit still draws Lap(b))"),
    SourceMutant(
        "rv-perceptron-event-laplace-dropped", _PERC,
        "mu = math.hypot(1 / sigma, gdp_mu_of_pure_dp(1 / b))",
        "mu = 1 / sigma",
        "algorithm1_dp_event accounts only the Gaussian of each step: the stopping test's Lap(b) on the same "
        "subsample is not composed, so the free-parameter guarantee and the accountant epsilon understate "
        "Algorithm 1's epsilon"),
    SourceMutant(
        "rv-perceptron-pld-remove-mixture", _PERC,
        "remove_mass = (1.0 - p) * on_p + p * on_q",
        "remove_mass = on_p",
        "subsampled_laplace_gaussian_pld weighs the remove direction's losses under P instead of the mixture "
        "(1 - p) P + p Q: the loss is large exactly on Q's outputs, so the theory target's tight epsilon is "
        "understated"),
    SourceMutant(
        "rv-perceptron-tight-ignores-clip-norm", _PERC,
        'sens, where = P.clip_norm, "worst case over pairs"',
        'sens, where = 1.0, "worst case over pairs"',
        "tight_epsilon takes the sum's sensitivity as 1 whatever the clip norm R: with R = 2 the noise sigma R "
        "is read as 2 sigma multipliers, so the tight epsilon of what runs is understated"),
    # --- exponential mechanism on the sphere (learners/robust_halfspaces/sphere.py)
    SourceMutant(
        "rv-sphere-sampler-ignores-exponent-scale", _SPHERE,
        "logits = np.log(lengths) + scale * eps * q",
        "logits = np.log(lengths) + eps * q",
        "the angular sampler draws arcs with exp(eps q) while log_density (and the guarantee's analysis) use "
        "exp(eps q / 2): the released direction is 2x sharper than the law the audit and the tight value read"),
    # --- audit design of the robust halfspaces (audit/targets/robust_halfspaces.py)
    SourceMutant(
        "rv-transcript-llr-ignores-subsampling", _T_RH,
        "step = -np.logaddexp(np.log1p(-P.p), math.log(P.p) + x)",
        "step = -x",
        "the canary transcript's per-step ratio treats the canary as always sampled: the exact ratio of the "
        "Poisson mixture is -log(1 - p + p e^x); -x overstates every loss, so the white-box bound is not valid"),
    SourceMutant(
        "rv-theory-tight-undiluted", _T_RH,
        "eps, source = learner.tight_epsilon(_DELTA, count_copies=copies)",
        "eps, source = learner.tight_epsilon(_DELTA)",
        "the theory target's tight epsilon forgets the Binomial dilution of the count by d0's copies: it is the "
        "worst case over pairs, not this pair's, so the tight verdict judges the audit against a value the "
        "pair cannot reach"),
    # --- agnostic halfspaces (learners/agnostic_halfspaces/): exact curves of the private steps
    SourceMutant(
        "rv-gaussian-epsilon-no-composition", _AG_COMMON,
        'sens = shift * math.sqrt(check_int(count, "count", low=1))',
        "sens = shift",
        "gaussian_epsilon ignores count: K adaptive Gaussian releases moving by shift compose to sensitivity "
        "shift sqrt(K), so the DP-ERM's tight epsilon (and its worst case) is that of one step"),
    SourceMutant(
        "rv-alg1-tight-label-flip-factor", _AG_REG,
        "shift = (2 * np.linalg.norm(F[0]) if same_x else np.linalg.norm(F[0]) + np.linalg.norm(F[1])) / n0",
        "shift = (np.linalg.norm(F[0]) if same_x else np.linalg.norm(F[0]) + np.linalg.norm(F[1])) / n0",
        "alg1_pair_epsilon's step move for a flipped label is ||psi|| / n0: the subgradient term goes from "
        "+psi to -psi, a move of 2 ||psi|| / n0 (the replace-one factor), so the tight epsilon is understated"),
    # --- DP-SGD (learners/dpsgd/sgd.py)
    SourceMutant(
        "rv-dpsgd-batch-canaries-unclipped", _SGD,
        "total += weights[:, n:] @ G",
        "total += mask[:, n:] @ G",
        "the batched DP-SGD adds the gradient canaries sampled but not clipped: a canary of norm 2C moves the "
        "noisy sum by 2C while sigma is calibrated for C (fit clips them)"),
    # --- composition estimator (audit/estimators/composition.py): band, groups, round-off, grid, directions
    SourceMutant(
        "rv-comp-band-not-bonferroni", _COMP,
        "b = np.maximum.accumulate(stats.beta.ppf(alpha / ranks.size, ranks, x.size + 1 - ranks))",
        "b = np.maximum.accumulate(stats.beta.ppf(alpha, ranks, x.size + 1 - ranks))",
        "the band's Beta order-statistic bounds each at level alpha instead of alpha / K: the K ranks no longer "
        "hold simultaneously, so the stochastically-smaller law (and the bound) is not valid at the stated "
        "confidence"),
    SourceMutant(
        "rv-comp-group-level-not-split", _COMP,
        "level = alpha / len(side)",
        "level = alpha",
        "with several kinds of steps each kind's band runs at alpha instead of alpha / (number of kinds): the "
        "union bound over the kinds' bands is lost and a grouped audit overstates its confidence"),
    SourceMutant(
        "rv-comp-round-off-not-per-step", _COMP,
        "_ROUND_OFF * total_steps",
        "_ROUND_OFF",
        "the FFT round-off allowance is 1e-15 in all instead of 1e-15 per composed step: the measured error "
        "(1.3e-15 at T = 5000) exceeds it, so tiny composed probabilities can be overstated"),
    SourceMutant(
        "rv-comp-grid-rounds-nearest", _COMP,
        "idx = np.floor(v / disc).astype(np.int64)",
        "idx = np.round(v / disc).astype(np.int64)",
        "the per-step losses are rounded to the nearest grid point instead of down: up to half a grid step per "
        "step is added, so the composed law is no longer stochastically smaller than the band's"),
    # --- betting estimator (audit/estimators/whitebox.py): the averaged e-value and the pilot split
    SourceMutant(
        "rv-wb-pilot-average-not-halved", _WB,
        "return float(_lse([full(e), chosen(e)]) - math.log(2.0))",
        "return float(_lse([full(e), chosen(e)]))",
        "the full mixture and the pilot's test are summed, not averaged: the sum of two e-values is not an "
        "e-value (expectation up to 2), so every white-box bound is at confidence 1 - 2 alpha"),
    SourceMutant(
        "rv-wb-pilot-reused", _WB,
        "return v[:c] if first else v[c:]",
        "return v[:c] if first else v",
        "the pilot's outputs are also in the evaluation part: the bet chosen on them is run on them again, so "
        "the chosen test's e-value is not independent of its choice (data snooping)"),
    SourceMutant(
        "rv-wb-mixture-over-combinations-only", _WB,
        "return float(_lse(logs.ravel()) - math.log(logs.size))",
        "return float(_lse(logs.ravel()) - math.log(logs.shape[0]))",
        "the mixture over combinations x 40 bets is divided by the number of combinations only: the sum over "
        "bets is 40 times an e-value, so rejections happen far below the stated level"),
    # --- black-box statistics (audit/statistics.py)
    SourceMutant(
        "rv-split-evaluates-on-selection", _STATS,
        "sel_in, ev_in = s_in[:n_sel_in], s_in[n_sel_in:]",
        "sel_in, ev_in = s_in[:n_sel_in], s_in",
        "the d1 scores that chose the event are evaluated again: the event is no longer fixed independently of "
        "the counts the Clopper-Pearson bound uses, so the bound overstates its confidence"),
    # --- targets and their audits (audit/targets/registry.py)
    SourceMutant(
        "rv-audit-mutant-judged-by-claim", _REG,
        "tight_source=None if tight is None else f\"the correct code's: {tight.source}\",\n"
        "            tight_violation=tight is not None and bool(result.epsilon_lower_bound > tight.epsilon),",
        "tight_source=None if tight is None else f\"the correct code's: {tight.source}\",\n"
        "            tight_violation=tight is not None and bool(result.epsilon_lower_bound > result.epsilon_claimed),",
        "Target.audit_mutant flags a learner mutant only above the paper's claim, not above the correct code's "
        "tight epsilon: mutants that leak more than the code runs but less than a loose claim are 'missed' -- "
        "or, where the claim is loose, never caught"),
    SourceMutant(
        "rv-accountant-uses-target-relation", _REG,
        "eps = epsilon_of(event, delta if delta > 0 else 0.0, key, neighbouring=relation)",
        "eps = epsilon_of(event, delta if delta > 0 else 0.0, key, neighbouring=neighbouring)",
        "accountant_epsilon accounts a primitive's event (stated per unit of its query's sensitivity) under the "
        "target's relation: under replace-one the PLD accountant doubles the sensitivity again and the RDP one "
        "refuses, so the second claim is wrong or missing"),
    # --- nightly verdicts (reports/nightly.py, reports/schema.py)
    SourceMutant(
        "rv-tight-status-against-claim", _NIGHTLY,
        "    tight = result.epsilon_tight\n",
        "    tight = result.epsilon_claimed\n",
        "tight_status judges the bound against the paper's claim instead of the tight epsilon of what runs: an "
        "implementation leaking between the two reads 'holds', and 'inconclusive' is judged at half the claim"),
    SourceMutant(
        "rv-exit-ignores-tight-violations", _NIGHTLY,
        "bad = c.violated + c.tight_violated + c.missed",
        "bad = c.violated + c.missed",
        "main_status no longer counts tight violations: a night whose audits exceed the tight epsilon of what "
        "the code runs exits 0"),
    SourceMutant(
        "rv-audits-not-bonferroni", _NIGHTLY,
        "return 1.0 - (1.0 - family_confidence) / max(1, n_audits)",
        "return family_confidence",
        "every audit of the night runs at 95%: with ~60 audits a night of correct code reports a false "
        "violation far more often than the stated 5% family-wise rate"),
    SourceMutant(
        "rv-learner-mutant-flagged-by-claim", "audit/result.py",
        "        return self.tight_violation if self.epsilon_tight is not None else self.violation",
        "        return self.violation",
        "a learner mutant counts as caught only above the claim: the learner-mutant phase misses the bugs that "
        "stay under a loose claim but exceed what the correct code runs"),
    SourceMutant(
        "rv-float-unsafe-math-audit-expected-caught", _NIGHTLY,
        "return target.planted_bug or (float_audit and target.float_safe is False)",
        "return target.planted_bug or target.float_safe is False",
        "a float-unsafe implementation's MATHEMATICAL audit is expected to catch a violation like a planted bug: "
        "it reads 'missed' (and runs at planted-bug trials) although only its floating-point audit must catch it"),
    SourceMutant(
        "rv-schema-confidence-misread", _SCHEMA,
        'audit_confidence=d["audit_confidence"],',
        'audit_confidence=d["audit_family_confidence"],',
        "NightlyResults.from_dict reads the per-audit confidence from the family-wise field: a results.json read "
        "back reports 95% per audit instead of the Bonferroni level"),
]
