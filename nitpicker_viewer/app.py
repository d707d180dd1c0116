"""App factory: mounts every blueprint plugins register and shares one open archive with them."""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from flask import (
    Flask,
    abort,
    current_app,
    jsonify,
    render_template,
    render_template_string,
    request,
)
from werkzeug.exceptions import HTTPException

from nitpicker_core.archive import live_pid, open_archive, stub_path
from nitpicker_core.errors import NitpickerError
from nitpicker_core.query import query_registry, run_query
from nitpicker_core.registries import blueprint_registry
from nitpicker_core.types import MenuLink
from nitpicker_viewer import guard, i18n

if TYPE_CHECKING:
    from flask import Request

    from nitpicker_core import NitpickerPluginManager

PAGE_SIZES = (25, 50, 100, 200, 500)
PAGE_HREF_KEY = "nitpicker.page_href"
CELL_LIST_LIMIT = 50  # URLs shown in one table cell (a duplicate group can hold thousands)
MAX_ARG_CHARS = 4096  # longer than any URL a browser sends in practice; longer values are refused
MAX_COMMIT = 2**63 - 1  # SQLite's largest integer
CACHE_ENTRIES = 256  # query answers kept for a finished archive; each is one page of rows at most
UNCACHED = frozenset({"page-html"})  # large and only ever read by the sandboxed frame
DERIVED_ENTRIES = 2  # values views build from many answers (the page → issues index); each may be large
T = TypeVar("T")
# the viewer's own pages: same-origin scripts and styles only, never inline script, never framed
CSP = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def create_app(archive: str | Path, pm: NitpickerPluginManager, host: str = "127.0.0.1") -> Flask:
    """Open ``archive`` read-only for the app's lifetime and mount the registered blueprints.

    ``host`` is the address the server binds: besides the loopback names, the only Host it answers.
    """
    app = Flask(__name__)
    guard.install(app, host, CSP)
    app.before_request(check_arguments)
    app.before_request(reopen_if_rewritten)
    reader = open_archive(archive)
    app.extensions["nitpicker"] = {
        "pm": pm,
        "reader": reader,
        "archive": Path(archive),
        "file": _file_identity(Path(archive)),
        "queries": query_registry(pm),
        "name": Path(archive).name,
        "lock": threading.Lock(),
        "cache": OrderedDict(),
        "derived": OrderedDict(),
        "immutable": reader.path.is_file() and reader.live_pid is None,
    }
    for blueprint, prefix in blueprint_registry(pm):
        app.register_blueprint(blueprint, url_prefix=prefix)
    app.jinja_env.globals.update(
        t=i18n.translate,
        t_or=i18n.translate_or,
        lang=i18n.current_language,
        languages=i18n.LANGUAGES,
        page_sizes=PAGE_SIZES,
        page_href=page_href,
        cell_list_limit=CELL_LIST_LIMIT,
    )
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(NitpickerError, _usage_error)
    app.config["NITPICKER_CLOSE"] = lambda: _close(app)
    return app


def check_arguments() -> None:
    """Refuse malformed query-string arguments with a 400 before any view or query sees them.

    Types and ranges of query parameters are the query layer's job; what every view shares is checked
    here: no NUL bytes, no value longer than MAX_ARG_CHARS, and ``commit`` an id SQLite can hold or HEAD.
    """
    for name, value in request.args.items(multi=True):
        shown = name if len(name) <= 40 else name[:40] + "…"
        if "\0" in name or "\0" in value:
            abort(400, f"parameter {shown!r} contains a NUL byte")
        if len(name) > 100:
            abort(400, f"parameter name {shown!r} is too long")
        if len(value) > MAX_ARG_CHARS:
            abort(
                400, f"parameter {shown!r} is too long ({len(value):,} characters; at most {MAX_ARG_CHARS:,})"
            )
    commit = request.args.get("commit", "")
    if (
        commit
        and commit.upper() != "HEAD"
        and not (commit.isascii() and commit.isdigit() and int(commit) <= MAX_COMMIT)
    ):
        abort(400, "parameter 'commit' must be a commit id (a whole number) or HEAD")


def _file_identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def reopen_if_rewritten() -> None:
    """A finished archive rewritten since it was opened (`gc`, a new crawl, `analyze`) is opened again, so the
    viewer never shows a commit that is gone (issue 33: it kept serving commits `gc` had removed)."""
    state = current_app.extensions["nitpicker"]
    if not state["immutable"]:
        return  # a live crawl's stub is read as it grows
    now = _file_identity(state["archive"])
    if now is None or now == state["file"]:
        return
    with state["lock"]:
        if _file_identity(state["archive"]) == state["file"]:
            return  # another request thread reopened it meanwhile
        fresh = open_archive(state["archive"])
        old, state["reader"], state["file"] = state["reader"], fresh, _file_identity(state["archive"])
        state["cache"].clear()
        state["derived"].clear()
        old.close()


def _close(app: Flask) -> None:
    """Close the archive, giving a query still running in a server thread a moment to finish first."""
    state = app.extensions["nitpicker"]
    got = state["lock"].acquire(timeout=2)
    try:
        state["reader"].close()
        state["cache"].clear()
        state["derived"].clear()
    finally:
        if got:
            state["lock"].release()


def viewer_state() -> dict[str, Any]:
    """What blueprints use: the plugin manager, the open archive reader and the query registry."""
    return current_app.extensions["nitpicker"]


def query(name: str, /, **params: Any) -> Any:
    """Run one registered query on the open archive (HEAD unless ``?commit=`` is in the URL).

    The SQLite connection is shared by the server's threads, so queries run one at a time. A finished
    archive never changes while it is open, so its answers are kept (a bounded LRU) and a page seen
    before comes back at once; a live crawl's answers are never kept.
    """
    return _ask(name, params, keep=True)


def query_once(name: str, /, **params: Any) -> Any:
    """``query`` whose answer is never kept: for large pages read once to build a ``derived`` value."""
    return _ask(name, params, keep=False)


def query_at(name: str, commit: int | str | None, /, **params: Any) -> Any:
    """``query`` at ``commit`` instead of the URL's (a page's history reads each commit where it changed)."""
    return _ask(name, params, keep=True, commit=commit)


def _ask(name: str, given: dict[str, Any], keep: bool, commit: int | str | None = None) -> Any:
    state = viewer_state()
    params = {key: str(value) for key, value in given.items() if value is not None and value != ""}
    commit = str(commit) if commit is not None else request.args.get("commit") or None
    key = (name, commit, tuple(sorted(params.items())))
    cache: OrderedDict[Any, Any] = state["cache"]
    with state["lock"]:
        if key in cache:
            cache.move_to_end(key)
            return pickle.loads(cache[key])
        result = run_query(state["queries"], state["reader"], name, params, commit)
        if keep and state["immutable"] and name not in UNCACHED:
            # Kept pickled: each hit gets its own copy (views may change what they are given), and unpickling
            # is 3-13 times faster than deepcopy of the same answer (a page of duplicate groups: 0.5 s).
            cache[key] = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            if len(cache) > CACHE_ENTRIES:
                cache.popitem(last=False)
        return result


def derived(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """``build()``'s value for ``key`` and the URL's commit, kept while a finished archive is open.

    For what a view computes from many query answers; only the last DERIVED_ENTRIES are kept, and a live
    crawl's are built anew on every request. Callers must not change the value.
    """
    state = viewer_state()
    if not state["immutable"]:
        return build()
    store: OrderedDict[Any, Any] = state["derived"]
    full = (request.args.get("commit") or None, *key)
    if full in store:
        store.move_to_end(full)
        return store[full]
    value = build()  # outside the lock: its queries take it one at a time
    store[full] = value
    while len(store) > DERIVED_ENTRIES:
        store.popitem(last=False)
    return value


def has_query(name: str) -> bool:
    return name in viewer_state()["queries"]


def page_href(url: str) -> str:
    """The page view's link for ``url`` (cheaper than url_for when a view lists thousands of URLs).

    It keeps the commit and the base the Issues views compare with, so the page's issues have the same states.
    """
    # The parts around the URL are the same for every link of a request: made once (a page of duplicate
    # groups links 2,500 URLs, and reading request.args for each was two thirds of its time).
    parts = request.environ.get(PAGE_HREF_KEY)
    if parts is None:
        suffix = "".join(
            f"&{name}={quote(value, safe='')}"
            for name in ("commit", "base")
            if (value := request.args.get(name))
        )
        parts = request.environ[PAGE_HREF_KEY] = (f"{request.script_root}/page?url=", suffix)
    return f"{parts[0]}{quote(url, safe='')}{parts[1]}"


def live_status() -> int | None:
    """The live writer's pid when the archive is a stub a crawl is still writing, else None."""
    reader = viewer_state()["reader"]
    stub = reader.path if reader.path.is_dir() else stub_path(reader.path)
    return live_pid(stub) if stub.is_dir() else None


def menu_links(request: Request) -> list[MenuLink]:
    pm = viewer_state()["pm"]
    links = [link for result in pm.hook.viewer_menu_links(request=request) for link in (result or [])]
    return sorted(links, key=lambda link: (link.order, link.label))


def _chrome() -> dict[str, Any]:
    return {"menu": menu_links(request), "archive": viewer_state()["name"], "live_pid": live_status()}


def render(template: str, **context: Any) -> str:
    """Render one of the viewer's templates (or a plugin blueprint's) inside the viewer's page chrome."""
    return render_template(template, **_chrome(), **context)


def render_source(source: str, **context: Any) -> str:
    """Render template text; ``{% extends "base.html" %}`` gives a plugin's page the menu, footer and themes."""
    return render_template_string(source, **_chrome(), **context)


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def _http_error(exc: HTTPException) -> Any:
    if _wants_json():
        return jsonify({"error": exc.description or exc.name, "status": exc.code}), exc.code
    return render("error.html", code=exc.code, message=exc.description or exc.name), exc.code or 500


def _usage_error(exc: NitpickerError) -> Any:
    # NitpickerError texts never carry absolute paths (the archive is named by its file name only)
    status = 404 if "unknown query" in str(exc) or str(exc).startswith("no ") else 400
    if _wants_json():
        return jsonify({"error": str(exc), "status": status}), status
    return render("error.html", code=status, message=str(exc)), status
