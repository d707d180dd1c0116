"""`/api/<query>`: the JSON API, generated from the query registry; errors never show absolute paths."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import Blueprint, jsonify, request

from nitpicker_core import MenuLink, RegisterBlueprint, hookimpl
from nitpicker_core.query import describe
from nitpicker_viewer.app import query, viewer_state

if TYPE_CHECKING:
    from flask import Request

api = Blueprint("api", __name__)


@api.get("/api/")
def index() -> Any:
    return jsonify(describe(viewer_state()["queries"]))


@api.get("/api/<name>")
def call(name: str) -> Any:
    # Errors (unknown query, bad parameter, unknown commit) become JSON through the app's error handlers.
    params = {key: value for key, value in request.args.items() if key != "commit"}
    return jsonify(query(name, **params))


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(api)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [MenuLink("/api/", "view.api", order=900)]
