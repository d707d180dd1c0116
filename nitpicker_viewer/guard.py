"""What the local servers (viewer, dashboard) answer: only their own Host and Origin, always with security headers."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from flask import Flask, Response, request

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
# a Host header is a name or an address and an optional port: no user info, path, spaces or other tricks
_HOST_RE = re.compile(r"(?P<name>[a-z0-9.\-]+|\[[0-9a-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")
BASE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine (any 127.x address, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _normal(name: str) -> str:
    """One spelling per name: lower case, no IPv6 brackets, an address in its compressed form."""
    name = name.strip().lower().removeprefix("[").removesuffix("]")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Guard:
    """The names one server answers to: the loopback names and the host it was started with.

    A server bound to a wildcard (0.0.0.0, ::) is reached by whatever address the machine has, so it
    also answers any IP address: DNS rebinding always arrives under the attacker's *name*, never an
    address, so accepting addresses keeps the protection. The port is the one the connection actually
    arrived on (werkzeug's ``SERVER_PORT`` is the listening socket's port, never taken from the request),
    which is right for ``--port 0`` and for the viewer's walk to the next free port alike.
    """

    def __init__(self, host: str, csp: str) -> None:
        self.names = LOOPBACK_NAMES | {_normal(host)}
        self.any_address = _normal(host) in WILDCARDS
        self.csp = csp

    def allows(self, name: str) -> bool:
        name = _normal(name)
        return name in self.names or (self.any_address and _is_address(name))

    def host_ok(self, header: str, port: str) -> bool:
        match = _HOST_RE.fullmatch(header.strip().lower())
        if match is None:
            return False
        return self.allows(match["name"]) and match["port"] in (None, port)

    def origin_ok(self, origin: str, port: str) -> bool:
        """Same origin as this server: http, one of its names, its port; ``null`` and the rest are foreign."""
        try:
            parts = urlsplit(origin.strip())
            origin_port = parts.port or 80
        except ValueError:
            return False
        clean = parts.path in ("", "/") and not (
            parts.query or parts.fragment or parts.username or parts.password
        )
        return (
            parts.scheme == "http"
            and clean
            and parts.hostname is not None
            and self.allows(parts.hostname)
            and str(origin_port) == port
        )

    def check(self) -> Response | None:
        port = str(request.environ.get("SERVER_PORT", ""))
        host = request.headers.get("Host")
        # no Host header at all (HTTP/1.0) cannot come from a browser, so it cannot be a rebound name
        if host is not None and not self.host_ok(host, port):
            return Response(
                "421 Misdirected Request: this server answers only its own host name\n",
                421,
                content_type="text/plain; charset=utf-8",
            )
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_ok(origin, port):
            return Response(
                "403 Forbidden: requests from other origins are refused\n",
                403,
                content_type="text/plain; charset=utf-8",
            )
        return None

    def headers(self, response: Response) -> Response:
        for name, value in BASE_HEADERS.items():
            response.headers.setdefault(name, value)
        # a view with a stricter policy of its own (the viewer's sandboxed snapshot) keeps it
        response.headers.setdefault("Content-Security-Policy", self.csp)
        return response


def install(app: Flask, host: str, csp: str) -> Guard:
    """Check Host and Origin before every request of ``app`` and add the security headers to every response.

    The check is the app's first ``before_request`` function, so it runs before routing errors, blueprints'
    own hooks and static files; the headers come last, on pages, JSON, static files and errors alike.
    """
    guard = Guard(host, csp)
    app.before_request_funcs.setdefault(None, []).insert(0, guard.check)
    app.after_request(guard.headers)
    app.extensions["nitpicker_guard"] = guard
    return guard
