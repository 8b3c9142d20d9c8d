"""Smoke tests for the benchmark scripts: they run, print their table
and reach lines, and the exact single-threshold limit they report is right; and every
citation of benchmarks/README.md in the code, the tests and the Markdown files names a
section that exists.

The scripts are run as subprocesses with ``--quick`` (as a user would run them), and
the limit computation is imported from the script file to be checked against hand
derivations. All deterministic: no statistical error rate to state, except where noted.
"""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"  # tests/ is one level below the repository


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up in sys.modules
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tight():
    return _load("auditor_tightness")


def _case(tight, prefix: str):
    return next(c for c in tight.cases() if c.name.startswith(prefix))


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          timeout=120, cwd=BENCH.parent)


def test_auditor_tightness_quick_runs(tight, tmp_path, capsys):
    # In-process (the script's main(argv)) to save an interpreter start-up.
    csv = tmp_path / "tight.csv"
    assert tight.main(["--quick", "--seeds", "1", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    for name in ("Laplace eps=0.1", "Laplace eps=1", "RandResp eps=1", "Gaussian eps=1 delta=1e-5"):
        assert name in out
    assert "Targets:" in out
    # Six reach lines, each marked; quick sizes cannot judge the N-specific targets.
    marks = [line for line in out.splitlines() if line.strip().startswith("[")]
    assert len(marks) == 6
    assert sum("[n/a ]" in m for m in marks) == 4
    df = pd.read_csv(csv)
    assert len(df) == 4 * 2  # four mechanisms x two quick sizes
    assert set(df["n"]) == {1_000, 3_000}
    # Deterministic facts (not statistical): bounds are clipped at 0, and the limit is a
    # Clopper-Pearson bound at expected counts, strictly below ln(p_top/p_bot) <= eps.
    assert (df["lb_min"] >= 0).all() and (df["all_thr_min"] >= 0).all()
    assert (df["limit"] < df["true_eps"]).all()
    assert (df["limit_eval"] <= df["limit"]).all()


def test_trial_engine_quick_runs():
    proc = _run("trial_engine.py", "--quick")
    assert proc.returncode == 0, proc.stderr
    assert "outputs bit-identical: True" in proc.stdout
    assert "[PASS] n_jobs=1 and n_jobs=2 outputs bit-identical" in proc.stdout


def test_cli_latency_quick_runs():
    proc = _run("cli_latency.py", "--quick")
    assert proc.returncode == 0, proc.stderr
    for name in ("import numpy, scipy, sklearn (baseline)", "privbound --help", "privbound list", "privbound bounds list"):
        assert name in proc.stdout
    assert "privbound list within 1.5x of the baseline" in proc.stdout


def test_randomized_response_limit_matches_independent_clopper_pearson(tight):
    # Binary RR at eps = 1 on inputs 0 / 1 keeps the input w.p. q = e/(1+e). The best event is
    # {o = 1} with d1 on top (or its mirror {o = 0} with d0 on top, same numbers):
    # expected counts k_top = N q, k_bot = N (1 - q). Clopper-Pearson bounds from the beta
    # quantiles (scipy.stats.beta.ppf, not the betaincinv used by the code), each at 0.025:
    #   lo = Beta(k_top, N - k_top + 1).ppf(0.025),  hi = Beta(k_bot + 1, N - k_bot).ppf(0.975),
    # limit = ln(lo / hi).
    case = _case(tight, "RandResp")
    q = math.e / (1 + math.e)
    for n in (1_000, 10_000):
        k_top, k_bot = n * q, n * (1 - q)
        lo = stats.beta.ppf(0.025, k_top, n - k_top + 1)
        hi = stats.beta.ppf(0.975, k_bot + 1, n - k_bot)
        limit, t = tight.single_threshold_limit(case, n)
        assert t == 0.5
        assert limit == pytest.approx(math.log(lo / hi), rel=1e-9)
    # Normal-approximation sanity at N = 1e3: lo ~ q - 1.96 sqrt(q(1-q)/N) = 0.7036,
    # hi ~ 0.2964, ln(0.7036 / 0.2964) = 0.8645; exact CP is slightly wider, so a bit lower.
    assert 0.85 < tight.single_threshold_limit(case, 1_000)[0] < 0.8645


@pytest.mark.parametrize("name, eps", [("Laplace eps=1", 1.0), ("Laplace eps=0.1", 0.1)])
def test_laplace_limit_tends_to_eps(tight, name, eps):
    # For t >= 1 the event {x >= t} has P_d1 / P_d0 = e^{1/b} = e^eps exactly (b = 1/eps).
    # At N = 1e10 the event {x >= 1} has p_top = 1/2 and p_bot = e^-eps / 2 >= 0.18; the
    # Clopper-Pearson bounds at 0.025 each are ~ z sqrt((1-p)/(N p)) off in relative terms,
    # z = 1.96: 1.96 (sqrt(0.5/5e9) + sqrt(0.82/1.8e9)) = 6.1e-5 for eps = 1 (less for 0.1).
    # The limit is a max over events including that one, so eps - 2e-4 < limit, and it is a
    # CP bound at expected counts, so limit < ln(p_top/p_bot) <= eps.
    (case,) = [c for c in tight.cases() if c.name == name]
    assert case.epsilon == eps
    limit, _ = tight.single_threshold_limit(case, 10 ** 10)
    assert eps - 2e-4 < limit < eps
    # It increases with N (more trials, narrower intervals).
    lims = [tight.single_threshold_limit(case, n)[0] for n in (10 ** 4, 10 ** 5, 10 ** 6)]
    assert lims[0] < lims[1] < lims[2] < eps


def test_gaussian_limit_tends_to_eps_at_the_tight_event(tight):
    # Analytic Gaussian (Balle & Wang 2018, Thm 8): sigma is the smallest with
    # delta(eps) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) = 1e-5 at eps = 1, and that
    # sup is attained by the event {x >= t*} where the privacy loss (2x - 1)/(2 s^2) equals eps:
    # t* = 1/2 + eps s^2 (s ~ 3.73, t* ~ 14.4). There (P_d1 - delta)/P_d0 = e exactly, so the
    # limit -> 1 from below. At N = 1e12: p0 = Phi(-t*/s) ~ 5.6e-5, so the CP relative error on
    # p0 is ~ 1.96/sqrt(5.6e7) = 2.6e-4, and on p1 - delta (p1 = e p0 + delta ~ 1.6e-4) it is
    # 1.96 sqrt(p1/N)/(p1 - delta) ~ 1.6e-4: limit ~ 1 - 4.2e-4, so 1 - 1e-3 < limit < 1 (the
    # mechanism is (1, 1e-5)-DP, so never >= 1).
    case = _case(tight, "Gaussian")
    s = case.mechanism.sigma
    t_star = 0.5 + 1.0 * s * s
    limit, t = tight.single_threshold_limit(case, 10 ** 12)
    assert 1 - 1e-3 < limit < 1.0
    # The optimum is flat, and the CP penalty moves it a little; within 0.02 s of t*.
    assert abs(t - t_star) < 0.02 * s


def test_learner_tightness_runs(capsys):
    # In-process: two cheap targets at the smoke profile; the table has the claim, the tight value (the exact
    # privacy curve on the pair, by hand in tests/learners: sphere 0.9783, greedy-cover canary 0.6673), the
    # bound / tight column, and each target's source is listed.
    lt = _load("learner_tightness")
    assert lt.main(["--profiles", "smoke", "--targets", "sphere-em-d2", "greedy-cover-canary"]) == 0
    out = capsys.readouterr().out
    assert "smoke_bound/tight" in out and "claim/tight" in out
    assert "| sphere-em-d2 " in out and "0.9783" in out and "0.6673" in out
    assert "- sphere-em-d2: exact hockey-stick divergence" in out
    assert lt.markdown_table([["a", "bb"]], ["x", "y"]).splitlines() == ["| x | y  |", "|---|----|", "| a | bb |"]


# Citations of benchmarks/README.md: code and tests cite a section as "benchmarks/README.md, 'Section'",
# the Markdown files may link it as "(benchmarks/README.md#anchor)". Deterministic.
REPO = BENCH.parent
CITED_FOLDERS = ("audit", "benchmarks", "bounds", "learners", "privbound", "reports", "tests")
CITATION = re.compile(r"benchmarks/README\.md(?:, '([^']+)'|#([\w-]+))?")


def _headings(markdown: str) -> set[str]:
    """Heading texts of a Markdown file, outside fenced code."""
    found, fenced = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+?)\s*$", line)):
            found.add(m.group(1))
    return found


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than '-' dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def citation_problems(root: Path) -> list[str]:
    """Every citation of benchmarks/README.md under ``root`` that names no existing section, one line each
    (``path:line: what is wrong``); in Python files a citation must name its section."""
    readme = root / "benchmarks" / "README.md"
    headings = _headings(readme.read_text())
    anchors = {_anchor(h) for h in headings}
    files = [p for folder in CITED_FOLDERS for p in sorted((root / folder).rglob("*.py"))]
    files += sorted(root.glob("*.md")) + [readme]
    files = [p for p in files if p.resolve() != Path(__file__).resolve()]  # this file's examples are wrong on purpose
    problems = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(root)}:{number}"
            for m in CITATION.finditer(line):
                name, anchor = m.groups()
                if name is not None and name not in headings:
                    problems.append(f"{where}: no section '{name}'")
                elif anchor is not None and anchor not in anchors:
                    problems.append(f"{where}: no anchor #{anchor}")
                elif name is None and anchor is None and path.suffix == ".py":
                    problems.append(f"{where}: names no section")
            if path == readme:
                problems += [f"{where}: no anchor #{a}" for a in re.findall(r"\]\(#([\w-]+)\)", line)
                             if a not in anchors]
    return problems


def test_adaptive_summary_judges_each_miss_against_its_own_tolerance(capsys):
    # Two missed planted bugs with the same limit and exact epsilon, audited at tolerances 10% and 0: only the first
    # overspends within its tolerance.
    adaptive = _load("adaptive")
    row = dict(bug=True, seed=0, bound=0.9, claim=1.0, trials=10, seconds=0.1, flagged=False, stop="s", limit=1.05,
               exact=1.08)
    adaptive.summarise_a(pd.DataFrame([dict(row, mechanism="a", tolerance=0.1),
                                       dict(row, mechanism="b", tolerance=0.0)]), 1)
    out = capsys.readouterr().out
    assert "planted bugs flagged on 1 of 1 seeds: 0/2" in out
    assert "unseen by design): ['a']" in out and "worth finding): ['a']" in out


def test_every_citation_of_the_benchmarks_readme_names_an_existing_section():
    assert citation_problems(REPO) == []


def test_citation_check_reports_a_wrong_section_name_and_a_bare_citation(tmp_path):
    # A copy of the README beside one Python file with a good, a wrong and a bare citation, and a Markdown
    # file with a good and a wrong link: exactly the three wrong ones are reported.
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "README.md").write_text((BENCH / "README.md").read_text())
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "m.py").write_text(
        "# see benchmarks/README.md, 'Attack power'\n"
        "# see benchmarks/README.md, 'Attack powers'\n"
        "# see benchmarks/README.md\n")
    (tmp_path / "NOTES.md").write_text(
        "[a](benchmarks/README.md#attack-power) [b](benchmarks/README.md#attack-powers)\n")
    assert citation_problems(tmp_path) == [
        "audit/m.py:2: no section 'Attack powers'",
        "audit/m.py:3: names no section",
        "NOTES.md:1: no anchor #attack-powers",
    ]


def test_every_source_mutant_applies_to_the_current_code():
    # benchmarks/mutation_score.py refuses a mutant whose text does not occur exactly once in its file; a
    # refactor that moves the mutated line leaves the mutant stale, and the score would silently lose it.
    sys.path.insert(0, str(BENCH))
    try:
        from mutants import all_mutants
    finally:
        sys.path.remove(str(BENCH))
    root = BENCH.parent
    mutants = all_mutants()
    stale = [m.name for m in mutants if (root / m.path).read_text().count(m.old) != 1]
    assert mutants and stale == []
    assert len({m.name for m in mutants}) == len(mutants)


def test_exact_law_draws_each_datasets_own_law():
    # 2e5 draws per dataset from two laws over three outputs; each frequency is within 5 standard errors of its
    # own law's probability (a false failure has probability below 1e-5 per frequency).
    adaptive = _load("adaptive")
    law = adaptive.ExactLaw(np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]) * 2.0)  # p1 normalised on the way
    rng = np.random.default_rng(0)
    n = 200_000
    for data, p in ((0, law.p0), (1, law.p1)):
        freq = np.bincount(law.sample(data, rng, n), minlength=3) / n
        assert np.all(np.abs(freq - p) <= 5.0 * np.sqrt(p * (1 - p) / n))
    assert np.allclose(law.p1, [0.2, 0.3, 0.5])


def test_limits_by_budget_grow_with_the_budget_fall_with_the_confidence_and_stay_below_the_exact_epsilon():
    adaptive = _load("adaptive")
    name = "report-noisy-max:leak2"
    limits = adaptive.limits_by_budget([name], [10_000, 1_000_000], {"0.95": 0.95, "family": 0.999})
    low, high = limits.limit_over_claim_family.to_numpy(), limits["limit_over_claim_0.95"].to_numpy()
    epsilon, p0, p1 = next(law[3:] for law in adaptive.member_laws(2.0) if law[0] == name)
    assert list(limits.budget) == [10_000, 1_000_000]
    assert low[0] < low[1] and high[0] < high[1] and np.all(low < high)
    assert np.all(high < adaptive.pair_epsilon(p0, p1) / epsilon)


def test_poisson_ratio_test_has_size_alpha_at_the_null_boundary_and_its_power_summed_over_both_counts():
    # At mean_top = e^eps mean_bottom the randomised test rejects with probability alpha exactly (an unrandomised one
    # falls short of it; one judged at another theta_0 misses it). Off the boundary its power equals the sum over
    # both Poisson counts of the test's rejection probability, the test rebuilt from each sum's binomial law.
    adaptive = _load("adaptive")
    from scipy import stats

    for mean_bottom, epsilon, alpha in ((40.0, 1.0, 0.05), (900.0, 0.1, 0.001), (5400.0, 1.0, 0.05 / 48)):
        size = adaptive.poisson_ratio_test_power(math.exp(epsilon) * mean_bottom, mean_bottom, epsilon, alpha)
        assert abs(size - alpha) < 1e-9 * max(1.0, 1.0 / alpha)
    mean_top, mean_bottom, epsilon, alpha = 1.6 * math.e * 6.0, 6.0, 1.0, 0.05
    theta_0, k = math.e / (1.0 + math.e), np.arange(120)
    power = 0.0
    for m in range(2 * k.size - 1):
        law = stats.binom.pmf(np.arange(m + 1), m, theta_0)
        above = np.r_[np.cumsum(law[::-1])[::-1][1:], 0.0]  # P(K > j) under theta_0
        c = int(np.argmax(above <= alpha))
        reject = np.where(np.arange(m + 1) > c, 1.0, 0.0)
        reject[c] = (alpha - above[c]) / law[c]
        k_top = np.arange(m + 1)
        power += float(np.sum(stats.poisson.pmf(k_top, mean_top) * stats.poisson.pmf(m - k_top, mean_bottom) * reject))
    assert 0.2 < power < 0.95
    assert abs(adaptive.poisson_ratio_test_power(mean_top, mean_bottom, epsilon, alpha) - power) < 1e-9


def test_the_oracle_flags_a_leak_at_least_as_often_as_the_audits_own_test_of_its_event():
    # The 1.25x sparse-vector leak's one leaking pattern, known in advance, at 2e5 trials per side: the audit's
    # conditional test at 0.95 flags it on 2000 simulated runs at most as often as the oracle's ceiling (2.6 standard
    # errors above it fail: a false failure has probability below 0.5%). Its value is that of its best event, the
    # single leaking pattern, on the whole n, and the same with the datasets swapped.
    adaptive = _load("adaptive")
    from privbound.audit.statistics import event_rejects

    epsilon, p0, p1 = adaptive.family_laws()["sparse-vector:leak1.25"]
    n, runs = 200_000, 2000
    ceiling = adaptive.oracle_flag_probability(p0, p1, n, epsilon, 0.95)
    i = int(np.argmax(np.abs(np.log(p0) - np.log(p1))))
    rng = np.random.default_rng(11)
    k_top, k_bottom = rng.binomial(n, p0[i], runs), rng.binomial(n, p1[i], runs)
    audit = np.mean([event_rejects("conditional", a, n, b, n, epsilon=epsilon, delta=0.0, alpha=0.05)
                     for a, b in zip(k_top, k_bottom)])
    assert 0.05 < ceiling < 0.95
    assert audit <= ceiling + 2.6 * math.sqrt(ceiling * (1.0 - ceiling) / runs)
    assert adaptive.oracle_flag_probability(p0, p1, n, epsilon, 0.999) < ceiling
    assert ceiling == pytest.approx(adaptive.poisson_ratio_test_power(n * p0[i], n * p1[i], epsilon, 0.05), rel=1e-12)
    assert adaptive.oracle_flag_probability(p1, p0, n, epsilon, 0.95) == pytest.approx(ceiling, rel=1e-12)


def test_the_oracle_keeps_to_alpha_on_correct_mechanisms_and_finds_the_best_event_among_many():
    # The three correct families: at most alpha at 0.95, and alpha itself on the histogram, whose tail's ratio is its
    # claim's. Among the many events of the histogram's leak, the normal approximation's one best is the exact best.
    adaptive = _load("adaptive")
    laws = adaptive.family_laws()
    for name in ("sparse-vector", "report-noisy-max", "histogram"):
        epsilon, p0, p1 = laws[name]
        assert adaptive.oracle_flag_probability(p0, p1, 2_000_000, epsilon, 0.95) <= 0.05 + 1e-6
    epsilon, p0, p1 = laws["histogram"]
    assert adaptive.oracle_flag_probability(p0, p1, 2_000_000, epsilon, 0.95) > 0.05 - 1e-6
    epsilon, p0, p1 = laws["histogram:leak1.25"]
    one = adaptive.oracle_flag_probability(p0, p1, 10_000, epsilon, 0.95, candidates=1)
    assert 0.2 < one < 0.9
    assert abs(one - adaptive.oracle_flag_probability(p0, p1, 10_000, epsilon, 0.95, candidates=10_000)) < 1e-9
    # outputs nearly absent on one side do not crowd the best event (the sixth here) off the shortlist
    p0 = np.r_[0.0077, 0.0001, 0.0001, 0.0001, 0.0001, 0.2, 0.0]
    p1 = np.r_[1e-13, 2e-13, 3e-13, 4e-13, 5e-13, 0.2 / (2.0 * math.e), 0.0]
    p0[-1], p1[-1] = 1.0 - p0.sum(), 1.0 - p1.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        five = adaptive.oracle_flag_probability(p0, p1, 1000, 1.0, 0.95)
        every = adaptive.oracle_flag_probability(p0, p1, 1000, 1.0, 0.95, candidates=10_000)
    assert every > 0.99 and abs(five - every) < 1e-9


def test_the_limits_table_prints_each_confidences_ceiling_on_the_whole_budget_and_over_its_seeds():
    adaptive = _load("adaptive")
    name, budget = "sparse-vector:leak1.25", 300_000
    epsilon, p0, p1 = adaptive.family_laws()[name]
    table = adaptive.limits_by_budget([name], [budget], {"a": 0.9, "b": 0.99}, seeds=3)
    for label, confidence in (("a", 0.9), ("b", 0.99)):
        flag = adaptive.oracle_flag_probability(p0, p1, budget, epsilon, confidence)
        assert table[f"oracle_flags_{label}"].iloc[0] == flag
        assert table[f"oracle_flags_3_of_3_{label}"].iloc[0] == pytest.approx(flag ** 3)
    shifted = adaptive.sparse_vector_shifted_pairs(budget, {"b": 0.99}, seeds=3, below_counts=(8,), highs=(0.0,),
                                                   lows=(1.0,))
    assert shifted["oracle_flags_b"].iloc[0] == table["oracle_flags_b"].iloc[0]
    assert shifted["oracle_flags_3_of_3_b"].iloc[0] == pytest.approx(table["oracle_flags_b"].iloc[0] ** 3)
    with pytest.raises(ValueError, match="confidence must be in"):
        adaptive.oracle_flag_probability(p0, p1, budget, epsilon, 1.0)
    with pytest.raises(ValueError, match="n must be at least 1"):
        adaptive.oracle_flag_probability(p0, p1, 0, epsilon, 0.95)


def test_shifted_pairs_include_the_benchmarks_pair_with_its_ceiling():
    adaptive = _load("adaptive")
    table = adaptive.sparse_vector_shifted_pairs(200_000, {"0.95": 0.95}, below_counts=(8,), highs=(0.0, 1.0),
                                                 lows=(1.0,))
    epsilon, p0, p1 = adaptive.family_laws()["sparse-vector:leak1.25"]
    benchmark_pair = table[(table.high == 0.0) & (table.low == 1.0)].iloc[0]
    assert benchmark_pair.exact == pytest.approx(adaptive.pair_epsilon(p0, p1), rel=1e-9)
    assert benchmark_pair["oracle_flags_0.95"] == pytest.approx(
        adaptive.oracle_flag_probability(p0, p1, 200_000, epsilon, 0.95), rel=1e-9)
    assert benchmark_pair["oracle_flags_5_of_5_0.95"] == pytest.approx(benchmark_pair["oracle_flags_0.95"] ** 5)
    assert len(table) == 2 and table.exact.iloc[1] != table.exact.iloc[0]


@pytest.mark.parametrize("part", [["--parts", "F"], ["--parts", "A"], ["--limit-budgets", "1e4"],
                                  ["--svt-shifted-pairs"]])
def test_a_family_confidence_outside_zero_one_is_refused_by_name_before_any_work(part, capsys):
    adaptive = _load("adaptive")
    with pytest.raises(SystemExit):
        adaptive.main(part + ["--family-confidence", "1.5"])
    assert "--family-confidence must be in (0, 1), got 1.5" in capsys.readouterr().err


def test_fixed_share_black_box_selects_on_its_share_unless_a_split_is_given():
    adaptive = _load("adaptive")
    from privbound.audit.statistics import Split

    outputs = np.arange(10.0)
    assert adaptive.FixedShareBlackBox(share=0.3).selection_fraction(outputs) == 0.3
    assert adaptive.FixedShareBlackBox(share=0.3, strategy=Split(0.4)).selection_fraction(outputs) == 0.4


def test_composition_kinds_runs_and_one_kind_declared_or_not_is_the_same_bound(capsys):
    bench = _load("composition_kinds")
    assert bench.main(["--kinds", "1", "3", "--trials", "200"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["1", "3"]
    one = rows[0]
    assert one[1] == one[5]  # groups=range(1) and groups=None are the same single law
    assert all(0.0 < float(r[1]) < float(r[2]) for r in rows)  # below the exact epsilon of the K steps
