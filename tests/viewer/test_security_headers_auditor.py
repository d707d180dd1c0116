"""The security headers an auditor expects (Referrer-Policy, Permissions-Policy, frame-ancestors): the `headers`
query, the /security-headers view and the crawl checks agree on one built archive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archives import SITE, build_archive

from nitpicker_core import CheckContext
from nitpicker_core.archive import aggregates, open_archive
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.archives import page

EVERY = {
    "content-security-policy": "default-src 'self'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "strict-transport-security": "max-age=300",
    "referrer-policy": "no-referrer",
    "permissions-policy": "camera=()",
}
KEYS = ("csp", "x_frame_options", "x_content_type_options", "hsts", "referrer_policy", "permissions_policy")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = [
        page(SITE + "/", title="Home", links=["/ancestors", "/blank", "/bare"], headers=EVERY),
        # CSP frame-ancestors stands in for X-Frame-Options, as the missing-x-frame-options check says
        page(
            SITE + "/ancestors",
            title="Ancestors",
            headers={"content-security-policy": "default-src 'self'; Frame-Ancestors 'none'"},
        ),
        # an empty value is no header to a browser
        page(
            SITE + "/blank",
            title="Blank",
            headers={"referrer-policy": " ", "permissions-policy": "geolocation=()"},
        ),
        page(SITE + "/bare", title="Bare"),
    ]
    return build_archive(tmp_path_factory.mktemp("auditor") / "headers.nitpicker", pages)


@pytest.fixture(scope="module")
def client(archive: Path, viewer_over):
    with viewer_over(archive) as app:
        yield app.test_client()


def _api(client, **params: str) -> dict:
    response = client.get("/api/headers", query_string=params)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def _missing(answer: dict) -> list[str]:
    return [row["url"].removeprefix(SITE) for row in answer["items"]]


def test_the_query_answers_every_header_an_auditor_expects(client) -> None:
    answer = _api(client)
    assert set(answer["headers"]) == set(KEYS)
    assert answer["headers"]["referrer_policy"] == "referrer-policy"
    assert answer["totals"] == {
        "pages": 4,
        "csp": 2,
        "x_frame_options": 2,
        "x_content_type_options": 1,
        "hsts": 1,
        "referrer_policy": 1,
        "permissions_policy": 2,
    }
    assert _missing(_api(client, missing="referrer_policy")) == ["/ancestors", "/bare", "/blank"]
    assert _missing(_api(client, missing="permissions_policy")) == ["/ancestors", "/bare"]
    assert _missing(_api(client, missing="x_frame_options")) == ["/bare", "/blank"]
    # the same counts where a URL filter makes the query count them itself instead of reading the digest
    assert _api(client, url="/b")["totals"] == {
        "pages": 2,
        "csp": 0,
        "x_frame_options": 0,
        "x_content_type_options": 0,
        "hsts": 0,
        "referrer_policy": 0,
        "permissions_policy": 1,
    }


def test_the_view_has_a_card_and_a_column_per_header(client) -> None:
    html = client.get("/security-headers").get_data(as_text=True)
    for key in KEYS:
        assert f'data-header="{key}"' in html
    card = html.split('data-header="referrer_policy"', 1)[1].split("</li>", 1)[0]
    assert "Referrer-Policy" in card and "1 / 4" in card and "3 pages without it" in card
    assert "missing=referrer_policy" in card
    card = html.split('data-header="permissions_policy"', 1)[1].split("</li>", 1)[0]
    assert "Permissions-Policy" in card and "2 / 4" in card
    assert "X-Frame-Options / frame-ancestors" in html
    # the filter offers each header
    select = html.split('id="f-missing"', 1)[1].split("</select>", 1)[0]
    assert all(f'value="{key}"' in select for key in KEYS)
    exported = client.get("/security-headers?missing=permissions_policy&export=csv").get_data(as_text=True)
    lines = exported.splitlines()
    assert lines[0].endswith(",Referrer-Policy,Permissions-Policy"), exported
    assert lines[1:] == [
        f"{SITE}/ancestors,200,true,true,false,false,false,false",
        f"{SITE}/bare,200,false,false,false,false,false,false",
    ]


def test_a_check_per_header_finds_what_the_view_counts_missing(archive: Path) -> None:
    pm = make_plugin_manager()
    checks = check_registry(pm)
    with open_archive(archive) as reader:
        ctx = CheckContext(reader, reader.resolve(None), query_registry(pm))
        found = {
            name: sorted(f.url.removeprefix(SITE) for f in checks[name].findings(ctx))  # type: ignore[misc]
            for name in ("missing-referrer-policy", "missing-permissions-policy", "missing-x-frame-options")
        }
    assert found == {
        "missing-referrer-policy": ["/ancestors", "/bare", "/blank"],
        "missing-permissions-policy": ["/ancestors", "/bare"],
        "missing-x-frame-options": ["/bare", "/blank"],
    }
    check = checks["missing-permissions-policy"]
    assert (check.category, check.priority) == ("security", checks["missing-referrer-policy"].priority)
    assert "Permissions-Policy" in check.title and check.help_url.endswith("/Permissions-Policy")


def test_digests_stored_by_an_older_nitpicker_are_not_read(archive: Path, tmp_path: Path) -> None:
    # An archive whose aggregates nitpicker stored before Referrer-Policy and Permissions-Policy were counted.
    old = tmp_path / "old.nitpicker"
    old.write_bytes(archive.read_bytes())
    with ArchiveWriter.open(old) as writer:
        conn = writer._conn
        (value,) = conn.execute("SELECT value FROM agg_value WHERE name = 'list_totals'").fetchone()
        stale = json.loads(value)
        stale["headers"] = {k: v for k, v in stale["headers"].items() if k in KEYS[:4]}
        conn.execute("UPDATE agg_value SET value = ? WHERE name = 'list_totals'", (json.dumps(stale),))
        conn.execute("UPDATE agg_commit SET version = 4")  # the last version with four headers
        writer.write()
    with open_archive(old) as reader:
        assert aggregates.stored(reader, 1) is None
        totals = aggregates.value(reader, 1, "list_totals")["headers"]
    assert totals["referrer_policy"] == 1 and totals["permissions_policy"] == 2
