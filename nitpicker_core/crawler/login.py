"""Logged-in crawls: cookies from a file or a storage state, a scripted login, and renewing an expired session.

The login state is a list of Playwright-style cookie dicts (``name``, ``value``, ``domain``, ``path``,
``expires``, ``secure``…). It is a secret: it never appears in a repr, the archive's options, a log line or
the summary; ``LoginSetup.for_storage`` says what was used (a file's name, the login URL, field names,
how many cookies) and nothing that would log anyone in.

Cookies apply to the crawl's own hosts only (the others are dropped when the state is loaded) and go both
to the browser (each page's context, before it navigates) and to nitpicker's own requests to the site's hosts
(preflights, robots.txt, sitemaps: a ``Cookie`` header built here, since ``http.cookiejar`` will not send a
cookie to a dotless host such as ``localhost``). A storage state's (or a scripted login's) ``localStorage``
goes to the browser only, for the site's own origins: a context's init script writes it before any script of
the page runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from nitpicker_core.errors import NitpickerError

__all__ = [
    "DEFAULT_LOGOUT",
    "NO_DISPLAY",
    "CookieSession",
    "has_display",
    "save_login",
    "LoginError",
    "LoginSession",
    "LoginSetup",
    "cookie_header",
    "load_cookies",
    "load_storage_state",
    "read_storage_state",
    "resolve_secret",
    "scope_cookies",
    "scope_origins",
    "storage_script",
]

log = logging.getLogger(__name__)

#: paths of links that would end the session: never followed while logged in ([login] logout overrides)
DEFAULT_LOGOUT = (r"log-?out", r"sign-?out", r"log_out", r"sign_out", "ログアウト")
MAX_RENEWALS = 5  # logins again per crawl after the session expired; [login] max_renewals overrides
LOGIN_TIMEOUT = 30.0  # seconds for the login page to load, a field to fill, the button to click
SUBMIT_SETTLE = 10.0  # seconds for the submitted form's next page to load (a script login loads none)


class LoginError(NitpickerError):
    """The login cannot be used: a file that does not parse, a state of another site, a failed login."""


@dataclass
class LoginSetup:
    """How the crawl logs in. ``cookies`` and ``fields`` values are secrets: kept out of the repr.

    ``url``/``fields``/``submit``: a scripted login (the login page, its fields by name or CSS selector
    with their values, the submit button's selector); ``success``: a selector present only once logged in
    (without it a login succeeded when the page left the login URL and shows no password field).
    """

    cookies: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # a storage state's localStorage: [{"origin": "https://h", "localStorage": [{"name", "value"}…]}…]
    origins: list[dict[str, Any]] = field(default_factory=list, repr=False)
    source: str = ""  # "cookies.txt (--cookies)": what the cookies came from, for the summary
    url: str = ""
    fields: dict[str, str] = field(default_factory=dict, repr=False)
    submit: str = ""
    success: str = ""
    hook: bool = False  # a crawl_login hook logs in (with or without a login URL)
    logout: tuple[str, ...] = DEFAULT_LOGOUT
    max_renewals: int = MAX_RENEWALS
    dropped: int = 0  # cookies of other hosts dropped when the state was loaded

    @property
    def scripted(self) -> bool:
        return bool(self.url) or self.hook

    def for_storage(self) -> dict[str, Any]:
        """What the archive records: where the login came from, never a value."""
        return {
            "source": self.source,
            "cookies": len(self.cookies),
            "origins": len(self.origins),
            "url": self.url,
            "fields": sorted(self.fields),
            "submit": self.submit,
            "hook": self.hook,
        }

    def logout_pattern(self) -> re.Pattern[str] | None:
        return re.compile("|".join(f"(?:{p})" for p in self.logout), re.I) if self.logout else None


def resolve_secret(value: str, where: str) -> str:
    """A field value as written, or ``env:VAR`` / ``file:PATH`` read now; the message never holds a value."""
    if value.startswith("env:"):
        name = value[4:]
        if name not in os.environ:
            raise LoginError(f"{where}: the environment variable {name} is not set")
        return os.environ[name]
    if value.startswith("file:"):
        path = Path(value[5:]).expanduser()
        try:
            return path.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise LoginError(f"{where}: cannot read {path.name}: {exc.strerror}") from None
    return value


# -- loading ------------------------------------------------------------------------------------------------
def load_cookies(path: Path) -> list[dict[str, Any]]:
    """A Netscape cookies.txt or a JSON list of Playwright-style cookie dicts; ``LoginError`` if neither."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoginError(
            f"--cookies: cannot read {path.name}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise LoginError(f"--cookies: {path.name} is not valid JSON (line {exc.lineno})") from None  # type: ignore[attr-defined]
        if isinstance(data, dict) and isinstance(data.get("cookies"), list):
            data = data["cookies"]  # a storage state given as cookies: its cookies are what counts
        return _checked(data, f"--cookies: {path.name}")
    return _netscape(path)


def _netscape(path: Path) -> list[dict[str, Any]]:
    jar = http.cookiejar.MozillaCookieJar()
    try:
        jar.load(str(path), ignore_discard=True, ignore_expires=True)
    except (http.cookiejar.LoadError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        # the jar's message may quote the offending line, which holds a cookie value: name the file only
        reason = "invalid Netscape format" if "line" in reason or "format" in reason else reason
        raise LoginError(
            f"--cookies: {path.name} is neither a Netscape cookies.txt nor a JSON list of cookies ({reason})"
        ) from None
    cookies = []
    for c in jar:
        cookies.append(
            {
                "name": c.name,
                "value": c.value or "",
                "domain": c.domain,
                "path": c.path or "/",
                "expires": float(c.expires) if c.expires else -1,
                "secure": bool(c.secure),
                "httpOnly": c.has_nonstandard_attr(http.cookiejar.HTTPONLY_ATTR),  # type: ignore[attr-defined]
            }
        )
    if not cookies:
        raise LoginError(
            f"--cookies: {path.name} holds no cookies (Netscape cookies.txt or a JSON list expected)"
        )
    return cookies


def load_storage_state(path: Path) -> list[dict[str, Any]]:
    """The cookies of a Playwright storage state (``context.storage_state(path=…)``)."""
    return read_storage_state(path)[0]


def read_storage_state(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The cookies and the origins' ``localStorage`` of a Playwright storage state; one of them may be empty."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LoginError(f"--storage-state: cannot read {path.name}: {exc.strerror}") from None
    except ValueError:
        raise LoginError(f"--storage-state: {path.name} is not valid JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("cookies"), list):
        raise LoginError(f"--storage-state: {path.name} is not a Playwright storage state (no cookies list)")
    where = f"--storage-state: {path.name}"
    origins = _checked_origins(data.get("origins") or [], where)
    if not data["cookies"] and origins:  # a login kept in localStorage only (a token): no cookie needed
        return [], origins
    if not data["cookies"]:
        raise LoginError(f"{where} holds no cookies and no localStorage")
    return _checked(data["cookies"], where), origins


def _checked_origins(data: Any, where: str) -> list[dict[str, Any]]:
    """Playwright's ``origins``: each an http(s) origin and its localStorage items (those with none left out)."""
    if not isinstance(data, list):
        raise LoginError(f"{where}: origins is not a list")
    origins = []
    for i, item in enumerate(data, 1):
        origin = item.get("origin") if isinstance(item, dict) else None
        items = item.get("localStorage", []) if isinstance(item, dict) else None
        if not isinstance(origin, str) or not isinstance(items, list):
            raise LoginError(f"{where}: origin {i} has no origin or localStorage list")
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LoginError(f"{where}: origin {i} is not an http(s) origin")
        pairs = []
        for entry in items:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or "value" not in entry:
                raise LoginError(f"{where}: a localStorage item of origin {i} has no name or value")
            pairs.append({"name": entry["name"], "value": str(entry["value"])})
        if pairs:
            # the origin as a page's location.origin says it: the init script compares the two
            origins.append({"origin": f"{parts.scheme}://{parts.netloc.lower()}", "localStorage": pairs})
    return origins


def _checked(data: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not data:
        raise LoginError(f"{where} holds no cookies (a list of cookie objects expected)")
    cookies = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or "value" not in item:
            raise LoginError(f"{where}: cookie {i} has no name or value")
        domain = item.get("domain") or (urlsplit(str(item.get("url") or "")).hostname or "")
        if not domain:
            raise LoginError(f"{where}: cookie {item['name']!r} has no domain")
        expires = item.get("expires", item.get("expirationDate", -1))
        cookies.append(
            {
                "name": item["name"],
                "value": str(item["value"]),
                "domain": str(domain).lower(),
                "path": str(item.get("path") or "/"),
                "expires": float(expires) if isinstance(expires, int | float) and expires > 0 else -1,
                "secure": bool(item.get("secure", False)),
                "httpOnly": bool(item.get("httpOnly", False)),
                **(
                    {"sameSite": item["sameSite"]}
                    if item.get("sameSite") in ("Strict", "Lax", "None")
                    else {}
                ),
            }
        )
    return cookies


# -- scope --------------------------------------------------------------------------------------------------
def domain_matches(host: str, domain: str) -> bool:
    """RFC 6265 domain-match: ``host`` is the cookie's domain or under it (a leading dot means "and below")."""
    host, bare = host.lower().rstrip("."), domain.lower().lstrip(".")
    return host == bare or (host.endswith("." + bare) and not _is_ip(host))


def _is_ip(host: str) -> bool:
    return bool(re.fullmatch(r"[\d.]+|\[?[0-9a-f:]+\]?", host))


def scope_cookies(cookies: list[dict[str, Any]], hosts: Iterable[str]) -> tuple[list[dict[str, Any]], int]:
    """The cookies some crawl host domain-matches, and how many others were dropped."""
    hosts = [h for h in hosts if h]
    kept = [c for c in cookies if any(domain_matches(h, c["domain"]) for h in hosts)]
    return kept, len(cookies) - len(kept)


def scope_origins(
    origins: list[dict[str, Any]], own: Callable[[str], bool]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The origins ``own(url)`` says are the site's, and the other origins (their names only, for a warning)."""
    kept = [o for o in origins if own(o["origin"] + "/")]
    return kept, [o["origin"] for o in origins if o not in kept]


def storage_script(origins: list[dict[str, Any]]) -> str:
    """A context init script writing each origin's localStorage items before the page's own scripts run.

    It runs in every document of the context (frames included) and writes to the one whose origin it is only;
    a document that may not use localStorage (a sandboxed frame) is left alone.
    """
    state = {o["origin"]: [[i["name"], i["value"]] for i in o["localStorage"]] for o in origins}
    # JSON is a JavaScript literal; the script is no HTML, so nothing in a value can end it early
    return (
        "(state => { const items = state[location.origin]; if (!items) return;"
        " try { for (const [name, value] of items) localStorage.setItem(name, value); } catch (e) {} })"
        f"({json.dumps(state)});"
    )


class CookieSession(requests.Session):
    """A requests session that sends a logged-in crawl's cookies (``cookie_for(url)``, None: none) on every
    request, each redirect hop included, and keeps no cookie a server sets: the login state is the one source,
    as for the fetcher's own requests. Without ``use_login`` it is a plain session."""

    def __init__(self) -> None:
        super().__init__()
        self.cookie_for: Callable[[str], str | None] | None = None

    def use_login(self, cookie_for: Callable[[str], str | None]) -> None:
        from nitpicker_core.crawler.fetch import _NoCookies

        self.cookie_for = cookie_for
        self.cookies.set_policy(_NoCookies())

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        if self.cookie_for is not None:
            # requests moves a Cookie header along a redirect to whatever host comes next: decided per hop
            request.headers.pop("Cookie", None)
            cookie = self.cookie_for(request.url or "")
            if cookie:
                request.headers["Cookie"] = cookie
        return super().send(request, **kwargs)


def cookie_header(cookies: list[dict[str, Any]], url: str, now: float | None = None) -> str | None:
    """The ``Cookie`` header a browser would send to ``url`` with these cookies, or None."""
    parts = urlsplit(url)
    host, path = (parts.hostname or "").lower(), parts.path or "/"
    now = time.time() if now is None else now
    secure = parts.scheme == "https" or host in ("localhost", "127.0.0.1", "::1")
    chosen = []
    for c in cookies:
        cookie_path = c.get("path") or "/"
        if not domain_matches(host, c["domain"]):
            continue
        if not (path == cookie_path or path.startswith(cookie_path.rstrip("/") + "/") or cookie_path == "/"):
            continue
        if c.get("secure") and not secure:
            continue
        if 0 < c.get("expires", -1) < now:
            continue
        chosen.append((-len(cookie_path), c["name"], c["value"]))
    return "; ".join(f"{name}={value}" for _, name, value in sorted(chosen)) or None


def for_browser(cookies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cookies as ``BrowserContext.add_cookies`` takes them."""
    out = []
    for c in cookies:
        entry: dict[str, Any] = {
            k: c[k] for k in ("name", "value", "domain", "path", "expires", "secure", "httpOnly") if k in c
        }
        if "sameSite" in c:
            entry["sameSite"] = c["sameSite"]
        out.append(entry)
    return out


# -- the scripted login -----------------------------------------------------------------------------------
def _selector(name: str) -> str:
    """A field given by name (``username``) or by CSS selector (``#user``, ``input[type=email]``)."""
    if re.fullmatch(r"[\w.-]+", name) and not name.startswith("."):
        return f'[name="{name}"]'
    return name


async def scripted_login(
    setup: LoginSetup, pm: Any, user_agent: str, host_factory: Callable[[], Any] | None = None
) -> list[dict[str, Any]]:
    """Log in in a Chromium of its own; the context's cookies after it, or ``LoginError`` (one line, no value)."""
    return (await scripted_login_state(setup, pm, user_agent, host_factory))[0]


async def scripted_login_state(
    setup: LoginSetup, pm: Any, user_agent: str, host_factory: Callable[[], Any] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Log in in a Chromium of its own: the context's cookies and its origins' localStorage after it (a token
    a ``crawl_login`` hook's single-page app keeps there), or ``LoginError`` (one line, no value)."""
    from nitpicker_core.crawler.browser import BrowserHost

    host = (host_factory or BrowserHost)()
    try:
        await host.start()
        page = await host.new_page(user_agent)
        if setup.url:
            await _fill_and_submit(page, setup)
        refused = False
        for result in pm.hook.crawl_login(context=page.context, page=page):
            if asyncio.iscoroutine(result):
                if refused:  # the login failed already: the others are not run
                    result.close()
                    continue
                result = await result
            refused = refused or result is False
        if refused:
            raise LoginError(f"the login failed: a crawl_login hook said so (at {_bare(page.url)})")
        await _check_success(page, setup)
        state = await page.context.storage_state()
        web = [o for o in state.get("origins") or [] if str(o.get("origin", "")).startswith("http")]
        origins = _checked_origins(web, "the login's storage state")
        return list(await page.context.cookies()), origins
    except LoginError:
        raise
    except NitpickerError:
        raise
    except Exception as exc:  # a Playwright timeout or error: its first line, which names no value
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LoginError(
            f"the login at {_bare(setup.url) or 'the crawl_login hook'} failed: {message}"
        ) from None
    finally:
        await host.close()


async def _fill_and_submit(page: Any, setup: LoginSetup) -> None:
    timeout_ms = LOGIN_TIMEOUT * 1000
    await page.goto(setup.url, wait_until="load", timeout=timeout_ms)
    for name, value in setup.fields.items():
        locator = page.locator(_selector(name)).first
        if not await locator.count():
            raise LoginError(f"the login page {_bare(setup.url)} has no field {name!r}")
        await locator.fill(value, timeout=timeout_ms)
    submit = setup.submit or 'form [type="submit"]'
    button = page.locator(submit).first
    if not await button.count():
        raise LoginError(f"the login page {_bare(setup.url)} has no submit button {submit!r}")
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    # a form post loads a new document (the same URL again for a wrong password); a script login may only
    # change the page, so no load within SUBMIT_SETTLE seconds is no failure: the success check decides
    try:
        async with page.expect_event("load", timeout=SUBMIT_SETTLE * 1000):
            await button.click(timeout=timeout_ms)
    except PlaywrightTimeout:
        pass
    await page.wait_for_load_state("load", timeout=timeout_ms)


async def _check_success(page: Any, setup: LoginSetup) -> None:
    where = _bare(page.url)
    if setup.success:
        try:
            await page.locator(setup.success).first.wait_for(state="attached", timeout=5000)
        except Exception:  # noqa: BLE001 - absent: the login failed
            raise LoginError(
                f"the login failed: {setup.success!r} is not on the page after it ({where}); "
                "wrong credentials, or a CAPTCHA? (`nitpicker login URL --save FILE` for a login no script passes)"
            ) from None
        return
    if not setup.url:
        return
    still = _same_page(page.url, setup.url) or await page.locator('input[type="password"]').count()
    if still:
        captcha = await page.locator("text=/captcha|robot/i").count()
        why = "a CAPTCHA" if captcha else "wrong credentials, or a CAPTCHA?"
        raise LoginError(
            f"the login failed: still on the login page ({where}) after submitting; {why} "
            "(`nitpicker login URL --save FILE` for a login no script passes)"
        )


def _same_page(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.hostname, pa.port, pa.path.rstrip("/")) == (pb.hostname, pb.port, pb.path.rstrip("/"))


def _bare(url: str) -> str:
    """A URL without its query (a login page's query may hold a token)."""
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}" if parts.scheme else ""


# -- `nitpicker login URL --save FILE` ----------------------------------------------------------------------
NO_DISPLAY = (
    "nitpicker login opens a visible browser, and there is no display here ($DISPLAY and $WAYLAND_DISPLAY "
    "are unset): run it where there is one and copy the file, or crawl with --cookies or a [login] table"
)


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def save_login(url: str, save: Path, done: Callable[[], Any]) -> int:
    """Open ``url`` in a visible Chromium; once the user closed the window or ``done`` (an awaitable: Enter
    pressed) returned, write the context's storage state to ``save`` (owner-only); returns its cookie count."""
    from playwright.async_api import async_playwright

    from nitpicker_core.crawler.browser import launch

    if not has_display():
        raise LoginError(NO_DISPLAY)
    async with async_playwright() as playwright:
        browser = await launch(playwright, headless=False)
        try:
            context = await browser.new_context()
            page = await context.new_page()
            state: dict[str, Any] = {}

            async def keep() -> None:  # the state as of the last second: the window may close at any time
                while True:
                    with contextlib.suppress(Exception):
                        state.update(await context.storage_state())
                    await asyncio.sleep(1)

            keeper = asyncio.create_task(keep())
            closed = asyncio.get_running_loop().create_future()

            def on_close(_page: Any) -> None:
                if not closed.done():
                    closed.set_result(None)

            page.on("close", on_close)
            await page.goto(url)
            entered = asyncio.ensure_future(done())
            await asyncio.wait({closed, entered}, return_when=asyncio.FIRST_COMPLETED)
            entered.cancel()
            keeper.cancel()
            with contextlib.suppress(Exception):
                state.update(await context.storage_state())
        finally:
            with contextlib.suppress(Exception):
                await browser.close()
    if not state.get("cookies"):
        raise LoginError(f"nothing saved: the browser holds no cookie for {_bare(url)} (not logged in?)")
    fd = os.open(save, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    return len(state["cookies"])


# -- a crawl's session -------------------------------------------------------------------------------------
class LoginSession:
    """The crawl's live login state: the cookies now, who renews them, and how often they were renewed."""

    def __init__(
        self,
        setup: LoginSetup,
        hosts: Iterable[str],
        pm: Any,
        user_agent: str,
        own: Callable[[str], bool] | None = None,
    ) -> None:
        self.setup, self.pm, self.user_agent = setup, pm, user_agent
        self.hosts = sorted({h for h in hosts if h})
        self.cookies, dropped = scope_cookies(setup.cookies, self.hosts)
        self.dropped = setup.dropped + dropped
        # an origin is the site's when ``own`` says so (the crawl's host and port), else by its host name
        self._own = own or (lambda url: (urlsplit(url).hostname or "") in self.hosts)
        self.origins, self.foreign_origins = scope_origins(setup.origins, self._own)
        self.generation = 0
        self.renewals = 0
        self.failed_renewal = ""  # why the session could not be renewed, once it could not
        self.logged_in_ok = False  # some in-scope page answered 200 with this session
        self._lock = asyncio.Lock()
        self._pattern = setup.logout_pattern()
        self.logout_skipped = 0

    def __repr__(self) -> str:
        return f"LoginSession(hosts={self.hosts!r}, cookies={len(self.cookies)}, renewals={self.renewals})"

    async def start(self) -> None:
        """Log in once before the crawl when scripted; ``LoginError`` when it fails or gives no cookie."""
        given = len(self.setup.cookies) + len(self.setup.origins)
        if given and not self.cookies and not self.origins and not self.setup.scripted:
            what = f"{len(self.setup.cookies)} cookie(s)"
            if self.setup.origins:
                what += f" and {len(self.setup.origins)} origin(s) with localStorage"
            raise LoginError(
                f"none of the {what} of {self.setup.source or 'the login'} is for "
                f"the crawl's hosts ({', '.join(self.hosts)}): a file of another site?"
            )
        if self.foreign_origins:  # what a browser would never give this site: said once, not used
            shown = ", ".join(self.foreign_origins[:3]) + (" …" if len(self.foreign_origins) > 3 else "")
            log.warning(
                "the localStorage of %d origin(s) of other sites in %s is not used: %s",
                len(self.foreign_origins),
                self.setup.source or "the login",
                shown,
            )
        if self.setup.scripted:
            await self._login()

    async def _login(self) -> None:
        got, origins = await scripted_login_state(self.setup, self.pm, self.user_agent)
        kept, dropped = scope_cookies(got, self.hosts)
        if not kept:
            raise LoginError(
                "the login gave no cookie for the crawl's hosts "
                f"({', '.join(self.hosts)}); {len(got)} cookie(s) of other hosts"
            )
        self.cookies = kept
        # the login's localStorage replaces a file's; a login that keeps none there leaves the file's in place
        self.origins = scope_origins(origins, self._own)[0] or self.origins
        self.generation += 1

    def header(self, url: str) -> str | None:
        return cookie_header(self.cookies, url) if self.cookies else None

    def browser_cookies(self) -> list[dict[str, Any]]:
        return for_browser(self.cookies)

    def browser_storage(self) -> list[dict[str, Any]]:
        """The site's origins' localStorage, for each page's context (``storage_script``)."""
        return self.origins

    def is_logout(self, url: str) -> bool:
        """A link that would end the session (its path matches a logout pattern)."""
        if self._pattern is None:
            return False
        from urllib.parse import unquote

        return bool(self._pattern.search(unquote(urlsplit(url).path)))

    def expired(self, url: str, status: int | None, chain: list[str], seen: int | None = None) -> bool:
        """The answer says the session is gone: a redirect to the login page, or a 401 after 200s (or to a
        request sent with the cookies of an earlier login, ``seen``: another page renewed them meanwhile)."""
        login = self.setup.url
        if login and _same_page(url, login):
            return False
        if login and any(_same_page(hop, login) for hop in chain):
            return True
        if status == 401 and (self.logged_in_ok or (seen is not None and seen != self.generation)):
            return True
        if status == 200:
            self.logged_in_ok = True
        return False

    async def renew(self, seen: int) -> bool:
        """Log in again (once for every page that saw generation ``seen`` expire); False when it cannot."""
        async with self._lock:
            if self.generation != seen:
                return True  # another page renewed it meanwhile
            if not self.setup.scripted:
                self.failed_renewal = self.failed_renewal or "no scripted login to renew it with"
                return False
            if self.renewals >= self.setup.max_renewals:
                self.failed_renewal = f"logged in again {self.renewals} times already (max_renewals)"
                return False
            try:
                await self._login()
            except LoginError as exc:
                self.failed_renewal = str(exc)
                return False
            self.renewals += 1
            return True

    def stats(self) -> dict[str, Any]:
        return {
            "cookies": len(self.cookies),
            "dropped_cookies": self.dropped,
            "origins": len(self.origins),
            "dropped_origins": len(self.foreign_origins),
            "renewals": self.renewals,
            "logout_skipped": self.logout_skipped,
            **({"not_renewed": self.failed_renewal} if self.failed_renewal else {}),
        }
