"""The Issues sheet, first in every destination: read back from XLSX, CSV and the Google Sheets stand-in."""

from __future__ import annotations

import csv
import json

import pytest
from archives import SITE
from support import run_cli

from nitpicker_core import Anchor, ScrapeResult

HEADER = [
    "Check",
    "Title",
    "Priority",
    "Type",
    "Category",
    "URLs",
    "% of URLs",
    "Findings",
    "New",
    "Fixed",
    "Persisting",
    "Description",
    "How to Fix",
    "Help",
    "Note",
]
COUNTS = ("URLs", "Findings", "New", "Fixed", "Persisting")
FINDINGS = HEADER.index("Findings")
BOOK = "1IssuesBook_sheet-0123"
URL = f"https://docs.google.com/spreadsheets/d/{BOOK}/edit"


def _page(path: str, body: str = "", status: int = 200, links: tuple[str, ...] = ()) -> ScrapeResult:
    html = (
        f"<!doctype html><html lang='en'><head><title>{path}</title></head>"
        f"<body><h1>{path}</h1>{body}</body></html>"
    )
    return ScrapeResult(
        url=SITE + path,
        status=status,
        status_text="OK",
        content_type="text/html",
        content_length=100,
        metadata={"title": path, "lang": "en"},
        html=html,
        anchors=[Anchor(SITE + link, link) for link in links],
    )


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Commit 1: / links to /gone (404). Commit 2: /gone is fixed, / links to /broken (404), /old has a
    <center>; only commit 2 is analysed (by markup, through the real CLI); axe never ran."""
    from archives import build_archive

    path = tmp_path_factory.mktemp("issues-report") / "site.nitpicker"
    build_archive(path, [_page("/", links=("/gone", "/old")), _page("/gone", status=404), _page("/old")])
    build_archive(
        path,
        [
            _page("/", links=("/broken", "/old")),
            _page("/broken", status=404),
            _page("/old", "<center>old</center>"),
        ],
    )
    result = run_cli("analyze", str(path), "--plugin", "markup", timeout=300)
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def answer(archive):
    """The `issues` query's own answer for the HEAD commit against its parent: what the sheet must show."""
    result = run_cli("query", str(archive), "issues", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def xlsx(archive):
    result = run_cli("report", str(archive), "--xlsx", "out.xlsx", "--all", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return archive.parent / "out.xlsx"


def _rows(sheet):
    return [[c.value for c in row] for row in sheet.iter_rows()]


def _by_check(rows):
    return {row[0]: dict(zip(HEADER, row, strict=True)) for row in rows[1:]}


def test_xlsx_issues_sheet_follows_the_cover_with_one_row_per_issue(xlsx, answer):
    from openpyxl import load_workbook

    wb = load_workbook(xlsx)
    assert wb.sheetnames[:4] == ["Cover", "Issues", "Issue URLs", "Summary"]  # Issues right after the cover
    rows = _rows(wb["Issues"])
    assert rows[0] == HEADER
    by_check = _by_check(rows)
    assert (
        sorted(by_check) == sorted(item["id"] for item in answer["items"])
        and len(rows) - 1 == answer["total"]
    )
    assert (answer["commit"], answer["base"]) == (2, 1)

    broken = by_check[
        "broken-link"
    ]  # /gone fixed, /broken new: against the parent, not since the first crawl
    assert (broken["Priority"], broken["Category"]) == ("high", "links")
    assert [broken[k] for k in COUNTS] == [1, 1, 1, 1, 0]
    assert (
        broken["Help"].startswith('=HYPERLINK("https://') and broken["Description"] and broken["How to Fix"]
    )
    # its type, and its URLs as a share of the internal URLs: the issues query's own numbers
    row = next(item for item in answer["items"] if item["id"] == "broken-link")
    assert (broken["Type"], broken["% of URLs"]) == ("issue", round(row["share"] / 100, 4))
    assert row["share"] == round(100 * 1 / answer["share_of"]["urls"], 1)

    # markup ran on the commit, not on its parent: findings counted, new/fixed not comparable — and said so
    center = by_check["markup/obsolete-element"]
    assert [center[k] for k in COUNTS] == [1, 1, "not compared", "not compared", "not compared"]
    assert "markup did not run on the base" in center["Note"]
    # axe never ran: "not analysed", never a 0 that was not counted
    area = by_check["axe/area-alt"]
    assert [area[k] for k in COUNTS] == ["not analysed"] * 5
    assert area["Note"] == "axe did not run on this commit"

    # what is wrong leads: every check with findings comes before every clean one, unknown ones last
    ranks = [
        0 if isinstance(r[FINDINGS], int) and r[FINDINGS] else 1 if isinstance(r[FINDINGS], int) else 2
        for r in rows[1:]
    ]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 2
    found = [r for r in rows[1:] if isinstance(r[FINDINGS], int) and r[FINDINGS]]
    order = ["critical", "high", "medium", "low", "info"]
    assert [order.index(r[2]) for r in found] == sorted(order.index(r[2]) for r in found)


def test_xlsx_issues_sheet_formatting(xlsx, answer):
    from openpyxl import load_workbook

    ws = load_workbook(xlsx)["Issues"]
    assert ws.freeze_panes == "B2" and ws[1][0].font.b
    # no conditional format paints a priority: rows are coloured by whether the check found something
    assert not list(ws.conditional_formatting)
    colours = {"critical": "00B00000", "high": "00E60000", "medium": "00F4B183", "low": "00FFE699"}
    by_check = {item["id"]: item for item in answer["items"]}
    for row in ws.iter_rows(min_row=2):
        item = by_check[row[0].value]
        found = item["state"] == "ok" and item["findings"] > 0
        fills = {(c.fill.fill_type, c.fill.fgColor.rgb) for c in row}
        if found and item["priority"] in colours:
            assert fills == {("solid", colours[item["priority"]])}, item["id"]
        else:  # 0 findings, not analysed, an error, or info: plain
            assert fills == {(None, "00000000")}, item["id"]
    assert by_check["broken-link"]["priority"] == "high"
    broken = next(r for r in ws.iter_rows(min_row=2) if r[0].value == "broken-link")
    assert broken[0].font.color.rgb == "00FFFFFF"  # white on red
    clean = [r for r in ws.iter_rows(min_row=2) if r[2].value in ("critical", "high") and r[7].value == 0]
    assert clean and all(r[0].fill.fill_type is None for r in clean)  # clean critical/high checks: plain
    # a defect several checks find is one row; the check cell's note names each source and its URLs
    merged = next(item for item in answer["items"] if item["id"] == "image-alt")
    row = next(r for r in ws.iter_rows(min_row=2) if r[0].value == "image-alt")
    assert row[0].comment.text.splitlines() == [
        "found by",
        *[
            f"{s}: {'not analysed' if s.split('/')[0] in ('axe', 'lighthouse') else '0 URL(s)'}"
            for s in merged["sources"]
        ],
    ]


def test_csv_issues_file_follows_the_cover_with_the_same_rows(archive, xlsx, answer):
    from openpyxl import load_workbook

    result = run_cli("report", str(archive), "--csv", "out", "--all", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)
    assert files[:2] == ["cover.csv", "issues.csv"] and "csv: Issues:" in result.stderr.splitlines()[1]
    with (archive.parent / "out" / "issues.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == HEADER and len(rows) - 1 == answer["total"]
    broken = _by_check(rows)["broken-link"]
    assert [broken[k] for k in COUNTS] == ["1", "1", "1", "1", "0"]
    assert _by_check(rows)["axe/area-alt"]["Findings"] == "not analysed"
    # the CSV holds what the workbook holds, cell for cell (links as plain URLs)
    expected = _rows(load_workbook(xlsx)["Issues"])
    share = HEADER.index("% of URLs")
    plain = [
        [
            ""
            if v is None
            else str(v).split('"')[1]
            if str(v).startswith("=HYPERLINK")
            else f"{v * 100:.2f}".rstrip("0").rstrip(".") + "%"
            if i == share and isinstance(v, int | float)
            else str(v)
            for i, v in enumerate(r)
        ]
        for r in expected
    ]
    assert rows == plain


def test_google_sheets_issues_worksheet_leads_and_reads_back(archive, answer, standin, service_account):
    store, base = standin
    store.add_book(BOOK, ("Sheet1",))
    result = run_cli(
        "report",
        str(archive),
        "--sheet",
        URL,
        "--credentials",
        service_account.name,
        "--only",
        "issues",
        "--only",
        "violations",
        cwd=service_account.parent,
        env={"NITPICKER_GOOGLE_API_URL": base},
    )
    assert result.returncode == 0, result.stderr
    assert store.titles(BOOK) == ["Issues", "Violations", "Sheet1"]
    stored = store.sheet(BOOK, "Issues")["rows"]

    def text(cell):
        value = cell.get("userEnteredValue", {})
        return next(iter(value.values()), None)

    rows = [[text(c) for c in row] for row in stored]
    assert rows[0] == HEADER and len(rows) - 1 == answer["total"]
    broken = _by_check(rows)["broken-link"]
    assert [broken[k] for k in COUNTS] == [1, 1, 1, 1, 0]
    assert _by_check(rows)["axe/area-alt"]["URLs"] == "not analysed"
    assert not [r for r in store.sheet(BOOK, "Issues")["formats"] if "booleanRule" in r]
    # each row with findings is coloured by its priority, every cell of it; the others are plain
    for stored_row, row in zip(stored[1:], rows[1:], strict=True):
        colours = {json.dumps(c.get("userEnteredFormat"), sort_keys=True) for c in stored_row}
        found = isinstance(row[FINDINGS], int | float) and row[FINDINGS] > 0 and row[2] != "info"
        assert len(colours) == 1 and (colours != {"null"}) == found, row[0]
    high = next(r for r in stored[1:] if text(r[0]) == "broken-link")[0]["userEnteredFormat"]
    assert high["backgroundColor"] == {"red": 0.9, "green": 0.0, "blue": 0.0}


def test_a_first_crawl_says_every_finding_is_new(tmp_path):
    from archives import build_archive

    path = build_archive(
        tmp_path / "one.nitpicker", [_page("/", links=("/gone",)), _page("/gone", status=404)]
    )
    result = run_cli("report", str(path), "--csv", "out", "--only", "issues", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "out" / "issues.csv").open(encoding="utf-8-sig", newline="") as handle:
        broken = _by_check(list(csv.reader(handle)))["broken-link"]
    assert [broken[k] for k in COUNTS] == ["1", "1", "1", "0", "0"]
    assert broken["Note"] == "no earlier commit: every finding is new"


def test_a_failing_check_is_an_error_row_and_the_others_keep_their_counts(archive, tmp_path):
    from nitpicker_core import Check, hookimpl
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import run_report

    def crash(ctx):
        raise RuntimeError("the check's own bug")

    class Plugin:
        @hookimpl
        def register_checks(self, register):
            register(
                Check(
                    "crashing-check",
                    "A check that fails",
                    "links",
                    "high",
                    "Fails on purpose.",
                    "Nothing to fix.",
                    findings=crash,
                )
            )

    pm = make_plugin_manager()
    pm.register(Plugin(), "crashing-plugin")
    with open_archive(archive) as reader:
        run_report(pm, reader, "csv", {"dir": str(tmp_path / "out"), "silent": True}, sheets=["Issues"])
    with (tmp_path / "out" / "issues.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = _by_check(list(csv.reader(handle)))
    assert [rows["crashing-check"][k] for k in COUNTS] == ["error"] * 5
    assert rows["crashing-check"]["Note"] == "RuntimeError: the check's own bug"
    assert [rows["broken-link"][k] for k in COUNTS] == ["1", "1", "1", "1", "0"]


def test_google_sheets_leftover_is_dropped_and_a_moved_worksheet_stays_where_the_user_put_it(
    archive, standin, service_account
):
    store, base = standin
    store.add_book(BOOK, ("Sheet1", "Summary", "Issues (writing)"))  # an interrupted run left a half sheet
    result = run_cli(
        "report",
        str(archive),
        "--sheet",
        URL,
        "--credentials",
        service_account.name,
        "--only",
        "issues",
        "--only",
        "summary",
        cwd=service_account.parent,
        env={"NITPICKER_GOOGLE_API_URL": base},
    )
    assert result.returncode == 0, result.stderr
    assert store.titles(BOOK) == ["Issues", "Sheet1", "Summary"]
    assert [p["properties"]["index"] for p in store.books[BOOK]["sheets"]] == [0, 1, 2]
    assert store.sheet(BOOK, "Summary")["rows"][0][0]["userEnteredValue"] == {"stringValue": "Section"}
