"""Reports a client can receive: notes on their own cell, percentages, filters, analyzer names, a cover.

One report per destination (XLSX, CSV, Google Sheets through the local stand-in, written in this process)
from the shared crawled archive, each read back with the reader a client's program would use.
"""

from __future__ import annotations

import csv
import json
import os
import re
from unittest import mock

import pytest
from standin import Store, serve

BOOK = "1ClientReadyBook_x"
URL = f"https://docs.google.com/spreadsheets/d/{BOOK}/edit"
FIRST_SHEETS = ["Cover", "Issues", "Issue URLs", "Summary", "Page List"]
ANCHORS = "Linkcount: anchors"  # the test analyzer (not installed for the CLI): its name and column key


@pytest.fixture(scope="module")
def out(report_archive, tmp_path_factory):
    return tmp_path_factory.mktemp("client")


def _report(archive, destination: str, options: dict):
    """``nitpicker report`` in this process (the CLI itself is tested by test_report_files): every sheet."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import run_report

    with open_archive(archive) as reader:
        return run_report(make_plugin_manager(), reader, destination, {**options, "silent": True})


@pytest.fixture(scope="module")
def workbook(report_archive, out):
    from openpyxl import load_workbook

    _report(report_archive, "xlsx", {"file": str(out / "client.xlsx")})
    return load_workbook(out / "client.xlsx")


@pytest.fixture(scope="module")
def csv_files(report_archive, out):
    files = _report(report_archive, "csv", {"dir": str(out / "csv")})

    def read(name: str) -> list[list[str]]:
        with (out / "csv" / name).open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.reader(handle))

    return files, read


@pytest.fixture(scope="module")
def google(report_archive, out, rsa_key):
    store = Store(public_key=rsa_key[1])
    store.add_book(BOOK)
    server, base = serve(store)
    (out / "sa.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "nitpicker-test",
                "private_key_id": "k1",
                "private_key": rsa_key[0],
                "client_email": "reporter@nitpicker-test.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": f"{base}/token",
            }
        )
    )
    try:
        with mock.patch.dict(os.environ, {"NITPICKER_GOOGLE_API_URL": base}):
            _report(report_archive, "google-sheets", {"url": URL, "credentials": str(out / "sa.json")})
        yield store
    finally:
        server.shutdown()


def _header(ws) -> list[str]:
    return [c.value for c in ws[1]]


def test_xlsx_notes_sit_only_on_their_own_cell(workbook, site):
    pages = workbook["Page List"]
    header = _header(pages)
    noted = {}  # (row, column name) → note, for every comment in the sheet
    for row in pages.iter_rows(min_row=2):
        for cell in row:
            if cell.comment is not None:
                noted[(cell.row, header[cell.column - 1])] = cell.comment.text
    alpha = next(
        r[0].row for r in pages.iter_rows(min_row=2) if r[2].value and "/report-site/alpha" in r[2].value
    )
    # the Redirect From note is on Redirect From only: Language, Internal Links, … carry none
    assert noted[(alpha, "Redirect From")] == site + "/report-site/old"
    assert (alpha, "Language") not in noted and (alpha, "Internal Links") not in noted
    # every note left on the sheet belongs to a column that makes notes
    assert {column for _, column in noted} <= {
        "Title",
        "Redirect From",
        "Internal Bad Links",
        "External Bad Links",
        "Internal Referrers",
    }, sorted(noted)
    # and no two cells of a row share one note text (a repeated note is the defect's signature)
    for row in {r for r, _ in noted}:
        texts = [text for (r, _), text in noted.items() if r == row]
        assert len(texts) == len(set(texts)), (row, texts)
    links = workbook["Links"]
    link_notes = [(c.row, c.column) for r in links.iter_rows(min_row=2) for c in r if c.comment is not None]
    headers_column = _header(links).index("Headers") + 1
    # Links: the Headers note sits on Headers; the Remarks cell after it has none
    assert all(column != headers_column + 1 for _, column in link_notes)


def test_xlsx_percentages_filters_frozen_headers(workbook):
    summary = workbook["Summary"]
    header = _header(summary)
    share = header.index("Share") + 1
    rows = {(r[0].value, r[1].value): r for r in summary.iter_rows(min_row=2)}
    cell = rows[("Status", "200")][share - 1]
    assert 0 < cell.value < 1 and cell.number_format == "0.0%"  # a fraction shown as a percentage
    assert rows[("Metadata filled (internal HTML)", "title")][share - 1].number_format == "0.0%"
    for ws in workbook.worksheets:
        last = ws.cell(1, ws.max_column).column_letter
        assert ws.auto_filter.ref == f"A1:{last}{max(ws.max_row, 2)}", ws.title
        assert ws.freeze_panes and ws.freeze_panes.endswith("2"), ws.title  # the header row stays in view
        assert all(c.font.b for c in ws[1]), ws.title


def test_xlsx_analyzer_columns_are_named_after_their_analyzer(workbook):
    header = _header(workbook["Page List"])
    assert header[-1] == ANCHORS and "anchors" not in header
    rows = list(workbook["Page List"].iter_rows(min_row=2, values_only=True))
    assert [r[-1] for r in rows] == [5, 2, 1, 0]  # the analyzer's counts, unchanged


def test_xlsx_cover_summarises_and_the_appendix_holds_settings_and_tools(workbook, site, report_archive):
    assert workbook.sheetnames[:5] == FIRST_SHEETS and workbook.sheetnames[-1] == "Appendix"
    cover = {(r[0], r[1]): r[2] for r in workbook["Cover"].iter_rows(min_row=2, values_only=True)}
    appendix = {(r[0], r[1]): r[2] for r in workbook["Appendix"].iter_rows(min_row=2, values_only=True)}
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import ReportContext

    with open_archive(report_archive) as reader:
        commit = reader.resolve(None)
        commits = next(c for c in reader.commits() if c["id"] == commit)
        answer = ReportContext(make_plugin_manager(), reader, commit).query("issues")
    assert cover[("Site", "Site")] == site.split("://", 1)[1]
    assert cover[("Site", "Start URL")] == site + "/report-site/"
    assert cover[("Report", "Commit")] == commits["id"]
    assert cover[("Report", "Crawled")] == commits["finished_at"]
    assert cover[("Report", "Compared with")] == "nothing: no earlier commit"  # one crawl
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", cover[("Report", "Date")])
    # the raw settings and the tools are in the Appendix, no longer on the Cover
    assert not any(section in ("Settings", "Tools", "Analyzer settings") for section, _ in cover)
    assert appendix[("Settings", "parallels")] == 2
    assert appendix[("Commit", "Crawled")] == commits["finished_at"]
    env = commits["environment"]
    assert appendix[("Tools", "nitpicker")] == env["nitpicker"]
    assert appendix[("Tools", "Python")] == env["python"]
    assert appendix[("Tools", "Chromium")] == env["chromium"]
    assert appendix[("Tools", "linkcount")].startswith("0")  # the analyzer run: its version
    assert appendix[("What the numbers mean", "Pages")].startswith("internal URLs")
    assert cover[("Totals", "Internal URLs")] == 5 and cover[("Totals", "Pages")] == 4
    issues = [r for r in answer["items"] if r["state"] == "ok"]
    assert cover[("Totals", "4xx")] == 1 and cover[("Totals", "2xx")] == 4
    assert (
        cover[("Totals", "Findings")] == sum(r["findings"] for r in issues) > 2
    )  # the analyzer's 2 and more
    assert cover[("Totals", "Checks with findings")] == sum(1 for r in issues if r["findings"])


def test_csv_percentages_analyzer_names_and_cover(csv_files, site):
    files, read = csv_files
    assert files[:4] == ["cover.csv", "issues.csv", "issue-urls.csv", "summary.csv"]
    summary = read("summary.csv")
    assert ["Status", "200", "4", "66.67%"] in summary and ["Status", "404", "1", "16.67%"] in summary
    assert read("page-list.csv")[0][-1] == ANCHORS
    cover = {(r[0], r[1]): r[2] for r in read("cover.csv")[1:]}
    assert cover[("Site", "Start URL")] == site + "/report-site/" and cover[("Totals", "Pages")] == "4"
    assert files[-1] == "appendix.csv" and ["Settings", "parallels", "2"] in read("appendix.csv")


def test_google_sheets_gets_the_same_corrections(google, site):
    titles = google.titles(BOOK)
    assert titles[:5] == FIRST_SHEETS
    for title in titles:
        if title == "Sheet1":
            continue
        sheet = google.sheet(BOOK, title)
        assert sheet["properties"]["gridProperties"]["frozenRowCount"] == 1, title
        basic = sheet.get("filter")
        assert basic is not None and basic["range"]["startRowIndex"] == 0, title
        assert basic["range"]["endColumnIndex"] == len(sheet["rows"][0]), title
    pages = google.sheet(BOOK, "Page List")["rows"]
    header = [c["userEnteredValue"]["stringValue"] for c in pages[0]]
    assert header[-1] == ANCHORS
    notes = {header[i] for row in pages[1:] for i, c in enumerate(row) if c.get("note")}
    assert notes <= {
        "Title",
        "Redirect From",
        "Internal Bad Links",
        "External Bad Links",
        "Internal Referrers",
    }
    summary = google.sheet(BOOK, "Summary")
    share = [c["userEnteredValue"]["stringValue"] for c in summary["rows"][0]].index("Share")
    percent = [f["repeat"] for f in summary["formats"] if "repeat" in f]
    assert [
        (p["range"]["startColumnIndex"], p["range"]["startRowIndex"], p["cell"]["userEnteredFormat"])
        for p in percent
    ] == [(share, 1, {"numberFormat": {"type": "PERCENT", "pattern": "0.0%"}})]
    cover = {
        (r[0]["userEnteredValue"]["stringValue"], r[1]["userEnteredValue"]["stringValue"]): r[2]
        for r in google.sheet(BOOK, "Cover")["rows"][1:]
    }
    assert cover[("Site", "Start URL")] == {"userEnteredValue": {"stringValue": site + "/report-site/"}}


def test_xlsx_notes_stay_put_whatever_follows_them(tmp_path):
    """Noted cells followed by nothing, by numbers, by other notes, by percentages and links: each note once."""
    from nitpicker_xlsx.workbook import write_xlsx
    from openpyxl import load_workbook

    from nitpicker_core import Cell, Sheet

    columns = ("A", "B", "C", "D", "E", "F")
    rows = [
        [Cell(1, "one"), None, 3, "text", 0.5, "https://x.test/"],
        [Cell("", "empty"), Cell(None, "none"), Cell(2, "two"), 4, Cell(0.25, "quarter"), "https://x.test/a"],
        ["plain", 2, 3, Cell("last", "end"), None, None],
    ]
    sheet = Sheet(
        "Notes", columns, lambda reader, commit: rows, links=("F",), number_formats={"E": "percent"}
    )
    write_xlsx([(sheet, iter(rows))], {"file": str(tmp_path / "n.xlsx"), "silent": True})
    ws = load_workbook(tmp_path / "n.xlsx")["Notes"]
    notes = {c.coordinate: c.comment.text for r in ws.iter_rows() for c in r if c.comment is not None}
    assert notes == {"A2": "one", "A3": "empty", "B3": "none", "C3": "two", "E3": "quarter", "D4": "end"}
    assert [c.value for c in ws[2]][:5] == [1, None, 3, "text", 0.5] and ws["E2"].number_format == "0.0%"
    assert (
        ws["E3"].number_format == "0.0%"
        and ws["F3"].value == '=HYPERLINK("https://x.test/a","https://x.test/a")'
    )
    assert ws.auto_filter.ref == "A1:F4" and ws.freeze_panes == "A2"


def test_analyzer_headers_use_the_installed_analyzers_short_labels():
    from nitpicker_sheets.pages import analyzer_header

    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import ReportContext

    labels = ReportContext(make_plugin_manager(), None, 1).analyzer_labels()
    assert labels["axe"] == "Axe" and labels["lighthouse"] == "Lighthouse" and labels["markup"] == "Markup"
    assert analyzer_header("axe", "Critical", labels) == "Axe: Critical"
    assert analyzer_header("axe", "Total", labels) == "Axe: Total"
    assert analyzer_header("lighthouse", "Performance", labels) == "Lighthouse: Performance"
    assert analyzer_header("markup", "Parse errors", labels) == "Markup: Parse errors"
    # labels that already say whose they are stay as they are
    assert analyzer_header("main-contents", "Main content words", labels) == "Main content words"
    assert analyzer_header("search", "Search total", labels) == "Search total"
    assert analyzer_header("gone", "score", labels) == "Gone: score"  # not installed now: its name


def test_the_cover_and_the_issues_sheet_share_one_issues_query(report_archive):
    """``issues`` can take seconds on a big commit without stored findings: one call serves both sheets."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import ReportContext, render_sheets, select_sheets

    pm = make_plugin_manager()
    with open_archive(report_archive) as reader:
        commit = reader.resolve(None)
        context = ReportContext(pm, reader, commit, {})
        calls = []
        original = context.run

        def counting(name, **params):
            calls.append(name)
            return original(name, **params)

        context.run = counting
        rendered = [
            (sheet.name, list(rows))
            for sheet, rows in render_sheets(select_sheets(pm, ["Cover", "Issues"]), reader, commit, context)
        ]
    assert [name for name, _ in rendered] == ["Cover", "Issues"] and all(rows for _, rows in rendered)
    assert calls.count("issues") == 1 and calls.count("summary") == 1
