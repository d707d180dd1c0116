"""A page an update finds deleted (200 → 404) is "gone", not "modified", and its vanished findings are "gone
with the page", not "fixed" (issue 33: an update that deleted a page showed it modified and counted its nine
vanished findings as fixed). Over a real crawl pair of /change-named/ read without a browser: its page ``b``
answers 404 in the second version, its page ``c`` redirects (a moved page: its findings stay fixed)."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query


@pytest.fixture(scope="module")
def pair(site: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = f"{site}/change-named/gone-{uuid.uuid4().hex[:8]}/"
    archive = tmp_path_factory.mktemp("gone") / "site.nitpicker"
    first = run_cli("crawl", "--render", "never", "-o", str(archive), root)
    assert first.returncode == 0, first.stderr
    with urllib.request.urlopen(root + "__next") as answer:
        assert json.load(answer)["version"] == 2
    update = run_cli("crawl", "--render", "never", "--update", str(archive))
    assert update.returncode in (0, 2), update.stderr
    return {"root": root, "archive": archive, "update": update.stdout}


def ask(archive: Path, name: str, **params: Any) -> Any:
    with open_archive(archive) as reader:
        return run_query(query_registry(make_plugin_manager()), reader, name, params)


def test_a_deleted_page_is_gone_in_the_diff_not_modified(pair: dict[str, Any]) -> None:
    b = pair["root"] + "b"
    answer = ask(pair["archive"], "diff")
    assert b in answer["gone"] and b not in answer["modified"], answer
    command = run_cli("diff", str(pair["archive"]))
    assert command.returncode == 0, command.stderr
    said = json.loads(command.stdout)
    assert b in said["gone"] and b not in said["modified"]
    page = run_cli("diff", str(pair["archive"]), "--url", b)
    assert json.loads(page.stdout)["status"] == "gone", page.stdout


def test_findings_of_a_deleted_page_are_gone_with_it_not_fixed(pair: dict[str, Any]) -> None:
    b, c = pair["root"] + "b", pair["root"] + "c"
    rows = {row["id"]: row for row in ask(pair["archive"], "issues")["items"]}
    frame = rows["missing-x-frame-options"]  # on every HTML page of version 1: b and c among them
    assert (frame["fixed"], frame["gone"]) == (1, 1), frame
    fixed = ask(pair["archive"], "issue-urls", check="missing-x-frame-options", state="fixed")
    assert [item["url"] for item in fixed["items"]] == [c] and fixed["total"] == 1
    gone = ask(pair["archive"], "issue-urls", check="missing-x-frame-options", state="gone")
    assert [(item["url"], item["state"]) for item in gone["items"]] == [(b, "gone")]
    changes = ask(pair["archive"], "issue-changes")
    assert changes["gone"]["findings"] == sum(row["gone"] or 0 for row in rows.values()) > 0
    assert changes["fixed"]["findings"] == sum(row["fixed"] or 0 for row in rows.values())
    assert all(b not in [u["url"] for u in item["urls"]] for item in changes["fixed"]["items"])


def test_the_issues_text_names_the_findings_gone_with_their_pages(pair: dict[str, Any]) -> None:
    shown = run_cli("issues", str(pair["archive"]), "--format", "text")
    assert shown.returncode in (0, 3), shown.stderr
    gone = "Gone with their pages (an error now, or no longer crawled) since commit 1: 9 findings of 9 checks"
    assert gone in shown.stdout.splitlines(), shown.stdout
    assert f"{pair['root']}b" not in shown.stdout.split("Fixed since commit 1")[1].split("Gone with")[0]


def test_the_viewer_shows_the_gone_page_and_its_findings(pair: dict[str, Any]) -> None:
    from urllib.parse import quote

    from nitpicker_viewer.app import create_app

    b = pair["root"] + "b"
    app = create_app(pair["archive"], make_plugin_manager())
    try:
        client = app.test_client()
        diff = client.get("/diff")
        assert diff.status_code == 200
        assert (
            'id="diff-gone"' in diff.text and b in diff.text.split('id="diff-gone"')[1].split("</section>")[0]
        )
        page = client.get(f"/page?url={quote(b, safe='')}")  # its issues, the gone ones among them
        assert page.status_code == 200, page.text[-2000:]
        gone = client.get("/issue?check=missing-x-frame-options&state=gone")
        assert gone.status_code == 200 and b in gone.text
    finally:
        app.config["NITPICKER_CLOSE"]()
