"""`/`: the viewer's home page with the archive's commits and the menu plugins contribute."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from nitpicker_core import MenuLink, hookimpl
from nitpicker_viewer.app import render, viewer_state

home = Blueprint("home", __name__, template_folder="../templates")


@home.get("/")
def index() -> str:
    reader = viewer_state()["reader"]
    return render("home.html", commits=reader.commits(), head=reader.head())


@hookimpl
def register_viewer_blueprints(register: Any) -> None:
    register(home)


@hookimpl
def viewer_menu_links(request: Any) -> list[MenuLink]:
    return [MenuLink("/", "Home", order=0)]
