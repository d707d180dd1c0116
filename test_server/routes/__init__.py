"""Blueprints of the test site, one module per behaviour family.

Every module in this package that defines a ``bp`` blueprint is mounted; adding a family of fixture
pages means adding a module, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from flask import Blueprint


def _discover() -> list[Blueprint]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        blueprint = getattr(module, "bp", None)
        if isinstance(blueprint, Blueprint):
            found.append(blueprint)
    return found


BLUEPRINTS: list[Blueprint] = _discover()
