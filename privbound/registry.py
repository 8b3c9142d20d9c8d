"""A registry of named entries: the one mechanism behind privbound's registries of audit targets,
membership targets and claims.

A :class:`Registry` holds entries of one type under unique names, in registration order, indexed by
name: :meth:`Registry.register` adds an entry (a type check, names unique), ``registry[name] = entry``
replaces one, :meth:`Registry.get` finds one by name with a hint of close
names (``difflib``) when there is none, :meth:`Registry.entries` lists them, optionally filtered.
Each registry words its own errors. Registering computes nothing.

This module imports no layer of privbound.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable, Generic, Iterator, TypeVar

__all__ = ["Registry", "close_names"]

T = TypeVar("T")
_NO_DEFAULT = object()


def close_names(name: str, names: list[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``names`` close to ``name`` (``difflib.get_close_matches``), closest first."""
    return difflib.get_close_matches(name, names, n=n)


class Registry(Generic[T]):
    """Entries of type ``entry_type`` under unique names (``name_of(entry)``), in registration order.

    Parameters
    ----------
    entry_type : type
        What may be registered.
    name_of : callable
        ``name_of(entry) -> str``, the entry's name.
    type_error : str
        Start of the ``TypeError`` for an entry of another type (", got <type>" follows).
    duplicate_error : str
        The ``ValueError`` for a name already registered, with ``{name!r}`` for the name.
    missing_error : str
        The ``KeyError`` of :meth:`get` for an unknown name, with ``{name!r}`` and ``{hint}``.
    hint : callable
        ``hint(close, names) -> str``: the ``{hint}`` from the close names (:func:`close_names`) and every name.
    """

    def __init__(self, entry_type: type, *, name_of: Callable[[T], str], type_error: str, duplicate_error: str,
                 missing_error: str, hint: Callable[[list[str], list[str]], str]) -> None:
        self.entry_type = entry_type
        self.name_of = name_of
        self.type_error = type_error
        self.duplicate_error = duplicate_error
        self.missing_error = missing_error
        self.hint = hint
        self._entries: dict[str, T] = {}

    def register(self, entry: T) -> T:
        """Add ``entry``; ``TypeError`` for another type, ``ValueError`` for a name already registered."""
        if not isinstance(entry, self.entry_type):
            raise TypeError(f"{self.type_error}, got {type(entry).__name__}")
        name = self.name_of(entry)
        if name in self._entries:
            raise ValueError(self.duplicate_error.format(name=name))
        self._entries[name] = entry
        return entry

    def get(self, name: str, default: Any = _NO_DEFAULT) -> T:
        """The entry called ``name``; ``default`` when given and there is none, else ``KeyError`` naming close
        names (or what the registry's hint says)."""
        try:
            return self._entries[name]
        except KeyError:
            if default is not _NO_DEFAULT:
                return default
            names = list(self._entries)
            hint = self.hint(close_names(name, names), names)
            raise KeyError(self.missing_error.format(name=name, hint=hint)) from None

    def entries(self, where: Callable[[T], bool] | None = None) -> list[T]:
        """The entries in registration order, only those for which ``where(entry)`` is true when given."""
        return [e for e in self._entries.values() if where is None or where(e)]

    def names(self) -> list[str]:
        """The names in registration order."""
        return list(self._entries)

    # indexing by name; assignment replaces an entry of the registry's type under its own name
    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __setitem__(self, name: str, entry: T) -> None:
        if not isinstance(entry, self.entry_type):
            raise TypeError(f"{self.type_error}, got {type(entry).__name__}")
        if self.name_of(entry) != name:
            raise ValueError(f"an entry named {self.name_of(entry)!r} cannot be stored as {name!r}")
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.entry_type.__name__}, {len(self)} entries)"
