"""Claim registry: every numbered statement of the three papers as data.

A :class:`Claim` holds the statement (text and LaTeX), its kind, the formula of
its main quantity with the paper's explicit constants (hidden constants are
keyword arguments defaulting to 1 and listed in ``hidden_constants``), the
exponent of each parameter for O/Omega statements, the regime in which it holds,
errata notes, and its checks (or an ``uncheckable_reason``).

Ids are ``<paper>/<kind>-<number>`` in lower case, e.g.
``robust-halfspaces/lemma-21``, ``agnostic-halfspaces/lemma-b.10``,
``decision-lists-winnow/theorem-12``. One subpackage per paper registers its claims
when :mod:`privbound.bounds` is imported (``bounds/robust_halfspaces/``,
``bounds/agnostic_halfspaces/``, ``bounds/decision_lists_winnow/``); this module imports none of them.

Every paper declares its claims, checks and mutants the same way: its ``claims.py`` calls
``register(Claim(...), mutants=MUTANTS)`` for each claim, and its ``mutants.py`` holds ``MUTANTS``,
the :class:`Mutant` s of each check keyed by ``(claim number, check name)`` (e.g.
``("lemma-21", "dp-accounting")``), and ``WITHOUT_MUTANTS``, each check that has none with the reason
(:data:`PRINTED_FORM` for the check of a printed statement that fails by design).
:class:`Mutant` (and its :func:`~privbound.mutation.patch`) live in :mod:`privbound.mutation`, shared
by every layer; it is re-exported here.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Callable, Mapping

from privbound.mutation import Mutant
from privbound.registry import Registry

__all__ = [
    "PAPERS",
    "ClaimKind",
    "Condition",
    "OutsideProofRegime",
    "Mutant",
    "MutantTable",
    "PRINTED_FORM",
    "Claim",
    "Check",
    "register",
    "unregister",
    "claims",
    "get",
    "evaluate",
]

PAPERS = ("robust-halfspaces", "agnostic-halfspaces", "decision-lists-winnow")
STATEMENT_KINDS = ("theorem", "lemma", "proposition", "claim", "fact", "observation", "corollary", "remark", "definition")
_ID_RE = re.compile(r"^(%s)/(%s)-[0-9a-z]+(\.[0-9a-z]+)*$" % ("|".join(PAPERS), "|".join(STATEMENT_KINDS)))


class ClaimKind(str, Enum):
    """What a claim asserts."""

    SAMPLE_COMPLEXITY_UPPER = "sample-complexity-upper"
    SAMPLE_COMPLEXITY_LOWER = "sample-complexity-lower"
    MISTAKE_BOUND = "mistake-bound"
    UPDATE_BOUND = "update-bound"
    PRIVACY = "privacy"
    PROBABILISTIC_LEMMA = "probabilistic-lemma"
    STRUCTURAL_IDENTITY = "structural-identity"
    ACCURACY = "accuracy"


@dataclass(frozen=True)
class Condition:
    """One condition of a claim's regime: ``holds(params) -> bool`` and its text.

    ``text`` is the condition as a reader would write it (``"0 < eta < 2 (1 - c) rho"``);
    it is quoted in the ``ValueError`` raised when the condition is violated. A condition with
    ``refuses=False`` marks a regime where the claim is still true but its proof (or the paper's
    argument) does not reach: :meth:`Claim.evaluate` then warns (:class:`OutsideProofRegime`)
    instead of refusing, and :meth:`Claim.regime_marks` lists it.
    """

    text: str
    holds: Callable[[Mapping[str, float]], bool]
    refuses: bool = True


class OutsideProofRegime(UserWarning):
    """A claim evaluated where it holds but its proof does not reach (a :class:`Condition` with ``refuses=False``)."""


ERRATUM_FORMS = ("", "printed", "reconstructed")
"""What the failing form of an erratum check is: none, the paper's printed text, or a reconstruction of it."""


@dataclass(frozen=True)
class Check:
    """A check of a claim.

    ``run(ctx: CheckContext) -> CheckResult`` does the work (see :mod:`privbound.bounds.checks`);
    ``kind`` is one of ``deterministic``, ``probabilistic``, ``scaling``, ``exact``.
    Probabilistic checks report a p-value so that :func:`bounds.run_checks` can apply
    Holm's correction across a run. ``mutants`` are broken versions of what the check
    guards, each of which it must be seen to fail on (:func:`privbound.bounds.checks.run_mutants`).
    ``erratum_form`` marks a check that demonstrates an erratum by failing on the erroneous form:
    ``"printed"`` when that form is the paper's text, ``"reconstructed"`` when the text does not print it
    and the form is the reading of what the text implies (the reading notes' [RECON] items).
    """

    name: str
    kind: str
    run: Callable[..., Any]
    description: str = ""
    mutants: tuple[Mutant, ...] = ()
    erratum_form: str = ""

    def __post_init__(self) -> None:
        if self.erratum_form not in ERRATUM_FORMS:
            raise ValueError(f"Check.erratum_form must be one of {ERRATUM_FORMS}, got {self.erratum_form!r}")
        if self.kind not in ("deterministic", "probabilistic", "scaling", "exact"):
            raise ValueError(
                "Check.kind must be one of 'deterministic', 'probabilistic', 'scaling', 'exact', "
                f"got {self.kind!r}"
            )


@dataclass(frozen=True)
class Claim:
    """One numbered statement of a paper, encoded as executable data."""

    id: str
    statement: str
    latex: str
    kind: ClaimKind
    source: str  # where in the paper, e.g. "Sec. 3.2, Lemma 3.4"
    formula: Callable[..., float] | None = None
    quantity: str = ""  # what formula() returns, e.g. "number of updates"
    hidden_constants: Mapping[str, float] = field(default_factory=dict)
    exponents: Mapping[str, float] = field(default_factory=dict)
    regime: tuple[Condition, ...] = ()
    errata: tuple[str, ...] = ()
    reconstructed: bool = False
    checks: tuple[Check, ...] = ()
    uncheckable_reason: str | None = None
    # A check not written yet, and what it needs (e.g. "needs a DP Batch Perceptron").
    # Counts as neither checked nor uncheckable.
    pending: str | None = None

    def __post_init__(self) -> None:
        if not _ID_RE.match(self.id):
            raise ValueError(
                f"claim id {self.id!r} must look like '<paper>/<kind>-<number>' with paper in "
                f"{PAPERS} and kind in {STATEMENT_KINDS}, lower case"
            )
        if not isinstance(self.kind, ClaimKind):
            object.__setattr__(self, "kind", ClaimKind(self.kind))
        if not self.checks and not self.uncheckable_reason and not self.pending:
            raise ValueError(
                f"claim {self.id!r} needs at least one check, an uncheckable_reason, or a pending note"
            )

    @property
    def paper(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def number(self) -> str:
        return self.id.split("/", 1)[1]

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the formula's parameters (hidden constants included)."""
        if self.formula is None:
            return ()
        return tuple(inspect.signature(self.formula).parameters)

    @property
    def required_parameters(self) -> tuple[str, ...]:
        if self.formula is None:
            return ()
        return tuple(
            name
            for name, p in inspect.signature(self.formula).parameters.items()
            if p.default is inspect.Parameter.empty
        )

    def evaluate(self, **params: float) -> float:
        """The claim's main quantity at ``params``; raises outside the regime."""
        if self.formula is None:
            raise ValueError(f"claim {self.id!r} has no formula to evaluate (it is {self.kind.value})")
        known = set(self.parameters)
        unknown = sorted(set(params) - known)
        if unknown:
            raise TypeError(
                f"{self.id}: unknown parameter(s) {unknown}; the formula takes {sorted(known)}"
            )
        missing = [p for p in self.required_parameters if p not in params]
        if missing:
            raise TypeError(f"{self.id}: missing parameter(s) {missing}")
        for name, value in params.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{self.id}: parameter {name} must be a real number, got {value!r}")
            if math.isnan(value):
                raise ValueError(f"{self.id}: parameter {name} is NaN")
        full = self._with_defaults(params)
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        for cond in self.regime:
            if cond.refuses and not cond.holds(full):
                raise ValueError(f"{self.id}: outside the regime, violated condition: {cond.text} (got {shown})")
        for text in self._marks(full):
            warnings.warn(OutsideProofRegime(f"{self.id}: {text} does not hold (got {shown}); the claim still does"),
                          stacklevel=2)
        return float(self.formula(**params))

    def _with_defaults(self, params: Mapping[str, float]) -> dict[str, float]:
        full = dict(params)
        if self.formula is not None:
            for name, p in inspect.signature(self.formula).parameters.items():
                if name not in full and p.default is not inspect.Parameter.empty:
                    full[name] = p.default
        return full

    def _marks(self, full: Mapping[str, float]) -> list[str]:
        return [cond.text for cond in self.regime if not cond.refuses and not cond.holds(full)]

    def regime_marks(self, **params: float) -> list[str]:
        """The texts of the non-refusing conditions (:class:`Condition`) that ``params`` violate."""
        return self._marks(self._with_defaults(params))


def _claim_hint(close: list[str], names: list[str]) -> str:
    return f"; did you mean {close}?" if close else ""


_REGISTRY: Registry[Claim] = Registry(
    Claim, name_of=lambda c: c.id, type_error="claim must be a privbound.bounds.registry.Claim",
    duplicate_error="claim {name!r} is already registered", missing_error="no claim {name!r} is registered{hint}",
    hint=_claim_hint)


MutantTable = Mapping[tuple[str, str], tuple[Mutant, ...]]
"""A paper's mutants: ``(claim number, check name) -> mutants`` (the claim number is its id without the paper)."""

PRINTED_FORM = "the paper's printed form: it fails on the real code by design (an erratum; its corrected twin has mutants)"
"""Why a check of a printed (erroneous) statement has no mutant, in a paper's ``WITHOUT_MUTANTS``."""


def register(claim: Claim, mutants: MutantTable | None = None) -> Claim:
    """Add ``claim`` to the registry, each check with its mutants from ``mutants``; an id may be registered once.

    Each paper registers every claim the same way, ``register(Claim(...), mutants=MUTANTS)``, with the table of
    its ``mutants.py``; a check gets the entry under ``(claim.number, check.name)`` (none when it has no entry).
    Returns the claim as registered.
    """
    if mutants and isinstance(claim, Claim):
        claim = replace(claim, checks=tuple(replace(c, mutants=c.mutants + tuple(mutants.get((claim.number, c.name), ())))
                                            for c in claim.checks))
    return _REGISTRY.register(claim)


def unregister(claim_id: str) -> None:
    """Remove a claim (used by tests that register deliberately false claims)."""
    if claim_id in _REGISTRY:
        del _REGISTRY[claim_id]


def claims(paper: str | None = None) -> list[Claim]:
    """All registered claims, sorted by id; optionally only those of one paper."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    return sorted(_REGISTRY.entries(None if paper is None else lambda c: c.paper == paper), key=lambda c: c.id)


def get(claim_id: str) -> Claim:
    """The claim with this id; ``KeyError`` with close matches otherwise."""
    return _REGISTRY.get(claim_id)


def evaluate(claim_id: str, **params: float) -> float:
    """Evaluate the main quantity of claim ``claim_id`` at ``params``."""
    return get(claim_id).evaluate(**params)
