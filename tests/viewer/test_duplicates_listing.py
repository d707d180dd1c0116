"""A duplicate group larger than a cell shows: the view asks only for the URLs it shows, says how many more
there are, and the export and the API still give every URL; the viewer's kept answers are copies."""

from __future__ import annotations

import csv
import io

import pytest
from archives import SITE, build_archive

from nitpicker_testing.archives import page
from nitpicker_viewer.app import CELL_LIST_LIMIT

GROUP = CELL_LIST_LIMIT + 10


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, viewer_over):
    pages = [page(f"{SITE}/p{n:03d}", title="Same title") for n in range(GROUP)]
    pages += [page(f"{SITE}/a", title="Twin"), page(f"{SITE}/b", title="Twin")]
    archive = build_archive(tmp_path_factory.mktemp("dups") / "dups.nitpicker", pages)
    with viewer_over(archive) as app:
        yield app.test_client()


def test_the_query_lists_at_most_the_urls_asked_for(client) -> None:
    every = client.get("/api/duplicates").get_json()
    assert [(g["value"], g["count"], len(g["urls"])) for g in every["items"]] == [
        ("Same title", GROUP, GROUP),
        ("Twin", 2, 2),
    ]
    few = client.get("/api/duplicates?urls=3").get_json()
    assert [(g["count"], g["urls"]) for g in few["items"]] == [
        (GROUP, [f"{SITE}/p000", f"{SITE}/p001", f"{SITE}/p002"]),
        (2, [f"{SITE}/a", f"{SITE}/b"]),
    ]
    assert few["total"] == 2
    assert client.get("/api/duplicates?urls=1&limit=1&offset=1").get_json()["items"] == [
        {"value": "Twin", "count": 2, "urls": [f"{SITE}/a"]}
    ]


def test_the_view_shows_a_cells_worth_and_the_export_every_url(client) -> None:
    html = client.get("/duplicates").get_data(as_text=True)
    first = html.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert first.count('href="/page?url=') == CELL_LIST_LIMIT
    assert "10 more" in first and f"{SITE}/p{CELL_LIST_LIMIT:03d}<" not in first
    rows = list(csv.reader(io.StringIO(client.get("/duplicates?export=csv").get_data(as_text=True))))
    assert rows[1][:2] == ["Same title", str(GROUP)] and rows[1][2].count(SITE) == GROUP
    exported = client.get("/duplicates?export=json").get_data(as_text=True)
    assert "urls_total" not in exported and exported.count(SITE) == GROUP + 2


def test_a_kept_answer_is_a_copy(client) -> None:
    from nitpicker_viewer.app import query

    with client.application.test_request_context("/duplicates"):
        first = query("duplicates", urls=2)
        first["items"][0]["urls"].append("changed by a view")
        first["items"].clear()
        again = query("duplicates", urls=2)
    assert [len(g["urls"]) for g in again["items"]] == [2, 2]
