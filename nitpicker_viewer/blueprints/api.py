"""`/api/<query>`: the JSON API, generated from the query registry; errors never show absolute paths."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request

from nitpicker_core import MenuLink, NitpickerError, hookimpl
from nitpicker_core.query import describe, run_query
from nitpicker_viewer.app import viewer_state

api = Blueprint("api", __name__)


@api.get("/api/")
def index() -> Any:
    return jsonify(describe(viewer_state()["queries"]))


@api.get("/api/<name>")
def call(name: str) -> Any:
    state = viewer_state()
    params = {k: v for k, v in request.args.items() if k != "commit"}
    try:
        data = run_query(state["queries"], state["reader"], name, params, request.args.get("commit"))
    except NitpickerError as exc:
        status = 404 if "unknown query" in str(exc) else 400
        return jsonify({"error": str(exc)}), status
    return jsonify(data)


@hookimpl
def register_viewer_blueprints(register: Any) -> None:
    register(api)


@hookimpl
def viewer_menu_links(request: Any) -> list[MenuLink]:
    return [MenuLink("/api/", "API", order=900)]
