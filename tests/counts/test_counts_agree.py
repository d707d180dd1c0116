"""One crawl, every front door, the same numbers: pages, URLs, status classes and each check's findings.

Two archives: the demo (`nitpicker pipeline` with no URL, run twice, so its second commit has new and fixed
findings) and the docs-like site (test_server's /docs-en/ crawled from its tutorial). For each, the terminal
summary of the real command in a pty, the `summary`, `issues` and `issue-urls` queries, the `issues` table,
the viewer (Flask test client) and the XLSX and CSV sheets read back must say exactly the same thing for the
same count.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from support import run_cli

sys.path.insert(0, str(Path(__file__).parents[1] / "cli_terminal"))
from pty_terminal import Terminal  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# what each crawl holds, counted by hand from the sites (nitpicker_demo version 2; test_server/routes/docs_en.py)
EXPECTED = {
    "demo": {
        "pages": 23,
        "internal_urls": 28,
        "external_urls": 2,
        "urls": 30,
        "4xx": 4,
        "5xx": 1,
        "failed": 0,
        "internal_4xx": 3,
    },
    # pages: tutorial index, intro, controlflow; internal too: missing.html (404) and, outside the scope (only
    # checked), library, glossary and whatsnew/changelog (404); external: the 404 mirror and the unresolvable host
    "docs": {
        "pages": 3,
        "internal_urls": 7,
        "external_urls": 2,
        "urls": 9,
        "4xx": 3,
        "5xx": 0,
        "failed": 1,
        "internal_4xx": 2,
    },
}


def _terminal(work: Path, *args: str, code: int) -> str:
    term = Terminal(*args, cwd=work)
    exited = term.wait()
    shown = "\n".join(term.fragments())
    assert exited == code, shown[-2000:]
    return shown[shown.index("Crawl complete:") :]


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def doors(request, site, tmp_path_factory) -> dict[str, Any]:
    """One site's archive crawled on a terminal, its terminal summary, its sheets and the viewer over it."""
    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    work = Path(tmp_path_factory.mktemp(request.param))
    archive = work / "audit.nitpicker"
    if request.param == "demo":  # only the closed partner (an external link) fails: exit 2
        _terminal(work, "pipeline", "-o", archive.name, "--no-analyze", code=2)
        terminal = _terminal(work, "pipeline", "-o", archive.name, "--no-analyze", code=2)
    else:
        terminal = _terminal(
            work, "crawl", f"{site}/docs-en/tutorial/index.html", "-o", archive.name, "--no-image", code=2
        )
    for args in (("--xlsx", "audit.xlsx"), ("--csv", "sheets")):
        written = run_cli("report", str(archive), *args, "--all", cwd=work, timeout=300)
        assert written.returncode == 0, written.stderr
    table = run_cli("issues", str(archive), "--table", cwd=work, timeout=300)
    assert table.returncode == 0, table.stderr
    pm = make_plugin_manager()
    registry = query_registry(pm)
    with open_archive(archive) as reader:
        answers = {name: run_query(registry, reader, name, {}, None) for name in ("summary", "issues")}
        lists = {
            row["id"]: run_query(registry, reader, "issue-urls", {"check": row["id"], "limit": 10000}, None)
            for row in answers["issues"]["items"]
            if row["findings"] or row["fixed"]
        }
    app = create_app(archive, pm)
    yield {
        "site": request.param,
        "terminal": terminal,
        "work": work,
        "table": table.stdout,
        "viewer": app.test_client(),
        "lists": lists,
        **answers,
    }
    app.config["NITPICKER_CLOSE"]()


def _html(doors: dict[str, Any], path: str) -> str:
    response = doors["viewer"].get(path)
    assert response.status_code == 200, path
    return response.get_data(as_text=True)


def _listed(doors: dict[str, Any], path: str) -> int:
    """The total a viewer table says it lists ("Rows 1–25 of 25")."""
    found = re.search(r"Rows \d+–\d+ of ([\d,]+)", _html(doors, path))
    assert found, path
    return int(found.group(1).replace(",", ""))


def _xlsx(doors: dict[str, Any], sheet: str) -> list[list[Any]]:
    from openpyxl import load_workbook

    book = load_workbook(doors["work"] / "audit.xlsx", read_only=True)
    return [list(row) for row in book[sheet].iter_rows(values_only=True)]


def _csv(doors: dict[str, Any], name: str) -> list[list[str]]:
    with open(doors["work"] / "sheets" / name, encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def test_the_site_is_what_the_counts_are_about(doors):
    # exact figures of each crawl; the 404s of both sites are text/plain, so a list of HTML pages alone would
    # hide them
    totals, expected = doors["summary"]["totals"], EXPECTED[doors["site"]]
    assert {k: totals[k] for k in expected if k in totals} == {
        k: v for k, v in expected.items() if k in totals
    }
    assert totals["internal"]["4xx"] == expected["internal_4xx"]
    assert set(doors["summary"]["definitions"]) >= {
        "pages",
        "internal_urls",
        "external_urls",
        "urls",
        "failed",
        "status_class",
        "errors",
        "findings",
        "share",
    }


def test_pages_and_urls_agree_on_every_front_door(doors):
    totals = doors["summary"]["totals"]
    pages, internal, external = totals["pages"], totals["internal_urls"], totals["external_urls"]
    # the terminal summary of the crawl
    assert doors["terminal"].startswith(f"Crawl complete: {pages} pages of {internal} internal URLs "), doors[
        "terminal"
    ]
    assert f", {external} external URLs checked in " in doors["terminal"].splitlines()[0]
    # the viewer: the summary's cards and the lists they lead to
    summary = _html(doors, "/summary")
    cards = dict(re.findall(r'id="card-([a-z-]+)"[^>]*><span class="card-value">([\d,]+)<', summary))
    assert cards == {
        "pages": str(pages),
        "internal-urls": str(internal),
        "external-urls": str(external),
        "blocked": str(totals["blocked"]),
    }
    assert _listed(doors, "/pages?strict=1") == pages
    assert _listed(doors, "/pages?every_type=1") == internal
    assert _listed(doors, "/pages?every_type=1&external=1") == totals["urls"]
    # the sheets: Cover and Summary (XLSX and CSV alike), Page List one row per page
    for rows in (_xlsx(doors, "Cover"), _csv(doors, "cover.csv")):
        cover = {row[1]: row[2] for row in rows if row[0] == "Totals"}
        assert [int(cover[k]) for k in ("Pages", "Internal URLs", "External URLs")] == [
            pages,
            internal,
            external,
        ]
    for rows in (_xlsx(doors, "Summary"), _csv(doors, "summary.csv")):
        named = {(row[0], row[1]): int(row[2]) for row in rows[1:] if row[0] in ("URLs", "Pages")}
        assert named == {
            ("URLs", "internal"): internal,
            ("URLs", "external"): external,
            ("Pages", "internal"): pages,
        }
    assert len(_xlsx(doors, "Page List")) - 1 == pages == len(_csv(doors, "page-list.csv")) - 1


def test_a_status_class_lists_every_url_of_that_class(doors):
    totals = doors["summary"]["totals"]
    # the measured defect: Pages filtered by 4xx said "Nothing to show" while the Summary counted 404s
    assert _listed(doors, "/pages?status=4xx") == totals["internal"]["4xx"] > 0
    assert _listed(doors, "/pages?status=4xx&external=1") == totals["4xx"]
    assert _listed(doors, "/pages?status=404&external=1") == totals["4xx"]  # every 4xx here is a 404
    assert _listed(doors, "/pages?status=5xx&external=1") == totals["5xx"]
    # narrowing the type stays possible: no 4xx of the crawl is an HTML page
    assert "Nothing to show" in _html(doors, "/pages?status=4xx&strict=1")
    for rows in (_xlsx(doors, "Cover"), _csv(doors, "cover.csv")):
        cover = {row[1]: row[2] for row in rows if row[0] == "Totals"}
        assert [int(cover[k]) for k in ("2xx", "3xx", "4xx", "5xx", "Failed")] == [
            totals[k] for k in ("2xx", "3xx", "4xx", "5xx", "failed")
        ]
    inside, outside = totals["internal"], totals["external"]

    def side(counts: dict[str, int], name: str) -> str:
        parts = [f"{counts[k]} {k}" for k in ("4xx", "5xx", "failed") if counts[k]]
        return f"{sum(counts[k] for k in ('4xx', '5xx', 'failed'))} {name}" + (
            f" ({' · '.join(parts)})" if parts else ""
        )

    assert (
        doors["terminal"].splitlines()[1]
        == f"Errors: {side(inside, 'internal')}, {side(outside, 'external')}"
    )


def _overview_rows(html: str) -> dict[str, dict[str, str]]:
    rows = {}
    for check, body in re.findall(r'<tr data-check="([^"]+)"[^>]*>(.*?)</tr>', html, re.S):
        # a count is the text of its cell, the link to its URL list included
        cells = dict(re.findall(r'data-col="([a-z]+)">(.*?)</td>', body, re.S))
        rows[check] = {key: re.sub(r"<[^>]*>", "", value).strip() for key, value in cells.items()}
    return rows


def test_each_checks_count_agrees_everywhere(doors):
    items = [row for row in doors["issues"]["items"] if row["findings"]]
    assert len(items) >= 10
    denominator = doors["issues"]["share_of"]
    assert denominator["urls"] == doors["summary"]["totals"]["internal_urls"]
    overview = _overview_rows(_html(doors, "/"))
    text = {
        line.split()[2]: line.split() for line in doors["table"].splitlines()[2:] if len(line.split()) > 8
    }
    sheets = {
        "xlsx": {row[0]: row for row in _xlsx(doors, "Issues")[1:]},
        "csv": {row[0]: row for row in _csv(doors, "issues.csv")[1:]},
    }
    header = _xlsx(doors, "Issues")[0]
    at = {name: header.index(name) for name in ("Type", "URLs", "% of URLs", "Findings")}
    for row in items:
        check, share = row["id"], f"{row['share']}%"
        assert row["share"] == round(100 * row["urls"] / denominator["urls"], 1)
        assert overview[check] == {
            **overview[check],
            "urls": str(row["urls"]),
            "findings": str(row["findings"]),
            "share": share,
            "type": row["type"].capitalize(),
        }, check
        assert text[check][1] == row["type"] and text[check][3] == str(row["findings"]), check
        assert text[check][7:9] == [str(row["urls"]), share], check
        xlsx, csv_row = sheets["xlsx"][check], sheets["csv"][check]
        assert (xlsx[at["Type"]], xlsx[at["URLs"]], xlsx[at["Findings"]]) == (
            row["type"],
            row["urls"],
            row["findings"],
        )
        assert round(xlsx[at["% of URLs"]] * 100, 1) == row["share"], check
        assert (csv_row[at["URLs"]], csv_row[at["Findings"]]) == (str(row["urls"]), str(row["findings"])), (
            check
        )
        assert float(csv_row[at["% of URLs"]].rstrip("%")) == row["share"], (
            check
        )  # the CSV writes 80% for 80.0%
        page = _html(doors, f"/issue?check={check}")
        facts = dict(re.findall(r'data-col="([a-z]+)">([^<]*)', page))
        assert (facts["findings"], facts["urls"], facts["share"].strip()) == (
            str(row["findings"]),
            str(row["urls"]),
            share,
        ), check
    assert f"% of URLs: of the {denominator['urls']} internal URLs" in doors["table"]
    assert f"of the {denominator['urls']} internal URLs" in _html(doors, "/")


def test_a_checks_list_shows_as_many_rows_as_its_count(doors):
    # a check's list is its findings on the commit (a merged defect's: one row per defect): as many rows as
    # the number next to it; the base's fixed ones are listed on request
    # the measured defect: the list also held the base's fixed findings (broken-link: 3 findings, 4 rows)
    fixed = [row["id"] for row in doors["issues"]["items"] if row["fixed"]]
    assert bool(fixed) == (doors["site"] == "demo"), fixed
    for row in doors["issues"]["items"]:
        if not (row["findings"] or row["fixed"]):
            continue
        listed = doors["lists"][row["id"]]
        assert listed["total"] == len(listed["items"]) == row["findings"], row["id"]
        assert _listed(doors, f"/issue?check={row['id']}") == row["findings"], row["id"]
        assert _listed(doors, f"/issue?check={row['id']}&state=fixed") == row["fixed"], row["id"]


def test_the_status_bars_of_the_summary_lead_to_as_many_urls(doors):
    # the measured defect on surfaces that existed before: Pages filtered by 4xx said "Nothing to show" while
    # the Summary's status bars counted the (text/plain) 404s
    summary = _html(doors, "/summary")
    bars = summary[summary.index('id="status-bars"') :]
    bars = bars[: bars.index("</table>")]
    codes = {
        int(code): int(count.replace(",", ""))
        for code, count in re.findall(
            r'<th scope="row"><a href="[^"]*">(\d{3})</a></th><td class="k-num">([\d,]+)</td>', bars
        )
    }
    fours = sum(n for code, n in codes.items() if 400 <= code < 500)
    assert fours and _listed(doors, "/pages?status=4xx&external=1") == fours
    assert "Nothing to show" not in _html(doors, "/pages?status=4xx")
