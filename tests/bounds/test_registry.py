"""The claim registry and the check machinery (bounds/registry.py, bounds/checks.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from privbound import bounds
from privbound.bounds import checks as C
from privbound.bounds.registry import Check, Claim, ClaimKind, register, unregister


def test_registry_lists_the_three_papers_with_valid_ids():
    cs = bounds.claims()
    papers = {c.paper for c in cs}
    assert papers == {"robust-halfspaces", "agnostic-halfspaces", "decision-lists-winnow"}
    ids = [c.id for c in cs]
    assert ids == sorted(ids) and len(ids) == len(set(ids))


def test_every_claim_has_a_check_an_uncheckable_reason_or_a_pending_note():
    for c in bounds.claims():
        assert c.checks or c.uncheckable_reason or c.pending, c.id


def test_registry_count_matches_each_papers_numbered_statements():
    from privbound.bounds.agnostic_halfspaces import claims as agnostic_halfspaces
    from privbound.bounds.decision_lists_winnow import claims as decision_lists_winnow
    from privbound.bounds.robust_halfspaces import claims as robust_halfspaces

    for module, paper in ((robust_halfspaces, "robust-halfspaces"), (agnostic_halfspaces, "agnostic-halfspaces"),
                          (decision_lists_winnow, "decision-lists-winnow")):
        registered = {c.id for c in bounds.claims(paper)}
        listed = set(module.NUMBERED_STATEMENTS) | set(getattr(module, "UNNUMBERED_STATEMENTS", ()))
        assert registered == listed, paper


def test_hand_computed_reference_values():
    # ln(100) / (0.2*0.2 - 0.2^2/2) = 4.605170 / 0.02 = 230.2585 (Lemma 9 with c = 0).
    assert bounds.evaluate("decision-lists-winnow/lemma-9", d=100, rho=0.2, eta=0.2, c=0.0) == pytest.approx(
        math.log(100) / 0.02, rel=1e-12)
    # sqrt(2 T ln(1/delta_0)) eps_0 + 2 T eps_0^2 = sqrt(200 ln 1e6)*0.01 + 200e-4 = 0.5457 (Lemma 21).
    expected = math.sqrt(200 * math.log(1e6)) * 0.01 + 200 * 1e-4
    assert bounds.evaluate("robust-halfspaces/lemma-21", T=100, epsilon_0=0.01, delta_0=1e-6) == pytest.approx(
        expected, rel=1e-12)
    assert expected == pytest.approx(0.5457, abs=1e-4)


def test_evaluate_errors_name_the_problem():
    with pytest.raises(ValueError, match="0 < eta < 2 \\(1 - c\\) rho"):
        bounds.evaluate("decision-lists-winnow/lemma-9", d=100, rho=0.2, eta=0.5, c=0.0)
    with pytest.raises(TypeError, match="unknown parameter"):
        bounds.evaluate("decision-lists-winnow/lemma-9", d=100, rho=0.2, eta=0.2, c=0.0, zeta=1.0)
    with pytest.raises(TypeError, match="missing parameter"):
        bounds.evaluate("decision-lists-winnow/lemma-9", d=100)
    with pytest.raises(KeyError, match="did you mean"):
        bounds.get("decision-lists-winnow/lemma-99")


def test_claim_ids_are_validated():
    with pytest.raises(ValueError, match="must look like"):
        Claim(id="Robust/Lemma 1", statement="", latex="", kind=ClaimKind.ACCURACY, source="", uncheckable_reason="x")
    with pytest.raises(ValueError, match="needs at least one check"):
        Claim(id="robust-halfspaces/lemma-999", statement="", latex="", kind=ClaimKind.ACCURACY, source="")


# ------------------------------------------------------------ the machinery can fail


@pytest.fixture
def false_claims():
    """Deliberately false claims: the machinery must report them as failures."""

    def false_tail_check(ctx):
        # Claims P[Z > 1] <= 0.05 for a standard normal; the truth is 0.1587.
        n = ctx.trials(4000)
        z = ctx.rng.standard_normal(n)
        return C.failure_rate(int((z > 1).sum()), n, 0.05)

    def false_inequality(ctx):
        # Claims max |Z_i| <= 1 over 100 normals; false with probability 1 - 0.6827^100.
        return C.inequality(float(np.abs(ctx.rng.standard_normal(100)).max()), 1.0)

    def false_scaling(ctx):
        # y = x^2 exactly, claimed exponent 1.
        x = np.array([1.0, 2, 4, 8, 16])
        return C.scaling(x, x**2 * np.exp(ctx.rng.normal(0, 0.01, x.size)), 1.0)

    ids = []
    for i, (kind, fn) in enumerate((("probabilistic", false_tail_check), ("deterministic", false_inequality),
                                    ("scaling", false_scaling))):
        cid = f"decision-lists-winnow/fact-false{i}"
        register(Claim(id=cid, statement="deliberately false", latex="", kind=ClaimKind.PROBABILISTIC_LEMMA,
                       source="test fixture", checks=(Check("false", kind, fn),)))
        ids.append(cid)
    yield ids
    for cid in ids:
        unregister(cid)


def test_false_claims_are_reported_as_fail(false_claims):
    results = bounds.run_checks(false_claims, profile="smoke")
    assert [r.status for r in results] == ["fail", "fail", "fail"]
    tail = results[0]
    assert tail.observed > 0.1 and tail.p_value < 1e-10
    assert results[2].details["slope_ci"][0] > 1.5  # slope 2 recovered


def test_check_result_to_dict_is_json_safe(false_claims):
    r = bounds.check(false_claims[0], profile="smoke")
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["claim_id"] == false_claims[0] and d["seed"] == r.seed


def test_checks_are_reproducible_by_seed(false_claims):
    a = bounds.check(false_claims[0], profile="smoke")
    b = bounds.check(false_claims[0], profile="smoke")
    assert a.observed == b.observed and a.seed == b.seed


# ------------------------------------------------------------------------- Holm


def test_holm_controls_family_wise_error_by_simulation():
    # 20 true nulls with uniform p-values: P[any rejection] <= alpha = 0.05.
    # 2,000 families; under the claim the count is <= Binom(2000, 0.05); the check's
    # false-failure rate is P[Binom(2000, .05) > 128] < 1e-3.
    rng = np.random.default_rng(7)
    families = rng.uniform(size=(2000, 20))
    rejections = sum(any(C.holm(p, 0.05)) for p in families)
    assert rejections <= stats.binom.ppf(1 - 1e-3, 2000, 0.05)
    # ... and it is not trivially conservative: Bonferroni's rate is ~ 1 - (1 - .05/20)^20 = 0.0488.
    assert rejections >= stats.binom.ppf(1e-3, 2000, 0.045)


def test_holm_step_down_order():
    assert C.holm([0.001, 0.02, 0.04], 0.05) == [True, True, True]
    assert C.holm([0.001, 0.03, 0.04], 0.05) == [True, False, False]


def test_failure_rate_p_value_is_exact_binomial_tail():
    out = C.failure_rate(7, 100, 0.03)
    assert out.p_value == pytest.approx(stats.binom.sf(6, 100, 0.03), rel=1e-12)
    assert C.failure_rate(0, 100, 0.03).p_value == 1.0


def test_profiles_and_bad_profile():
    with pytest.raises(ValueError, match="profile must be one of"):
        bounds.run_checks(["decision-lists-winnow/lemma-3"], profile="huge")


def test_scaling_at_most_is_one_sided():
    # y = x^1.5 exactly (tiny noise): an O(x^2) upper bound holds (slope below 2) while a
    # two-sided test of exponent 2 fails; an O(x^1) claim is refuted either way.
    rng = np.random.default_rng(3)
    x = np.array([1.0, 2, 4, 8, 16, 32])
    y = x**1.5 * np.exp(rng.normal(0, 0.01, x.size))
    assert C.scaling(x, y, 2.0).status == "fail"
    up = C.scaling(x, y, 2.0, sense="at-most")
    assert up.status == "pass" and up.p_value > 0.5 and up.details["slope_ci"][1] == math.inf
    assert C.scaling(x, y, 1.0, sense="at-most").status == "fail"
    with pytest.raises(ValueError, match="sense"):
        C.scaling(x, y, 1.0, sense="below")


# ------------------------------------------------------------------------- mutants

_SCALE = {"factor": 1.0}


def _guarded_quantity() -> float:
    """What the fixture check guards: a 'learner' whose observation must stay <= 1."""
    return 0.6 * _SCALE["factor"]


def _check_guarded(ctx):
    return C.inequality(_guarded_quantity(), 1.0)


@pytest.fixture
def mutated_claim():
    import contextlib
    from unittest import mock

    from privbound.bounds.registry import Mutant

    def broken(factor):
        return lambda: mock.patch.dict(_SCALE, {"factor": factor})

    def crashing():
        @contextlib.contextmanager
        def cm():
            with mock.patch(f"{__name__}._guarded_quantity", side_effect=RuntimeError("boom")):
                yield
        return cm()

    cid = "decision-lists-winnow/fact-mutated"
    mutants = (Mutant("doubled", "the quantity doubled", broken(2.0)),
               Mutant("ten-percent", "the quantity 10% larger (too small to cross the bound)", broken(1.1)),
               Mutant("crash", "the check cannot run", crashing, power="none"))
    register(Claim(id=cid, statement="fixture", latex="", kind=ClaimKind.STRUCTURAL_IDENTITY, source="test fixture",
                   checks=(Check("guarded", "deterministic", _check_guarded, mutants=mutants),)))
    yield cid
    unregister(cid)


def test_run_mutants_reports_which_mutants_the_check_detects(mutated_claim):
    rows = {r.mutant: r for r in bounds.run_mutants([mutated_claim])}
    assert rows["doubled"].detected and rows["doubled"].observed == pytest.approx(1.2)
    assert not rows["ten-percent"].detected and rows["ten-percent"].status == "pass"
    assert not rows["crash"].detected and "boom" in rows["crash"].error and rows["crash"].power == "none"
    # the mutant is removed afterwards: the real code passes again
    assert bounds.check(mutated_claim, profile="smoke").status == "pass"
    json.dumps([r.to_dict() for r in rows.values()])


def test_mutant_profile_is_validated():
    from privbound.bounds.registry import Mutant

    with pytest.raises(ValueError, match="Mutant.profile must be"):
        Mutant("m", "d", lambda: None, profile="huge")


# ------------------------------------------------------------------------- one convention in every paper


@pytest.mark.parametrize("paper", ["robust-halfspaces", "agnostic-halfspaces", "decision-lists-winnow"])
def test_every_paper_declares_its_mutants_the_same_way(paper):
    # mutants.py holds MUTANTS and WITHOUT_MUTANTS keyed by (claim number, check name); register attaches
    # MUTANTS[key] to the check, and every check has mutants or a documented reason, never both.
    import importlib

    from privbound.mutation import Mutant

    module = importlib.import_module(f"privbound.bounds.{paper.replace('-', '_')}.mutants")
    assert set(module.__all__) >= {"MUTANTS", "WITHOUT_MUTANTS"}
    declared = {(c.number, k.name): k for c in bounds.claims(paper) for k in c.checks}
    assert set(module.MUTANTS) <= set(declared) and set(module.WITHOUT_MUTANTS) <= set(declared)
    assert not set(module.MUTANTS) & set(module.WITHOUT_MUTANTS)
    for key, chk in declared.items():
        assert chk.mutants == module.MUTANTS.get(key, ()), key
        assert bool(chk.mutants) != (key in module.WITHOUT_MUTANTS), key
        assert all(isinstance(m, Mutant) for m in chk.mutants), key
        assert len({m.name for m in chk.mutants}) == len(chk.mutants), key
    assert all(isinstance(reason, str) and reason for reason in module.WITHOUT_MUTANTS.values())


def test_register_attaches_the_mutants_of_each_check_by_claim_number():
    from privbound.bounds.registry import Mutant

    m = Mutant("m", "d", lambda: None)
    cid = "robust-halfspaces/fact-convention"
    claim = register(Claim(id=cid, statement="fixture", latex="", kind=ClaimKind.STRUCTURAL_IDENTITY,
                           source="test fixture", checks=(Check("a", "exact", _check_guarded),
                                                          Check("b", "exact", _check_guarded))),
                     mutants={("fact-convention", "a"): (m,), (cid, "b"): (m,)})
    try:
        assert bounds.get(cid) is claim and [k.mutants for k in claim.checks] == [(m,), ()]
    finally:
        unregister(cid)


def _check_reporting_an_erratum(ctx):
    out = C.inequality(2.0, 1.0, sense="<=")
    out.details["erratum"] = "fixture erratum"
    return out


@pytest.mark.parametrize("form", ["printed", "reconstructed"])
def test_an_erratum_check_carries_its_form_into_the_result(form):
    cid = "robust-halfspaces/fact-9999"
    register(Claim(id=cid, statement="fixture", latex="", kind=ClaimKind.STRUCTURAL_IDENTITY, source="test fixture",
                   checks=(Check("as-printed", "exact", _check_reporting_an_erratum, erratum_form=form),)))
    try:
        (result,) = bounds.run_checks([cid], profile="smoke")
        assert result.status == "fail" and result.details["erratum_form"] == form
    finally:
        unregister(cid)


def test_an_erratum_check_without_a_form_is_refused():
    cid = "robust-halfspaces/fact-9999"
    register(Claim(id=cid, statement="fixture", latex="", kind=ClaimKind.STRUCTURAL_IDENTITY, source="test fixture",
                   checks=(Check("as-printed", "exact", _check_reporting_an_erratum),)))
    try:
        with pytest.raises(TypeError, match="declares no erratum_form"):
            bounds.run_checks([cid], profile="smoke")
    finally:
        unregister(cid)
    with pytest.raises(ValueError, match="erratum_form must be one of"):
        Check("x", "exact", _check_reporting_an_erratum, erratum_form="paper")


def test_errata_whose_printed_form_is_not_in_the_text_are_labelled_reconstructed():
    # The reading notes mark these as reconstructions: Lemma 11's two-part accounting, Lemma 13's ln(T/beta),
    # Lemma 15's recipe without the deletion, and Theorem 12 (its statement is missing; the count is the proof's).
    forms = {(c.number, k.name): k.erratum_form for c in bounds.claims("decision-lists-winnow") for k in c.checks}
    assert forms[("lemma-11", "printed-two-part-grid")] == "reconstructed"
    assert forms[("lemma-13", "printed-m-pairs-union")] == "reconstructed"
    assert forms[("lemma-15", "printed-recipe-margin")] == "reconstructed"
    assert forms[("theorem-12", "window-count")] == "reconstructed"
    assert forms[("lemma-3", "printed-sign-utility")] == "printed"
