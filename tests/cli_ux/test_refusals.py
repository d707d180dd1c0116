"""Refusals that say why: unreachable roots, URLs without a scheme, an archive of other roots."""

from __future__ import annotations

import hashlib
import socket

import pytest
from support import run_cli


def _closed_port() -> int:
    with socket.socket() as sock:  # bound then closed: nothing listens there afterwards
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("nitpicker: error:")]


def test_a_refused_root_says_so_and_exits_1(tmp_path) -> None:
    port = _closed_port()
    result = run_cli("crawl", "-o", "out.nitpicker", f"http://127.0.0.1:{port}/", cwd=tmp_path)
    assert result.returncode == 1
    assert _error_lines(result.stderr) == [
        f"nitpicker: error: cannot crawl http://127.0.0.1:{port}/: connection refused "
        f"(nothing listens on 127.0.0.1:{port})"
    ]


def test_tls_to_a_plain_http_server_says_tls(tmp_path, site) -> None:
    url = site.replace("http://", "https://") + "/"
    result = run_cli("crawl", "-o", "out.nitpicker", "--single", url, cwd=tmp_path)
    assert result.returncode == 1
    netloc = site.split("://")[1]
    assert _error_lines(result.stderr) == [
        f"nitpicker: error: cannot crawl {url}: TLS/SSL handshake with {netloc} failed"
    ]


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("localhost:8311/", "http://localhost:8311/"),
        ("example.com", "http://example.com"),
        ("127.0.0.1:8/a?b=1", "http://127.0.0.1:8/a?b=1"),
    ],
)
def test_a_url_without_a_scheme_gets_the_suggestion(tmp_path, given, hint) -> None:
    result = run_cli("crawl", given, cwd=tmp_path)
    assert result.returncode == 1
    assert _error_lines(result.stderr) == [
        f"nitpicker: error: not an http(s) URL: {given!r} (did you mean {hint}?)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_no_suggestion_for_what_is_no_host(tmp_path) -> None:
    result = run_cli("crawl", "ftp://example.com/", cwd=tmp_path)
    assert result.returncode == 1 and "did you mean" not in result.stderr


def test_other_roots_into_an_existing_archive_are_refused(tmp_path, site) -> None:
    archive = tmp_path / "site.nitpicker"
    first = run_cli("crawl", "-o", str(archive), "--single", f"{site}/recursive/", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = hashlib.sha256(archive.read_bytes()).hexdigest()
    other = run_cli("crawl", "-o", str(archive), "--single", f"{site}/recursive/page-a", cwd=tmp_path)
    assert other.returncode == 1
    assert _error_lines(other.stderr) == [
        f"nitpicker: error: site.nitpicker holds a crawl of {site}/recursive/, not of these URLs: add them with "
        "--append site.nitpicker, crawl its roots again with --update site.nitpicker, or write another archive "
        "with -o"
    ]
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == before
    again = run_cli("crawl", "-o", str(archive), "--single", f"{site}/recursive/", cwd=tmp_path)  # same roots
    assert again.returncode == 0, again.stderr
    appended = run_cli("crawl", "--append", str(archive), f"{site}/recursive/page-a", cwd=tmp_path)
    assert appended.returncode == 0, appended.stderr


def test_pipeline_says_why_and_refuses_other_roots(tmp_path) -> None:
    port = _closed_port()
    first = run_cli(
        "pipeline",
        f"http://127.0.0.1:{port}/",
        "-o",
        "p.nitpicker",
        "--no-analyze",
        cwd=tmp_path,
        timeout=300,
    )
    assert first.returncode == 1
    assert (
        f"nitpicker: error: cannot crawl http://127.0.0.1:{port}/: connection refused (nothing listens on "
        f"127.0.0.1:{port})"
    ) in _error_lines(first.stderr)
    archive = tmp_path / "p.nitpicker"
    before = hashlib.sha256(archive.read_bytes()).hexdigest()
    other = run_cli(
        "pipeline",
        f"http://127.0.0.1:{port}/other/",
        "-o",
        "p.nitpicker",
        "--no-analyze",
        cwd=tmp_path,
        timeout=300,
    )
    assert other.returncode == 1
    assert _error_lines(other.stderr) == [
        f"nitpicker: error: p.nitpicker holds a crawl of http://127.0.0.1:{port}/, not of these URLs: add them "
        "with --append p.nitpicker, crawl its roots again with --update p.nitpicker, or write another archive "
        "with -o"
    ]
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == before
