"""`nitpicker report --sheet`: real gspread and google-auth against the local Sheets stand-in."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest
from standin import JWT_GRANT
from support import run_cli

BOOK = "1AbCdEfGhIjKlMnOp_q-rs"
URL = f"https://docs.google.com/spreadsheets/d/{BOOK}/edit#gid=0"
ALL_SHEETS = [
    "Cover",
    "Issues",
    "Issue URLs",
    "Summary",
    "Page List",
    "Links",
    "Discrepancies",
    "Resources",
    "Images",
    "Violations",
    "Referrers Relational Table",
    "Resources Relational Table",
    "Appendix",
]
# Summary: URLs internal/external, then pages (internal only: "pages" has one meaning), statuses (blocked
# among them: none here), types, fill rates, the AI and search crawlers robots.txt blocks site-wide
ROWS = {
    "Summary": 29,
    "Page List": 4,
    "Links": 5,
    "Discrepancies": 4,
    "Resources": 5,
    "Images": 4,
    "Violations": 2,
    "Referrers Relational Table": 8,
    "Resources Relational Table": 8,
}


def report(archive, *args, base, cwd):
    return run_cli("report", str(archive), *args, cwd=cwd, env={"NITPICKER_GOOGLE_API_URL": base})


def reader(store, base):
    """A second, independent gspread client (token issued directly) to read the stored values back."""
    import gspread
    from google.oauth2.credentials import Credentials
    from nitpicker_gsheets.api import GOOGLE_PREFIXES, RedirectAdapter

    store.tokens.add("reader-token")
    gc = gspread.authorize(Credentials(token="reader-token"))
    for prefix in GOOGLE_PREFIXES:
        gc.http_client.session.mount(prefix, RedirectAdapter(base))
    return gc.open_by_url(URL)


def cell(store, title, row, column):
    """The CellData stored for (row, header name), row 0 being the header."""
    sheet = store.sheet(BOOK, title)
    header = [c["userEnteredValue"]["stringValue"] for c in sheet["rows"][0]]
    return sheet["rows"][row][header.index(column)]


@pytest.fixture
def written(report_archive, standin, service_account, tmp_path):
    """Every sheet written once through the CLI; the first write call is answered with 429."""
    store, base = standin
    store.add_book(BOOK, ("Sheet1", "Links"))
    store.sheet(BOOK, "Links")["rows"] = [[{"userEnteredValue": {"stringValue": "stale"}}]]
    store.throttle = 1
    result = report(
        report_archive,
        "--sheet",
        URL,
        "--credentials",
        service_account.name,
        "--all",
        base=base,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return store, base, result


def test_every_sheet_is_written_with_auth_backoff_and_progress(written, report_archive, site, rsa_key):
    store, base, result = written
    summary = json.loads(result.stdout)
    issues = json.loads(run_cli("query", str(report_archive), "issues").stdout)
    findings = sum(r["findings"] for r in issues["items"] if r["state"] == "ok")  # Issue URLs: one row each
    rows = {
        "Cover": len(store.sheet(BOOK, "Cover")["rows"]) - 1,
        "Issues": issues["total"],  # one row per check
        "Issue URLs": findings,
        **ROWS,
        "Appendix": len(store.sheet(BOOK, "Appendix")["rows"]) - 1,
    }
    assert summary == {"destination": "google-sheets", "spreadsheet": BOOK, "sheets": rows}
    # the report's sheets lead in report order; the old "Links" worksheet was replaced where it was, the
    # unrelated one kept, nothing left half-written
    assert store.titles(BOOK) == [*ALL_SHEETS[:5], "Sheet1", *ALL_SHEETS[5:]]
    # the JWT signed with the generated key was verified by the token endpoint, once
    assert store.token_grants == [JWT_GRANT]
    assert store.throttled == 1
    assert "rate limited (HTTP 429); retrying in 1 s" in result.stderr
    for k, name in enumerate(ALL_SHEETS, 1):
        assert f"google-sheets: [{k}/{len(ALL_SHEETS)}] {name}: {rows[name]:,} rows\n" in result.stderr
    output = result.stdout + result.stderr
    assert "PRIVATE KEY" not in output and not any(token in output for token in store.tokens)


def test_values_read_back_through_gspread(written, site):
    store, base, _ = written
    book = reader(store, base)
    home, alpha, beta, missing = (
        site + p for p in ("/report-site/", "/report-site/alpha", "/report-site/beta", "/report-site/missing")
    )
    pages = book.worksheet("Page List").get_all_values()
    assert (
        pages[0][:5] == ["Title", "Full Title", "URL", "Protocol", "Domain"]
        and pages[0][-1] == "Linkcount: anchors"
    )
    assert len(pages[0]) == 73  # 39, the 23 SEO, 3 JavaScript, 2 rendering and 6 content columns
    rows = {r[2]: dict(zip(pages[0], r, strict=False)) for r in pages[1:]}
    assert list(rows) == [home, alpha, beta, missing]
    assert rows[alpha]["Title"] == "Alpha" and rows[alpha]["Full Title"] == "Alpha | Report Home"
    assert (rows[home]["Internal Links"], rows[home]["Internal Bad Links"], rows[home]["External Links"]) == (
        "4",
        "1",
        "1",
    )
    assert rows[alpha]["Redirect From"] == "1" and rows[alpha]["Internal Referrers"] == "2"
    assert rows[alpha]["og:title"] == "Alpha on social" and rows[beta]["Language"] == ""
    assert rows[missing]["Status Code"] == "404" and rows[home]["path1"] == "/report-site"
    assert rows[home]["Linkcount: anchors"] == "5" and rows[home]["noindex"] == "FALSE"
    # the SEO columns say what the pages query says, and inlinks are the referrers counted beside them
    assert (rows[home]["Indexability"], rows[home]["Crawl Depth"], rows[alpha]["Crawl Depth"]) == (
        "Indexable",
        "0",
        "1",
    )
    assert (rows[missing]["Indexability"], rows[missing]["Indexability Status"]) == ("Non-Indexable", "404")
    assert all(row["Inlinks"] == row["Internal Referrers"] for row in rows.values())
    assert rows[home]["HTTP Version"] == "http/1.1" and int(rows[home]["Word Count"]) > 0

    links = book.worksheet("Links").get_all_values()
    assert links[0] == [
        "URL",
        "Page Title",
        "Status Code",
        "Status Text",
        "Content Type",
        "Redirect From",
        "Referrers",
        "Self Links",
        "Headers",
        "Remarks",
    ]
    outside = site.replace("localhost", "127.0.0.1") + "/report-site/outside"
    assert [r[0] for r in links[1:]] == [outside, home, alpha, beta, missing]
    assert links[1][2:5] == ["200", "OK", "text/html"] and links[1][9] == "external"

    resources = book.worksheet("Resources").get_all_values()
    assert [r[0].rsplit("/", 1)[1] for r in resources[1:]] == [
        "app.js?v=7",
        "logo2.png",
        "logo10.png",
        "site.css?v=1",
        "site.css?v=2",
    ]
    assert resources[4][1:] == ["200", "OK", "text/css", "19", "2"]

    referrers = book.worksheet("Referrers Relational Table").get_all_values()
    assert referrers[0] == [
        "Link (To)",
        "Referrer (From)",
        "Referrer Content",
        "Link Status Code",
        "Link Status Text",
        "Link Content Type",
    ]
    assert [alpha, home, "Old alpha", "200", "OK", "text/html"] in referrers
    assert [missing, home, "Gone", "404", "NOT FOUND", "text/html"] in referrers

    rrt = book.worksheet("Resources Relational Table").get_all_values()
    assert rrt[1] == [
        home,
        site + "/report-site/static/app.js?v=7",
        "200",
        "OK",
        "application/javascript",
        "21",
    ]

    discrepancies = book.worksheet("Discrepancies").get_all_values()
    assert discrepancies[1:] == [
        ["Link Text vs Page Title", home, "Completely different", "Beta | Report Home", beta, ""],
        ["Link Text vs Page Title", home, "Gone", "Not Found", missing, ""],
        ["Link Text vs Page Title", home, "Old alpha", "Alpha | Report Home", alpha, ""],
        ["og:title vs Title", alpha, "Alpha | Report Home", "Alpha on social", "", ""],
    ]
    images = book.worksheet("Images").get_all_values()
    assert images[0][:4] == ["Page URL", "Image Path (src)", "Image Path (currentSrc)", "Alternative Text"]
    assert [r[1] for r in images[1:]] == [
        "/report-site/static/logo2.png",
        "/report-site/static/logo10.png",
    ] * 2
    assert [r[3] for r in images[1:]] == ["Logo", ""] * 2

    violations = book.worksheet("Violations").get_all_values()
    assert violations == [
        ["Validator", "Priority", "Severity", "Rule", "Code", "Message", "URL", "Location", "Help"],
        ["linkcount", "medium", "warning", "few-links", "<body>", "only 1 link(s)", beta, "body", ""],
        ["linkcount", "medium", "warning", "few-links", "<body>", "only 0 link(s)", missing, "body", ""],
    ]
    summary = book.worksheet("Summary").get_all_values()
    assert summary[0] == ["Section", "Item", "Value", "Share"]
    assert [
        "Status",
        "404",
        "1",
        "0.1667",
    ] in summary  # a number; the column shows it as a percentage and ["URLs", "internal", "5", ""] in summary
    assert ["Status", "blocked", "0", "0"] in summary and not [
        r for r in summary if r[0] == "Blocked by status"
    ]
    # the test site's robots.txt shuts out Google-Extended, GPTBot and CCBot (test_server/routes/robots.py)
    assert ["Blocked site-wide by robots.txt", "AI crawlers (of 24)", "3", "0.125"] in summary
    assert ["Blocked site-wide by robots.txt", "search crawlers (of 6)", "0", "0"] in summary


def test_notes_links_and_formatting_are_stored(written, site):
    store, _, _ = written
    home, alpha = site + "/report-site/", site + "/report-site/alpha"
    assert cell(store, "Page List", 2, "Redirect From")["note"] == site + "/report-site/old"
    # the href as the page wrote it, where it led, and the anchor's line:col in the server's HTML
    note = cell(store, "Page List", 1, "Internal Bad Links")["note"]
    assert re.fullmatch(
        rf"Gone \(404 NOT FOUND /report-site/missing => {re.escape(site)}/report-site/missing "
        r"at \d+:\d+\)",
        note,
    ), note
    assert cell(store, "Page List", 2, "Title")["note"] == "Full title:\nAlpha | Report Home"
    assert cell(store, "Page List", 1, "URL")["userEnteredValue"] == {
        "formulaValue": f'=HYPERLINK("{home}", "{home}")'
    }
    assert cell(store, "Page List", 1, "Status Code")["userEnteredValue"] == {"numberValue": 200}
    through = [
        r
        for r in store.sheet(BOOK, "Referrers Relational Table")["rows"]
        if r[2]["userEnteredValue"] == {"stringValue": "Old alpha"}
    ]
    assert through[0][0]["note"] == f"[REDIRECTED FROM] {site}/report-site/old"
    assert through[0][0]["userEnteredValue"] == {"formulaValue": f'=HYPERLINK("{alpha}", "{alpha}")'}

    page_list = store.sheet(BOOK, "Page List")
    grid = page_list["properties"]["gridProperties"]
    assert (grid["frozenRowCount"], grid["frozenColumnCount"]) == (1, 1)
    assert page_list["rows"][0][0]["userEnteredFormat"] == {"textFormat": {"bold": True}}
    assert page_list["widths"][0] == 260 and page_list["widths"][2] == 320
    rules = {
        (r["ranges"][0]["startColumnIndex"], r["booleanRule"]["condition"]["type"])
        for r in page_list["formats"]
    }
    assert rules == {
        (15, "NUMBER_NOT_BETWEEN"),
        (17, "BLANK"),
        (22, "NUMBER_LESS"),
        (3, "TEXT_EQ"),
        (0, "CUSTOM_FORMULA"),
        (19, "NUMBER_NOT_EQ"),
        (21, "NUMBER_NOT_EQ"),
        *((i, "CUSTOM_FORMULA") for i in range(5, 15)),
    }  # path1…path10
    status = next(r for r in page_list["formats"] if r["ranges"][0]["startColumnIndex"] == 15)
    assert status["ranges"][0]["startRowIndex"] == 1
    assert status["booleanRule"]["condition"]["values"] == [
        {"userEnteredValue": "200"},
        {"userEnteredValue": "399"},
    ]
    assert status["booleanRule"]["format"]["backgroundColor"]["red"] == 0.9
    links = store.sheet(BOOK, "Links")["properties"]["gridProperties"]
    assert (links["frozenRowCount"], links["frozenColumnCount"]) == (1, 2)


def test_rerun_replaces_the_worksheet(written, report_archive, service_account, tmp_path):
    store, base, _ = written
    store.sheet(BOOK, "Links")["rows"].append([{"userEnteredValue": {"stringValue": "added by hand"}}])
    result = report(
        report_archive, "--sheet", URL, "-C", service_account.name, "--only", "links", base=base, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert store.titles(BOOK) == [*ALL_SHEETS[:5], "Sheet1", *ALL_SHEETS[5:]]  # replaced where it was
    assert len(store.sheet(BOOK, "Links")["rows"]) == 1 + ROWS["Links"]


def test_oauth_client_with_expired_cached_token_is_refreshed(report_archive, standin, tmp_path):
    store, base = standin
    store.add_book(BOOK)
    store.refresh_token = "1//refresh-me"
    client = {
        "installed": {
            "client_id": "cid.apps.googleusercontent.com",
            "client_secret": "client-secret",
            "redirect_uris": ["http://localhost"],
            "auth_uri": f"{base}/auth",
            "token_uri": f"{base}/token",
        }
    }
    (tmp_path / "credentials.json").write_text(json.dumps(client))
    cache = tmp_path / "credentials.token.json"
    cache.write_text(
        json.dumps(
            {
                "token": "ya29.expired",
                "refresh_token": store.refresh_token,
                "client_id": "cid.apps.googleusercontent.com",
                "client_secret": "client-secret",
                "token_uri": f"{base}/token",
                "expiry": "2020-01-01T00:00:00Z",
            }
        )
    )
    result = report(report_archive, "--sheet", URL, "--only", "Summary", base=base, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert store.token_grants == ["refresh_token"]
    saved = json.loads(cache.read_text())
    assert saved["token"] in store.tokens and saved["refresh_token"] == store.refresh_token
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o600
    assert store.titles(BOOK) == ["Summary", "Sheet1"]
    assert "client-secret" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a destination: --to NAME, --sheet URL, --xlsx FILE or --csv DIR"),
        (("--sheet", "https://example.com/not-a-sheet"), "--sheet must be a Google Sheets URL"),
        (("--sheet", URL, "--credentials", "nope.json"), "credentials file not found: nope.json"),
        (("--csv", "out", "--only", "Nope"), "unknown sheet 'Nope'"),
        (("--csv", "out", "--xlsx", "a.xlsx"), "give one destination, not --xlsx and --csv"),
        (
            ("--sheet", "https://docs.google.com/spreadsheets/d/UNKNOWN/edit", "-C", "sa.json"),
            "spreadsheet not found, or not shared with these credentials",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_1(report_archive, standin, service_account, tmp_path, args, message):
    _, base = standin
    result = report(report_archive, *args, base=base, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == f"nitpicker: error: {message}\n" or result.stderr.startswith(
        f"nitpicker: error: {message}"
    )
    assert result.stderr.count("\n") == 1 and str(tmp_path) not in result.stderr
    assert not (tmp_path / "out").exists()
