"""A local stand-in for the Google Sheets v4 API and Google's OAuth token endpoint, for real gspread.

It keeps spreadsheets in memory (cells as the CellData the client sent, so tests read back values, notes,
formats and grid properties), verifies service-account JWT assertions with the key's public half, issues
access tokens and refuses requests without one, and can answer the next batchUpdate calls with 429.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, jsonify, request
from werkzeug.serving import make_server

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_HYPERLINK = re.compile(r'^=HYPERLINK\("((?:[^"]|"")*)",\s*"((?:[^"]|"")*)"\)$')


@dataclass
class Store:
    public_key: str = ""
    refresh_token: str = ""
    tokens: set[str] = field(default_factory=set)
    books: dict[str, dict[str, Any]] = field(default_factory=dict)
    throttle: int = 0  # answer this many upcoming batchUpdate calls with 429 + Retry-After
    throttled: int = 0
    calls: list[str] = field(default_factory=list)
    token_grants: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_book(self, key: str, titles: tuple[str, ...] = ("Sheet1",)) -> None:
        self.books[key] = {"title": f"Book {key}", "sheets": []}
        for title in titles:
            self._add_sheet(self.books[key], {"title": title})

    def _add_sheet(self, book: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
        if any(s["properties"]["title"] == props["title"] for s in book["sheets"]):
            raise ValueError(f'A sheet with the name "{props["title"]}" already exists.')
        sheet_id = props.get("sheetId", max([s["properties"]["sheetId"] for s in book["sheets"]] + [0]) + 1)
        grid = {"rowCount": 1000, "columnCount": 26, **props.get("gridProperties", {})}
        index = min(props.get("index", len(book["sheets"])), len(book["sheets"]))  # the API inserts there
        properties = {
            "sheetId": sheet_id,
            "title": props["title"],
            "index": index,
            "sheetType": "GRID",
            "gridProperties": grid,
        }
        book["sheets"].insert(index, {"properties": properties, "rows": [], "formats": [], "widths": {}})
        _renumber(book)
        return properties

    def sheet(self, key: str, title: str) -> dict[str, Any]:
        return next(s for s in self.books[key]["sheets"] if s["properties"]["title"] == title)

    def titles(self, key: str) -> list[str]:
        return [s["properties"]["title"] for s in self.books[key]["sheets"]]


def display(cell: dict[str, Any]) -> str:
    """The formatted value the API would return for one stored CellData."""
    value = cell.get("userEnteredValue") or {}
    if "stringValue" in value:
        return value["stringValue"]
    if "numberValue" in value:
        number = value["numberValue"]
        return str(int(number)) if float(number).is_integer() else str(number)
    if "boolValue" in value:
        return "TRUE" if value["boolValue"] else "FALSE"
    if "formulaValue" in value:
        link = _HYPERLINK.match(value["formulaValue"])
        return link.group(2).replace('""', '"') if link else value["formulaValue"]
    return ""


def _error(code: int, status: str, message: str, headers: dict[str, str] | None = None) -> Any:
    response = jsonify({"error": {"code": code, "message": message, "status": status}})
    response.status_code = code
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _title_of(range_: str) -> str:
    title = range_.split("!", 1)[0]
    if title.startswith("'") and title.endswith("'"):
        title = title[1:-1].replace("''", "'")
    return title


def create_app(store: Store) -> Flask:
    app = Flask("sheets-standin")

    @app.post("/token")
    def token():  # type: ignore[no-untyped-def]
        from google.auth import jwt

        grant = request.form.get("grant_type", "")
        if grant == JWT_GRANT:
            try:
                # google-auth addresses the assertion to Google's token URI even when token_uri is elsewhere
                jwt.decode(
                    request.form["assertion"],
                    certs=store.public_key,
                    audience=[request.base_url, GOOGLE_TOKEN_URI],
                )
            except (ValueError, KeyError) as exc:
                return jsonify({"error": "invalid_grant", "error_description": str(exc)}), 400
        elif grant == "refresh_token":
            if not store.refresh_token or request.form.get("refresh_token") != store.refresh_token:
                return jsonify({"error": "invalid_grant", "error_description": "Bad refresh token"}), 400
        else:
            return jsonify({"error": "unsupported_grant_type"}), 400
        issued = "ya29." + secrets.token_urlsafe(16)
        with store.lock:
            store.tokens.add(issued)
            store.token_grants.append(grant)
        return jsonify({"access_token": issued, "expires_in": 3600, "token_type": "Bearer"})

    @app.before_request
    def authorize():  # type: ignore[no-untyped-def]
        if request.path == "/token":
            return None
        store.calls.append(f"{request.method} {request.path}")
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in store.tokens:
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        return None

    @app.get("/v4/spreadsheets/<key>")
    def metadata(key: str):  # type: ignore[no-untyped-def]
        book = store.books.get(key)
        if book is None:
            return _error(404, "NOT_FOUND", "Requested entity was not found.")
        return jsonify(
            {
                "spreadsheetId": key,
                "properties": {"title": book["title"]},
                "sheets": [{"properties": s["properties"]} for s in book["sheets"]],
            }
        )

    @app.route("/v4/spreadsheets/<key>:batchUpdate", methods=["POST"])
    def batch_update(key: str):  # type: ignore[no-untyped-def]
        book = store.books.get(key)
        if book is None:
            return _error(404, "NOT_FOUND", "Requested entity was not found.")
        with store.lock:
            if store.throttle > 0:
                store.throttle -= 1
                store.throttled += 1
                return _error(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "Quota exceeded for quota metric 'Write requests'.",
                    {"Retry-After": "1"},
                )
            replies = []
            try:
                for req in request.get_json()["requests"]:
                    replies.append(_apply(store, book, req))
            except (ValueError, KeyError, StopIteration) as exc:
                return _error(400, "INVALID_ARGUMENT", f"Invalid requests: {exc}")
        return jsonify({"spreadsheetId": key, "replies": replies})

    @app.route("/v4/spreadsheets/<key>/values/<path:range_>", methods=["GET", "PUT", "POST"])
    def values(key: str, range_: str):  # type: ignore[no-untyped-def]
        book = store.books.get(key)
        if book is None:
            return _error(404, "NOT_FOUND", "Requested entity was not found.")
        action = ""
        if range_.endswith((":append", ":clear")):
            range_, action = range_.rsplit(":", 1)
        try:
            sheet = store.sheet(key, _title_of(range_))
        except StopIteration:
            return _error(400, "INVALID_ARGUMENT", f"Unable to parse range: {range_}")
        with store.lock:
            if request.method == "GET":
                rows = [[display(c) for c in row] for row in sheet["rows"]]
                rows = [row[: max([i + 1 for i, v in enumerate(row) if v] + [0])] for row in rows]
                body: dict[str, Any] = {"range": range_, "majorDimension": "ROWS"}
                if any(rows):
                    body["values"] = rows
                return jsonify(body)
            if action == "clear":
                sheet["rows"] = []
                return jsonify({"spreadsheetId": key, "clearedRange": range_})
            data = [
                [{"userEnteredValue": {"stringValue": str(v)}} for v in row]
                for row in request.get_json().get("values", [])
            ]
            if action == "append":
                sheet["rows"].extend(data)
                return jsonify(
                    {"spreadsheetId": key, "updates": {"updatedRange": range_, "updatedRows": len(data)}}
                )
            sheet["rows"][: len(data)] = data
            return jsonify({"spreadsheetId": key, "updatedRange": range_, "updatedRows": len(data)})

    @app.post("/v4/spreadsheets/<key>/values:batchUpdate")
    def values_batch(key: str):  # type: ignore[no-untyped-def]
        book = store.books.get(key)
        if book is None:
            return _error(404, "NOT_FOUND", "Requested entity was not found.")
        with store.lock:
            for item in request.get_json().get("data", []):
                sheet = store.sheet(key, _title_of(item["range"]))
                rows = [
                    [{"userEnteredValue": {"stringValue": str(v)}} for v in row] for row in item["values"]
                ]
                sheet["rows"][: len(rows)] = rows
        return jsonify({"spreadsheetId": key, "totalUpdatedRows": 0})

    return app


def _renumber(book: dict[str, Any]) -> None:
    for i, s in enumerate(book["sheets"]):
        s["properties"]["index"] = i


def _by_id(book: dict[str, Any], sheet_id: int) -> dict[str, Any]:
    return next(s for s in book["sheets"] if s["properties"]["sheetId"] == sheet_id)


def _apply(store: Store, book: dict[str, Any], req: dict[str, Any]) -> dict[str, Any]:
    ((kind, body),) = req.items()
    if kind == "addSheet":
        return {"addSheet": {"properties": store._add_sheet(book, body["properties"])}}
    if kind == "deleteSheet":
        if len(book["sheets"]) == 1:
            raise ValueError("You can't remove all the sheets in a document.")
        book["sheets"].remove(_by_id(book, body["sheetId"]))
        _renumber(book)
        return {}
    if kind == "updateSheetProperties":
        props = _by_id(book, body["properties"]["sheetId"])["properties"]
        for name in body["fields"].split(","):
            if name == "title" and any(
                s["properties"]["title"] == body["properties"]["title"] for s in book["sheets"]
            ):
                raise ValueError("A sheet with that name already exists.")
            head, _, rest = name.partition(".")
            if rest:
                props[head][rest] = body["properties"][head][rest]
            else:
                props[head] = body["properties"][head]
        return {}
    if kind == "appendCells":
        sheet = _by_id(book, body["sheetId"])
        sheet["rows"].extend(row.get("values", []) for row in body["rows"])
        grid = sheet["properties"]["gridProperties"]
        grid["rowCount"] = max(grid["rowCount"], len(sheet["rows"]))
        return {}
    if kind == "updateCells":
        sheet = _by_id(book, body["start"]["sheetId"])
        start = body["start"].get("rowIndex", 0)
        rows = [row.get("values", []) for row in body["rows"]]
        while len(sheet["rows"]) < start + len(rows):
            sheet["rows"].append([])
        sheet["rows"][start : start + len(rows)] = rows
        return {}
    if kind == "repeatCell":
        _by_id(book, body["range"]["sheetId"])["formats"].append({"repeat": body})
        return {}
    if kind == "setBasicFilter":
        _by_id(book, body["filter"]["range"]["sheetId"])["filter"] = body["filter"]
        return {}
    if kind == "addConditionalFormatRule":
        rule = body["rule"]
        _by_id(book, rule["ranges"][0]["sheetId"])["formats"].append(rule)
        return {}
    if kind == "updateDimensionProperties":
        rng = body["range"]
        sheet = _by_id(book, rng["sheetId"])
        for i in range(rng["startIndex"], rng["endIndex"]):
            sheet["widths"][i] = body["properties"]["pixelSize"]
        return {}
    raise ValueError(f"request kind {kind!r} is not supported by the stand-in")


def serve(store: Store) -> tuple[Any, str]:
    """Start the stand-in on 127.0.0.1 in a daemon thread; returns the server and its base URL."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server("127.0.0.1", 0, create_app(store), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"
