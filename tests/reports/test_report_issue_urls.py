"""The Issue URLs sheet, the summarising Cover, the Appendix and print setup: read back from XLSX (openpyxl),
CSV and the Google Sheets stand-in (gspread) and compared with the `issues` and `issue-urls` queries."""

from __future__ import annotations

import csv
import json

import pytest
from support import run_cli
from test_report_issues import _page

from nitpicker_core import PRIORITIES

HEADER = ["Check", "Title", "Priority", "Type", "State", "URL", "Detail", "Source Page", "Anchor Text"]
BOOK = "1IssueUrlsBook_0123"
URL = f"https://docs.google.com/spreadsheets/d/{BOOK}/edit"


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Commit 1: / links to /gone (404). Commit 2: the link is gone (fixed). Commit 3: / links to /gone again
    (regressed) and to /broken (new), /new is new, /old has a <center>; markup analyses commit 3 only (not
    compared)."""
    from archives import build_archive

    path = tmp_path_factory.mktemp("issue-urls") / "site.nitpicker"
    build_archive(path, [_page("/", links=("/gone", "/old")), _page("/gone", status=404), _page("/old")])
    build_archive(path, [_page("/", links=("/old",)), _page("/old")])
    build_archive(
        path,
        [
            _page("/", links=("/gone", "/broken", "/old")),
            _page("/gone", status=404),
            _page("/broken", status=404),
            _page("/new"),  # its findings are new, between /'s and /old's persisting ones
            _page("/old", "<center>old</center>", links=("/broken",)),
        ],
    )
    result = run_cli("analyze", str(path), "--plugin", "markup", timeout=300)
    assert result.returncode == 0, result.stderr
    return path


def _query(archive, *args):
    result = run_cli("query", str(archive), *args, cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def issues(archive):
    return _query(archive, "issues")


@pytest.fixture(scope="module")
def expected(archive, issues):
    """The sheet's rows as the queries give them: each check with findings, most severe first then by id,
    its `issue-urls` rows (the commit's new and persisting findings) by URL."""
    checks = sorted(
        (r for r in issues["items"] if r["state"] == "ok" and r["findings"]),
        key=lambda r: (PRIORITIES.index(r["priority"]), r["id"]),
    )
    rows = []
    for check in checks:
        answer = _query(archive, "issue-urls", "--check", check["id"], "--limit", "10000")
        assert answer["total"] == len(answer["items"]) == check["findings"]
        for item in sorted(answer["items"], key=lambda i: (i["url"], i["detail"])):
            if check["new"] is None:
                state = "not compared"
            else:
                state = "regressed" if item["regressed"] else item["state"]
            if "target" in item:  # a link check: the link's target, its answer, the page, the anchor
                where = [item["target"], item["answer"], item["url"], item["text"]]
            else:
                where = [item["url"], item["detail"], "", ""]
            rows.append([check["id"], check["title"], check["priority"], check["type"], state, *where])
    return [[str(v) if v is not None else "" for v in row] for row in rows]


def test_the_archive_has_every_state_and_a_link_check(expected, issues):
    states = {row[4] for row in expected}
    assert states == {"new", "persisting", "regressed", "not compared"}, states
    broken = [row for row in expected if row[0] == "broken-link"]
    assert [(r[4], r[5].rsplit("/", 1)[1], r[6], r[7].rsplit("/", 1)[1], r[8]) for r in broken] == [
        ("new", "broken", "404", "", "/broken"),  # on / (its URL ends with "/")
        ("regressed", "gone", "404", "", "/gone"),
        ("new", "broken", "404", "old", "/broken"),
    ]
    assert issues["base"] == 2 and issues["commit"] == 3
    # a check's rows are in URL order whatever their state: /new's new finding between two persisting ones
    missing = [(r[4], r[5].rsplit("/", 1)[1]) for r in expected if r[0] == "description-missing"]
    assert missing == [("persisting", ""), ("new", "new"), ("persisting", "old")]


@pytest.fixture(scope="module")
def xlsx(archive):
    # one finding per query call: the sheet pages through every state of every check
    result = run_cli(
        "report", str(archive), "--xlsx", "out.xlsx", "--all", "--limit", "1", cwd=archive.parent
    )
    assert result.returncode == 0, result.stderr
    from openpyxl import load_workbook

    return load_workbook(archive.parent / "out.xlsx")


def _plain(value):
    """A cell's value as text; a HYPERLINK formula as its URL."""
    if value is None:
        return ""
    text = str(value)
    if text.startswith("=HYPERLINK("):
        return text.split('"')[1]
    return text


def test_xlsx_issue_urls_sheet_is_every_finding_row_for_row(xlsx, expected, issues):
    ws = xlsx["Issue URLs"]
    rows = [[c.value for c in row] for row in ws.iter_rows()]
    assert rows[0] == HEADER and xlsx.sheetnames.index("Issue URLs") == 2
    assert [[_plain(v) for v in row] for row in rows[1:]] == expected
    assert len(rows) - 1 == sum(r["findings"] for r in issues["items"] if r["state"] == "ok")
    # URLs and source pages are links
    first = dict(zip(HEADER, rows[1], strict=True))
    assert first["URL"] == f'=HYPERLINK("{expected[0][5]}","{expected[0][5]}")'
    assert first["Source Page"].startswith("=HYPERLINK(")
    assert ws.freeze_panes == "B2" and ws.auto_filter.ref == f"A1:I{len(rows)}"


def test_csv_has_the_issue_urls_file(archive, expected):
    result = run_cli("report", str(archive), "--csv", "out", "--only", "issue urls", cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == ["issue-urls.csv"]
    with (archive.parent / "out" / "issue-urls.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == HEADER and rows[1:] == expected


def test_google_sheets_issue_urls_read_back_through_gspread(archive, expected, standin, service_account):
    import gspread
    from google.oauth2.credentials import Credentials
    from nitpicker_gsheets.api import GOOGLE_PREFIXES, RedirectAdapter

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
        "issue urls",
        "--only",
        "issues",
        "--limit",
        "1",
        cwd=service_account.parent,
        env={"NITPICKER_GOOGLE_API_URL": base},
    )
    assert result.returncode == 0, result.stderr
    assert store.titles(BOOK) == ["Issues", "Issue URLs", "Sheet1"]
    store.tokens.add("reader-token")  # a second, independent client reads the values back
    gc = gspread.authorize(Credentials(token="reader-token"))
    for prefix in GOOGLE_PREFIXES:
        gc.http_client.session.mount(prefix, RedirectAdapter(base))
    values = gc.open_by_url(URL).worksheet("Issue URLs").get_all_values()
    assert values[0] == HEADER
    assert [row + [""] * (len(HEADER) - len(row)) for row in values[1:]] == expected
    stored = store.sheet(BOOK, "Issue URLs")
    url = stored["rows"][1][HEADER.index("URL")]["userEnteredValue"]
    assert url == {"formulaValue": f'=HYPERLINK("{expected[0][5]}", "{expected[0][5]}")'}
    assert stored["properties"]["gridProperties"]["frozenRowCount"] == 1


def test_every_xlsx_sheet_prints_landscape_one_page_wide_with_its_header(xlsx):
    assert len(xlsx.worksheets) == 13
    for ws in xlsx.worksheets:
        assert ws.page_setup.orientation == "landscape", ws.title
        assert ws.sheet_properties.pageSetUpPr.fitToPage is True, ws.title
        assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 0), ws.title
        assert ws.print_title_rows == "$1:$1", ws.title
        assert ws.print_options.gridLines is True, ws.title


def _sections(ws):
    return [(r[0], r[1], r[2]) for r in ws.iter_rows(min_row=2, values_only=True)]


def test_cover_totals_and_changes_are_the_issues_querys(xlsx, issues):
    cover = _sections(xlsx["Cover"])
    facts = {(s, i): v for s, i, v in cover}
    ok = [r for r in issues["items"] if r["state"] == "ok"]
    for priority in PRIORITIES:
        of = [r for r in ok if r["priority"] == priority]
        assert facts[("Findings by priority", priority)] == sum(r["findings"] for r in of)
        assert facts[("Checks with findings by priority", priority)] == sum(1 for r in of if r["findings"])
    assert facts[("Totals", "Findings")] == sum(r["findings"] for r in ok) > 0
    assert facts[("Findings by priority", "high")] >= 3  # the three broken links
    compared = [r for r in ok if r["new"] is not None]
    changes = "Changes since commit 2"
    for key in ("new", "fixed", "regressed", "persisting"):
        assert facts[(changes, key.capitalize())] == sum(r[key] for r in compared), key
    assert facts[(changes, "Regressed")] == 1 and facts[(changes, "Fixed")] >= 0
    assert facts[(changes, "Not compared")] == 1  # markup did not run on commit 2
    assert facts[("Report", "Commit")] == 3 and facts[("Report", "Compared with")] == 2
    assert not {s for s, _, _ in cover} & {"Settings", "Analyzer settings", "Tools", "Commit"}


def test_appendix_is_last_with_the_settings_and_tool_versions(xlsx, archive):
    from nitpicker_core.archive import open_archive

    assert xlsx.sheetnames[-1] == "Appendix"
    appendix = {(s, i): v for s, i, v in _sections(xlsx["Appendix"])}
    with open_archive(archive) as reader:
        commit = next(c for c in reader.commits() if c["id"] == 3)
    for key, value in (commit.get("options") or {}).items():
        if key != "roots":
            assert appendix[("Settings", key)] == (
                value if isinstance(value, int | float | str) else json.dumps(value, sort_keys=True)
            )
    assert appendix[("Tools", "nitpicker")] == commit["environment"]["nitpicker"]
    assert appendix[("Analyzer settings", "markup")].startswith("{")
    assert appendix[("Commit", "Status")] == "complete"


def test_a_report_compared_with_another_commit(archive, tmp_path):
    """The `compare` option (the commit the report compares with) reaches the Cover, Issues and Issue URLs."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import run_report

    with open_archive(archive) as reader:
        run_report(
            make_plugin_manager(),
            reader,
            "csv",
            {"dir": str(tmp_path), "silent": True, "compare": "1"},
            sheets=["Cover", "Issue URLs"],
        )

    def read(name):
        with (tmp_path / name).open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.reader(handle))

    cover = {(r[0], r[1]): r[2] for r in read("cover.csv")[1:]}
    assert cover[("Report", "Compared with")] == "1"
    answer = _query(archive, "issue-urls", "--check", "broken-link", "--base", "1")
    states = sorted(i["state"] for i in answer["items"])
    assert states == ["new", "new", "persisting"]  # /gone's link was there in commit 1: persisting
    rows = [r for r in read("issue-urls.csv")[1:] if r[0] == "broken-link"]
    assert sorted(r[4] for r in rows) == states
    assert cover[("Changes since commit 1", "New")] == str(
        sum(
            r["new"]
            for r in _query(archive, "issues", "--base", "1")["items"]
            if r["state"] == "ok" and r["new"] is not None
        )
    )


def test_xlsx_row_colours_keep_notes_links_numbers_and_empty_cells(tmp_path):
    """A coloured row colours every cell (an empty one too) and keeps what each cell had: note, link, format."""
    from nitpicker_xlsx.workbook import write_xlsx
    from openpyxl import load_workbook

    from nitpicker_core import Cell, Sheet

    rows = [
        ["high", Cell(3, "three"), "https://x.test/", 0.5, None],
        ["info", 0, "https://x.test/a", 0.25, "plain"],
        ["low", 1, "", None, "=not a formula"],
    ]
    sheet = Sheet(
        "Styled",
        ("Priority", "N", "URL", "Share", "Text"),
        lambda reader, commit: rows,
        links=("URL",),
        number_formats={"Share": "percent"},
        row_style=lambda row: row[0] if row[0] in ("high", "low") else None,
    )
    write_xlsx([(sheet, iter(rows))], {"file": str(tmp_path / "s.xlsx"), "silent": True})
    ws = load_workbook(tmp_path / "s.xlsx")["Styled"]
    fills = [
        {c.fill.fgColor.rgb if c.fill.fill_type else None for c in row} for row in ws.iter_rows(min_row=2)
    ]
    assert fills == [{"00E60000"}, {None}, {"00FFE699"}]
    assert [c.value for c in ws[2]] == [
        "high",
        3,
        '=HYPERLINK("https://x.test/","https://x.test/")',
        0.5,
        None,
    ]
    assert ws["B2"].comment.text == "three" and ws["D2"].number_format == "0.0%"
    assert [c.comment for c in ws[2] if c.column != 2] == [None] * 4  # the note stays on its cell
    assert ws["E4"].value == "=not a formula" and ws["E4"].data_type == "s"  # text, never a formula
    assert ws["A2"].font.color.rgb == "00FFFFFF" and ws["A4"].font.color.rgb == "00000000"
