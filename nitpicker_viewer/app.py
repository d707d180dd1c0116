"""App factory: mounts every blueprint plugins register and shares one open archive with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, current_app, render_template

from nitpicker_core.archive import open_archive
from nitpicker_core.query import query_registry
from nitpicker_core.registry import Registry, collect
from nitpicker_core.types import MenuLink


def _blueprint_registry(pm: Any) -> Registry[tuple[Blueprint, str | None]]:
    def make(plugin: str, blueprint: Blueprint, url_prefix: str | None = None) -> tuple[Blueprint, str | None]:
        return blueprint, url_prefix

    return collect(pm, "register_viewer_blueprints", Registry("blueprint", lambda item: item[0].name), make)


def create_app(archive: str | Path, pm: Any) -> Flask:
    """Open ``archive`` read-only for the app's lifetime and mount the registered blueprints."""
    app = Flask(__name__)
    reader = open_archive(archive)
    app.extensions["nitpicker"] = {"pm": pm, "reader": reader, "queries": query_registry(pm),
                                   "name": Path(archive).name}
    for blueprint, prefix in _blueprint_registry(pm):
        app.register_blueprint(blueprint, url_prefix=prefix)
    app.teardown_appcontext(lambda exc: None)
    app.config["NITPICKER_CLOSE"] = reader.close
    return app


def viewer_state() -> dict[str, Any]:
    """What blueprints use: the plugin manager, the open archive reader and the query registry."""
    return current_app.extensions["nitpicker"]


def menu_links(request: Any) -> list[MenuLink]:
    pm = viewer_state()["pm"]
    links = [link for result in pm.hook.viewer_menu_links(request=request) for link in (result or [])]
    return sorted(links, key=lambda link: (link.order, link.label))


def render(template: str, **context: Any) -> str:
    from flask import request

    return render_template(template, menu=menu_links(request), archive=viewer_state()["name"], **context)
