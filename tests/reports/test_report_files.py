"""`nitpicker report --xlsx / --csv`: the files are read back and checked sheet by sheet."""

from __future__ import annotations

import csv
import json

from support import run_cli

SHEETS = [
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


def test_xlsx_has_every_sheet_with_header_freeze_formats_notes(report_archive, site, tmp_path):
    from openpyxl import load_workbook

    result = run_cli("report", str(report_archive), "--xlsx", "out.xlsx", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["sheets"]["Page List"] == 4
    wb = load_workbook(tmp_path / "out.xlsx")
    assert wb.sheetnames == SHEETS
    home, alpha = site + "/report-site/", site + "/report-site/alpha"

    pages = wb["Page List"]
    header = [c.value for c in pages[1]]
    assert (
        header[:4] == ["Title", "Full Title", "URL", "Protocol"]
        and header[-1] == "Linkcount: anchors"
        and len(header) == 73  # 39, the 23 SEO, 3 JavaScript, 2 rendering and 6 content columns
    )
    assert pages[1][0].font.b
    assert pages.freeze_panes == "B2"
    rows = [[c.value for c in r] for r in pages.iter_rows(min_row=2)]
    alpha_row = dict(zip(header, rows[1], strict=True))
    assert (
        alpha_row["Title"] == "Alpha" and alpha_row["Status Code"] == 200 and alpha_row["Redirect From"] == 1
    )
    assert alpha_row["URL"] == f'=HYPERLINK("{alpha}","{alpha}")'
    assert alpha_row["noindex"] is False and alpha_row["description"] is None
    # rendered by the browser (--render always): no reason to give
    assert alpha_row["Rendered"] is True and alpha_row["Rendering Reason"] is None
    assert pages.cell(3, header.index("Redirect From") + 1).comment.text == site + "/report-site/old"
    assert pages.cell(3, 1).comment.text == "Full title:\nAlpha | Report Home"
    assert round(pages.column_dimensions["A"].width, 1) == round(260 / 7, 1)
    rules = {str(cf.sqref): [r.formula for r in cf.rules] for cf in pages.conditional_formatting}
    assert rules["P2:P1048576"] == [["200", "399"]]  # Status Code not between 200 and 399
    assert rules["D2:D1048576"] == [['"http:"']]
    assert rules["R2:R1048576"] == [["LEN(TRIM(R2))=0"]]
    assert rules["A2:A1048576"][0][0].startswith('OR(LEFT(LOWER(A2),3)="401"')

    links = wb["Links"]
    assert [c.value for c in links[1]] == [
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
    assert links.freeze_panes == "C2" and links.max_row == 6
    assert [c.value for c in links[6]][1:5] == ["Not Found", 404, "NOT FOUND", "text/html"]
    assert '"content-type": "text/html; charset=utf-8"' in links.cell(2, 9).comment.text.lower()

    referrers = wb["Referrers Relational Table"]
    values = [[c.value for c in r] for r in referrers.iter_rows(min_row=2)]
    assert len(values) == 8 and values[0][2:] == ["Outside", 200, "OK", "text/html"]
    assert [
        f'=HYPERLINK("{alpha}","{alpha}")',
        f'=HYPERLINK("{home}","{home}")',
        "Old alpha",
        200,
        "OK",
        "text/html",
    ] in values
    missing = site + "/report-site/missing"
    assert [c.value for c in wb["Violations"][1]][:3] == ["Validator", "Priority", "Severity"]
    assert [c.value for c in wb["Violations"][3]] == [
        "linkcount",
        "medium",
        "warning",
        "few-links",
        "<body>",
        "only 0 link(s)",
        f'=HYPERLINK("{missing}","{missing}")',
        "body",
        None,
    ]
    assert [c.value for c in wb["Summary"][2]] == ["URLs", "internal", 5, None]
    assert [c.value for c in wb["Images"][3]][3] is None  # an empty cell carrying the note
    assert wb["Images"].cell(3, 4).comment.text == "no alt attribute"
    assert wb["Resources Relational Table"].max_row == 9 and wb["Discrepancies"].max_row == 5


def test_csv_one_file_per_sheet_and_grouped_resources(report_archive, site, tmp_path):
    result = run_cli(
        "report",
        str(report_archive),
        "--csv",
        "out",
        "--dedupe-resources",
        "--all",
        "--limit",
        "2",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)
    assert files == [
        "cover.csv",
        "issues.csv",
        "issue-urls.csv",
        "summary.csv",
        "page-list.csv",
        "links.csv",
        "discrepancies.csv",
        "resources.csv",
        "images.csv",
        "violations.csv",
        "referrers-relational-table.csv",
        "resources-relational-table.csv",
        "appendix.csv",
    ]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(files)

    def read(name):
        with (tmp_path / "out" / name).open(encoding="utf-8-sig", newline="") as handle:
            return list(csv.reader(handle))

    static = site + "/report-site/static/"
    assert read("resources.csv") == [
        [
            "URL",
            "Status Code",
            "Status Text",
            "Content Type",
            "Content Length",
            "Referrers",
            "Count",
            "Query Pattern",
        ],
        [static + "app.js", "200", "OK", "application/javascript", "21", "3", "1", "v=1"],
        [static + "logo2.png", "200", "OK", "image/png", "70", "1", "1", ""],
        [static + "logo10.png", "200", "OK", "image/png", "70", "1", "1", ""],
        [static + "site.css", "200", "OK", "text/css", "38", "3", "2", "v=2"],
    ]
    pages = read("page-list.csv")
    assert [r[2] for r in pages[1:]] == [
        site + p for p in ("/report-site/", "/report-site/alpha", "/report-site/beta", "/report-site/missing")
    ]
    assert pages[2][:3] == ["Alpha", "Alpha | Report Home", site + "/report-site/alpha"]
    assert (
        pages[1][pages[0].index("Internal Bad Links")] == "1" and pages[3][pages[0].index("Language")] == ""
    )
    links = read("links.csv")
    assert len(links) == 6 and links[5][:3] == [site + "/report-site/missing", "Not Found", "404"]
    assert read("violations.csv")[1] == [
        "linkcount",
        "medium",
        "warning",
        "few-links",
        "<body>",
        "only 1 link(s)",
        site + "/report-site/beta",
        "body",
        "",
    ]
    rrt = read("resources-relational-table.csv")
    assert rrt[0] == [
        "Referred Page (From)",
        "Resource (To)",
        "Resource Status Code",
        "Resource Status Text",
        "Resource Content Type",
        "Resource Size",
    ]
    assert [r[1].rsplit("/", 1)[1] for r in rrt[1:] if r[0] == site + "/report-site/alpha"] == [
        "app.js?v=7",
        "site.css?v=2",
    ]
    assert len(read("referrers-relational-table.csv")) == 9
    assert read("discrepancies.csv")[4] == [
        "og:title vs Title",
        site + "/report-site/alpha",
        "Alpha | Report Home",
        "Alpha on social",
        "",
        "",
    ]
    assert read("images.csv")[1][8:] == ["FALSE", "320", "FALSE", "FALSE"]
    assert ["Status", "200", "4", "66.67%"] in read("summary.csv")


def test_terminal_user_picks_sheets_by_number(report_archive, tmp_path):
    """On a terminal without --all/--only the sheets are listed and the chosen numbers are written."""
    import os
    import pty
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "report", str(report_archive), "--csv", "out"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=tmp_path,
    )
    shown, deadline = b"", time.monotonic() + 60
    while b"Sheets to write" not in shown and time.monotonic() < deadline:
        shown += os.read(master, 4096)
    os.write(master, b"5, 12\n")
    stdout, _ = process.communicate(timeout=60)
    os.close(master)
    os.close(slave)
    assert process.returncode == 0
    assert b"  1. Cover" in shown and b"  2. Issues" in shown and b" 12. Resources Relational Table" in shown
    assert b" 13. Appendix" in shown
    assert json.loads(stdout) == ["page-list.csv", "resources-relational-table.csv"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "page-list.csv",
        "resources-relational-table.csv",
    ]
