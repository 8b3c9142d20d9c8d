"""Tests of privbound.registry: the Registry behind the target, membership-target and claim registries."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from privbound.registry import Registry, close_names


@dataclass(frozen=True)
class Item:
    name: str
    colour: str = "red"


def _registry() -> Registry[Item]:
    return Registry(Item, name_of=lambda i: i.name, type_error="item must be an Item",
                    duplicate_error="an item named {name!r} is already registered",
                    missing_error="no item named {name!r}{hint}",
                    hint=lambda close, names: f"; did you mean {close}?" if close else f"; known: {', '.join(names)}")


def test_entries_in_registration_order_and_filtered():
    reg = _registry()
    for name, colour in (("zeta", "red"), ("alpha", "blue"), ("mid", "red")):
        reg.register(Item(name, colour))
    assert reg.names() == ["zeta", "alpha", "mid"] == list(reg)
    assert [i.name for i in reg.entries()] == ["zeta", "alpha", "mid"]
    assert [i.name for i in reg.entries(lambda i: i.colour == "red")] == ["zeta", "mid"]
    assert len(reg) == 3 and "alpha" in reg and "beta" not in reg


def test_register_checks_type_and_unique_names():
    reg = _registry()
    first = reg.register(Item("a"))
    assert reg.get("a") is first is reg["a"]
    with pytest.raises(TypeError, match="^item must be an Item, got str$"):
        reg.register("a")
    with pytest.raises(ValueError, match="^an item named 'a' is already registered$"):
        reg.register(Item("a", "blue"))
    assert reg.get("a") is first


def test_get_hints_close_names_or_what_the_registry_says():
    reg = _registry()
    for name in ("laplace-eps1", "laplace-eps0.1", "gaussian"):
        reg.register(Item(name))
    with pytest.raises(KeyError, match=r"no item named 'laplace-eps'; did you mean \['laplace-eps1', 'laplace-eps0.1'\]\?"):
        reg.get("laplace-eps")
    with pytest.raises(KeyError, match="known: laplace-eps1, laplace-eps0.1, gaussian"):
        reg.get("zzz")
    assert reg.get("zzz", None) is None
    assert close_names("gausian", reg.names()) == ["gaussian"]


def test_assignment_replaces_an_entry_under_its_own_name_and_deletion_removes_it():
    reg = _registry()
    reg.register(Item("a"))
    reg["a"] = Item("a", "blue")
    assert reg.get("a").colour == "blue"
    with pytest.raises(ValueError, match="cannot be stored as 'b'"):
        reg["b"] = Item("a")
    with pytest.raises(TypeError, match="item must be an Item"):
        reg["a"] = "a"
    del reg["a"]
    assert reg.names() == []


def test_monkeypatch_setitem_restores_the_entry(monkeypatch):
    reg = _registry()
    original = reg.register(Item("a"))
    with monkeypatch.context() as m:
        m.setitem(reg, "a", Item("a", "blue"))
        assert reg.get("a").colour == "blue"
    assert reg.get("a") is original


def test_registry_module_imports_no_layer():
    tree = ast.parse(Path(__import__("privbound.registry").registry.__file__).read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("privbound")], imported


def test_the_three_registries_are_registries():
    from privbound.audit.targets import membership as membership_targets
    from privbound.audit.targets import registry as target_registry
    from privbound.bounds import registry as claim_registry

    for reg in (target_registry._TARGETS, claim_registry._REGISTRY, membership_targets.MEMBERSHIP_TARGETS):
        assert isinstance(reg, Registry) and len(reg) > 10
