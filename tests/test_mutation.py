"""The one mutant type and its patch helpers (privbound.mutation): a patch installs the broken value only while
it is applied, built from the original read at that moment, and ``together`` installs several and removes all."""

from __future__ import annotations

import types

import pytest

from privbound.mutation import MUTANT_PROFILES, Mutant, patch, together


def _holder():
    return types.SimpleNamespace(scale=lambda x: 2 * x, constant=3)


def test_patch_replaces_the_attribute_by_make_of_the_original_while_applied():
    h = _holder()
    apply = patch(h, "scale", lambda scale: lambda x: scale(x) / 2)
    h.scale = lambda x: 10 * x  # the original is read when the mutant is applied, not when it is written
    with apply():
        assert h.scale(3) == 15
    assert h.scale(3) == 30


def test_patch_by_module_name_imports_the_module_when_applied():
    import privbound.mutation as module

    with patch("privbound.mutation", "MUTANT_PROFILES", lambda _: ("smoke",))():
        assert module.MUTANT_PROFILES == ("smoke",)
    assert module.MUTANT_PROFILES == MUTANT_PROFILES == ("smoke", "default", "full")
    missing = patch("privbound.no_such_module", "x", lambda _: 0)  # written without importing it
    with pytest.raises(ModuleNotFoundError):
        with missing():
            pass


def test_together_installs_every_patch_and_removes_them_all_even_on_error():
    h = _holder()
    apply = together(patch(h, "constant", lambda c: c + 1), patch(h, "scale", lambda _: lambda x: -x))
    with apply():
        assert (h.constant, h.scale(1)) == (4, -1)
    with pytest.raises(RuntimeError), apply():
        raise RuntimeError("the check crashed")
    assert (h.constant, h.scale(1)) == (3, 2)


def test_a_mutant_applies_through_its_apply_and_validates_its_profile():
    h = _holder()
    m = Mutant("constant-zero", "the constant set to 0", patch(h, "constant", lambda _: 0), profile="default")
    with m.apply():
        assert h.constant == 0
    assert h.constant == 3 and m.power == ""
    with pytest.raises(ValueError, match=r"Mutant.profile must be one of \('smoke', 'default', 'full'\), got 'huge'"):
        Mutant("m", "d", m.apply, profile="huge")
