"""Built-in plugin `analyzer-checks`: every rule of every registered analyzer becomes a check."""

from __future__ import annotations

from nitpicker_core import Analyzer, Check, Register, hookimpl

from .rules import analyzer_checks, normalise

__all__ = ["analyzer_checks", "normalise"]


@hookimpl
def register_checks(register: Register[Check], analyzers: list[Analyzer]) -> None:
    # ``analyzers``: the registered analyzers, which the core passes to this hook (an opt-in argument)
    for check in analyzer_checks(analyzers):
        register(check)
