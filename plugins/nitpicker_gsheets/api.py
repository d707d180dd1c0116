"""The Sheets API through gspread: base-URL override, spreadsheet lookup, and backoff on rate limits."""

from __future__ import annotations

import email.utils
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import requests
from requests.adapters import HTTPAdapter

from nitpicker_core import NitpickerError, UsageError

T = TypeVar("T")
API_URL_ENV = "NITPICKER_GOOGLE_API_URL"
GOOGLE_PREFIXES = (
    "https://sheets.googleapis.com/",
    "https://www.googleapis.com/",
    "https://oauth2.googleapis.com/",
)
SHEET_ID = re.compile(r"/spreadsheets/d/([a-zA-Z0-9-_]+)")
MAX_ATTEMPTS = 8
MAX_WAIT = 300.0
_RATE_REASONS = ("ratelimitexceeded", "userratelimitexceeded", "quotaexceeded", "rate limit", "quota")


class RedirectAdapter(HTTPAdapter):
    """Sends requests meant for Google's API hosts to another base URL (a local stand-in, a proxy)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base.rstrip("/")

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        for prefix in GOOGLE_PREFIXES:
            if request.url and request.url.startswith(prefix):
                request.url = f"{self.base}/{request.url[len(prefix) :]}"
                break
        return super().send(request, **kwargs)


def spreadsheet_id(url: str) -> str:
    found = SHEET_ID.search(url or "")
    if not found:
        raise UsageError("--sheet must be a Google Sheets URL (https://docs.google.com/spreadsheets/d/ID/…)")
    return found.group(1)


def api_base() -> str | None:
    """The base URL from ``NITPICKER_GOOGLE_API_URL``, or None to talk to Google itself."""
    base = os.environ.get(API_URL_ENV)
    if base and not base.startswith(("http://", "https://")):
        raise UsageError(f"{API_URL_ENV} must be an http(s) URL")
    return base or None


def _redirect(session: requests.Session, base: str | None) -> requests.Session:
    if base:
        for prefix in GOOGLE_PREFIXES:
            session.mount(prefix, RedirectAdapter(base))
    return session


def auth_request() -> Any:
    """The transport google-auth uses for token requests (redirected like the API calls)."""
    from google.auth.transport.requests import Request

    return Request(session=_redirect(requests.Session(), api_base()))


def client(creds: Any) -> Any:
    """A gspread client whose API calls and token refreshes honour ``NITPICKER_GOOGLE_API_URL``."""
    import gspread
    from google.auth.transport.requests import AuthorizedSession

    session = _redirect(AuthorizedSession(creds, auth_request=auth_request()), api_base())
    return gspread.authorize(creds, session=session)


def rate_limit_wait(exc: Exception, attempt: int) -> float | None:
    """Seconds to wait before retrying after ``exc``, or None when it is not a rate limit."""
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if code == 403:
        text = str(getattr(response, "text", "")).lower()
        if not any(reason in text for reason in _RATE_REASONS):
            return None
    elif code != 429:
        return None
    header = response.headers.get("Retry-After") if response is not None else None
    if header:
        if header.strip().isdigit():
            return min(float(header.strip()), MAX_WAIT)
        when = email.utils.parsedate_to_datetime(header)
        if when is not None:
            return max(0.0, min(when.timestamp() - time.time(), MAX_WAIT))
    return min(2.0 ** (attempt + 1), 64.0)  # Google's truncated exponential backoff


def countdown(seconds: float, why: str) -> None:
    """Wait, showing the seconds left on stderr (one line, rewritten in place)."""
    left = seconds
    while left > 0:
        print(
            f"\rgoogle-sheets: {why}; retrying in {int(left + 0.999)} s ", end="", file=sys.stderr, flush=True
        )
        step = min(1.0, left)
        time.sleep(step)
        left -= step
    print("\rgoogle-sheets: retrying now" + " " * 30, file=sys.stderr, flush=True)


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args)``, retried after HTTP 429 / quota 403 (honouring Retry-After) and dropped connections."""
    from gspread.exceptions import APIError

    for attempt in range(MAX_ATTEMPTS):
        try:
            return fn(*args, **kwargs)
        except APIError as exc:
            wait = rate_limit_wait(exc, attempt)
            if wait is None or attempt == MAX_ATTEMPTS - 1:
                raise NitpickerError(f"Google Sheets API error: {_describe(exc)}") from None
            countdown(wait, f"rate limited (HTTP {exc.response.status_code})")
        except requests.ConnectionError:
            if attempt == MAX_ATTEMPTS - 1:
                raise NitpickerError("cannot reach the Google Sheets API") from None
            countdown(5.0, "connection dropped")
    raise AssertionError("unreachable")


def _describe(exc: Any) -> str:
    try:
        error = exc.response.json()["error"]
        return f"{error.get('code')} {error.get('status', '')} {error.get('message', '')}".strip()
    except (ValueError, KeyError, TypeError, AttributeError):
        return f"HTTP {getattr(exc.response, 'status_code', '?')}"
