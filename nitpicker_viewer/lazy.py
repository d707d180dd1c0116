"""The viewer's built-in plugins as entry points that import Flask and their views only when the viewer starts.

Every command loads every plugin; the blueprint modules import Flask, Jinja and Werkzeug (about 0.14 s of
each command's start, measured with ``python -X importtime``), which only ``viewer`` and ``dashboard`` use.
Each entry point names one of these objects; its hooks import the blueprint module on first call.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nitpicker_core import RegisterBlueprint, hookimpl
from nitpicker_core.types import MenuLink

if TYPE_CHECKING:
    from flask import Request


class ViewerPart:
    """One blueprint module of the viewer, registered by name and imported when the viewer asks for it."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.__name__ = module  # what `nitpicker plugins` and error messages show as the plugin's module

    def _target(self) -> Any:
        return importlib.import_module(self.module)

    @hookimpl
    def register_viewer_blueprints(self, register: RegisterBlueprint) -> None:
        self._target().register_viewer_blueprints(register)


class ViewerPartWithMenu(ViewerPart):
    @hookimpl
    def viewer_menu_links(self, request: Request) -> list[MenuLink]:
        return list(self._target().viewer_menu_links(request))


home = ViewerPartWithMenu("nitpicker_viewer.blueprints.home")
api = ViewerPartWithMenu("nitpicker_viewer.blueprints.api")
pages = ViewerPartWithMenu("nitpicker_viewer.blueprints.pages")
links = ViewerPartWithMenu("nitpicker_viewer.blueprints.links")
resources = ViewerPartWithMenu("nitpicker_viewer.blueprints.resources")
findings = ViewerPartWithMenu("nitpicker_viewer.blueprints.findings")
commits = ViewerPartWithMenu("nitpicker_viewer.blueprints.commits")
screenshots = ViewerPart("nitpicker_viewer.blueprints.screenshots")
