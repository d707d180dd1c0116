"""The HTML and PDF client reports of the demo shop crawled twice (issue 30), read back.

The demo (`nitpicker pipeline` with no URL) is crawled twice and analysed by markup alone, so the second commit
has new and fixed findings and the other analyzers' checks are not analysed: the report must say so. The HTML's
numbers are compared with the `issues` query's, axe-core checks it in Chromium, and the PDF printed by Chromium
is read back through its outline (the headings Chromium rendered) and page count.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html
from support import run_cli

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AXE = Path(__import__("axe_playwright_python").__file__).with_name("axe.min.js")
SECTIONS_EN = (
    "Cover",
    "Executive summary",
    "Issues overview",
    "Issues in detail",
    "Charts",
    "Appendix: settings and tool versions",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, Any]:
    """The demo crawled twice (markup analysis only), the HTML report the second pipeline run wrote, and the
    `issues` query's answer on its last commit."""
    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager

    work = Path(tmp_path_factory.mktemp("demo-report"))
    archive = work / "audit.nitpicker"
    first = run_cli("pipeline", "-o", archive.name, "--no-image", "--plugin", "markup", cwd=work, timeout=600)
    assert first.returncode == 2, first.stderr[-3000:]  # 2: only the closed partner (an external link) fails
    second = run_cli(
        "pipeline",
        "-o",
        archive.name,
        "--no-image",
        "--plugin",
        "markup",
        "--to",
        "html",
        "--html-file",
        "pipeline.html",
        cwd=work,
        timeout=600,
    )
    assert second.returncode == 2, second.stderr[-3000:]
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        issues = run_query(registry, reader, "issues", {}, None)
        issues_ja = run_query(registry, reader, "issues", {"lang": "ja"}, None)
    return {"work": work, "archive": archive, "issues": issues, "issues_ja": issues_ja}


def _report(demo: dict[str, Any], name: str, *args: str) -> Path:
    out = demo["work"] / name
    done = run_cli("report", str(demo["archive"]), *args, cwd=demo["work"], timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def report_html(demo) -> Path:
    return _report(demo, "report.html", "--to", "html", "--html-file", "report.html", "--html-examples", "3")


def _section(tree: Any, name: str) -> Any:
    found = tree.xpath(f'//section[@id="{name}"]')
    assert found, f"no section {name}"
    return found[0]


def test_the_pipeline_wrote_the_same_report(demo):
    text = (demo["work"] / "pipeline.html").read_text(encoding="utf-8")
    assert '<h2 id="overview-h">Issues overview</h2>' in text


def test_the_numbers_are_the_issues_querys(demo, report_html):
    tree = lxml_html.fromstring(report_html.read_bytes())
    found = [row for row in demo["issues"]["items"] if row["findings"]]
    assert found, "the demo finds something"
    # the overview: one row per check that found something, in the query's order, with its URLs and share
    rows = _section(tree, "overview").xpath(".//table/tbody/tr")
    shown = [
        (row.xpath("string(td[1]/code)"), int(row.xpath("string(td[4])")), row.xpath("string(td[5])"))
        for row in rows
    ]
    assert shown == [(r["id"], r["urls"], f"{r['share']:g}%") for r in found]
    # the summary's counts by priority: checks with findings and findings
    by_priority = {
        row.xpath("string(td[1])"): (int(row.xpath("string(td[2])")), int(row.xpath("string(td[3])")))
        for row in _section(tree, "summary").xpath(".//table[1]/tbody/tr")
    }
    for priority in ("critical", "high", "medium", "low", "info"):
        mine = [r for r in found if r["priority"] == priority]
        assert by_priority[priority] == (len(mine), sum(r["findings"] for r in mine)), priority
    # the ten most important issues, in order, each linking to its own part
    top = _section(tree, "summary").xpath(".//ol[@class='top']/li/a/@href")
    assert top == [f"#issue-{re.sub(r'[^a-z0-9]', '-', r['id'].lower())}" for r in found[:10]]
    # one part per issue, with at most --html-examples 3 example URLs each
    parts = _section(tree, "issues").xpath(".//article")
    assert len(parts) == len(found)
    assert all(
        len(part.xpath(".//table/tbody/tr")) == min(3, r["findings"])
        for part, r in zip(parts, found, strict=True)
    )


def test_the_changes_since_the_first_commit(demo, report_html):
    tree = lxml_html.fromstring(report_html.read_bytes())
    assert demo["issues"]["base"] == 1
    changed = [r for r in demo["issues"]["items"] if r["new"] or r["fixed"] or r["regressed"]]
    assert changed, "the second demo commit changes findings"
    summary = _section(tree, "summary")
    assert summary.xpath("string(.//h3[@id='changes'])") == "What changed since commit 1"
    rows = summary.xpath(".//h3[@id='changes']/following-sibling::table[1]/tbody/tr")
    assert [row.xpath("string(td[1]/code)") for row in rows] == [r["id"] for r in changed]
    for row, r in zip(rows, changed, strict=True):
        assert [int(row.xpath(f"string(td[{i}])")) for i in (2, 3, 4)] == [
            r["new"],
            r["fixed"],
            r["regressed"],
        ]
        if r["new"]:
            assert "New: http://" in row.xpath("string(td[5])")


def test_the_cover_charts_and_the_missing_analysis(demo, report_html):
    tree = lxml_html.fromstring(report_html.read_bytes())
    cover = _section(tree, "cover").text_content()
    assert "/showcase/" in cover and "Compared with commit1" in cover.replace("\n", "")
    assert re.search(r"Crawl date\d{4}-\d\d-\d\d \d\d:\d\d UTC", cover)
    charts = _section(tree, "charts")
    assert {svg.get("id") for svg in charts.xpath(".//*[local-name()='svg']")} == {
        "status-chart",
        "depth-chart",
        "response-chart",
        "category-chart",
        "priority-chart",
        "trend-chart",
    }
    # the depth chart's bars add up to the pages, the category chart's to the checks with findings
    found = [r for r in demo["issues"]["items"] if r["findings"]]
    bars = charts.xpath(".//*[@id='category-chart']/*[local-name()='rect']")
    assert len(bars) == len({r["category"] for r in found})
    note = _section(tree, "summary").xpath("string(.//p[@class='note'])")
    assert note.startswith("Analysis missing: these analyzers did not run") and "axe" in note
    assert "markup" not in note.split(":", 1)[1]
    # nothing leaves the file: no script, no external stylesheet, image or font
    text = report_html.read_text(encoding="utf-8")
    assert "<script" not in text and "<link" not in text and "<img" not in text and "@import" not in text


def _bars(chart: Any) -> dict[str, int]:
    """A bar chart's (label → value) as written in the SVG: the label text, the bar, the value text."""
    texts = [t.text_content() for t in chart.xpath("./*[local-name()='text']")]
    return {label: int(value.replace(",", "")) for label, value in zip(texts[::2], texts[1::2], strict=True)}


def test_the_depth_and_response_charts_count_the_pages_querys_rows(demo, report_html):
    """The charts count, by SQL, the rows `nitpicker pages --strict` lists: counted here from those rows."""
    from collections import Counter

    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager

    registry = query_registry(make_plugin_manager())
    with open_archive(demo["archive"]) as reader:
        rows = run_query(registry, reader, "pages", {"strict": True, "limit": 10_000}, None)["items"]
    depths = Counter(str(r["depth"]) for r in rows if r["depth"] is not None)
    fast = sum(1 for r in rows if r["response_ms"] is not None and r["response_ms"] < 100)
    tree = lxml_html.fromstring(report_html.read_bytes())
    assert _bars(tree.xpath("//*[@id='depth-chart']")[0]) == dict(
        sorted(depths.items(), key=lambda kv: int(kv[0]))
    )
    assert len(depths) >= 3 and sum(depths.values()) == len([r for r in rows if r["depth"] is not None])
    times = _bars(tree.xpath("//*[@id='response-chart']")[0])
    assert sum(times.values()) == sum(1 for r in rows if r["response_ms"] is not None) > 0
    assert times.get("0–100 ms", 0) == fast


def test_on_a_terminal_no_sheet_is_asked_for(demo):
    """The sheet menu is for sheet destinations: on a terminal `--to html` writes the report at once."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "cli_terminal"))
    from pty_terminal import Terminal

    term = Terminal(
        "report", demo["archive"].name, "--to", "html", "--html-file", "tty.html", cwd=demo["work"]
    )
    assert term.wait(timeout=120) == 0, term.text
    assert "Sheets to write" not in term.text
    assert (demo["work"] / "tty.html").read_text(encoding="utf-8").startswith("<!doctype html>")


def test_the_japanese_report(demo):
    out = _report(demo, "ja.html", "--to", "html", "--html-file", "ja.html", "--html-lang", "ja")
    tree = lxml_html.fromstring(out.read_bytes())
    assert tree.get("lang") == "ja"
    assert [h.text_content() for h in tree.xpath("//main/section/h2")][:3] == [
        "表紙",
        "エグゼクティブサマリー",
        "問題の一覧",
    ]
    found = [r for r in demo["issues_ja"]["items"] if r["findings"]]
    titles = [a.text_content() for a in _section(tree, "overview").xpath(".//table/tbody/tr/td[1]/a")]
    assert titles == [r["title"] for r in found]
    assert any(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", t) for t in titles)  # check titles translated


def test_axe_finds_nothing_serious_in_chromium(report_html):
    from playwright.sync_api import sync_playwright

    from nitpicker_core import browser_args, find_browser

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=find_browser(), args=browser_args())
        try:
            page = chromium.new_page()
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report_html.as_uri())
            page.add_script_tag(path=str(AXE))
            result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        finally:
            chromium.close()
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []
    assert requests == [report_html.as_uri()]  # the file alone: nothing else is fetched


def _pdf_outline(path: Path) -> list[str]:
    """The titles of the PDF's outline (Chromium makes it from the headings it rendered)."""
    data = path.read_bytes()
    blobs = [data]
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            blobs.append(zlib.decompress(stream))
        except zlib.error:
            continue
    titles = []
    for raw in re.findall(rb"/Title\s*(<[0-9A-Fa-f]+>|\((?:[^()\\]|\\.)*\))", b"".join(blobs)):
        if raw.startswith(b"<"):
            value = bytes.fromhex(raw[1:-1].decode())
            titles.append(
                value[2:].decode("utf-16-be") if value.startswith(b"\xfe\xff") else value.decode("latin-1")
            )
        else:
            titles.append(raw[1:-1].decode("latin-1"))
    return titles


def _pdftotext(path: Path, page: int | None = None) -> str:
    """The text of the PDF (or of one page, from 1) as poppler's pdftotext reads it."""
    pages = ["-f", str(page), "-l", str(page)] if page else []
    done = subprocess.run(
        ["pdftotext", "-layout", *pages, str(path), "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def _contents(text: str, headings: tuple[str, ...]) -> dict[str, int]:
    """The page numbers the table of contents gives each heading (``Heading ..... N`` on its page)."""
    flat = " ".join(text.split())
    pages = {}
    for heading in headings:
        found = re.search(re.escape(" ".join(heading.split()[:2])) + r"[^0-9]*?(\d+)", flat)
        assert found, (heading, flat[:600])
        pages[heading] = int(found.group(1))
    return pages


def test_the_pdf_has_every_section_and_the_top_issues(demo):
    out = _report(demo, "report.pdf", "--to", "pdf", "--pdf-file", "report.pdf", "--pdf-paper", "letter")
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages >= 5
    # Letter is 612 x 792 points
    assert re.search(rb"/MediaBox\s*\[\s*0\s+0\s+612\s+792\s*\]", data)
    outline = _pdf_outline(out)
    assert set(SECTIONS_EN) <= set(outline), outline[:20]
    text = _pdftotext(out)
    top = [r["title"] for r in demo["issues"]["items"] if r["findings"]][:10]
    for title in top:
        assert any(entry.startswith(title) for entry in outline), title
        assert " ".join(title.split()) in " ".join(text.split()), title
    # the table of contents names the page each section starts on, and the footer numbers every page
    first = _pdftotext(out, 1)
    assert first.split()[:3] == ["Website", "audit", "report"] and "Contents" in first
    where = _contents(first.split("Contents", 1)[1], SECTIONS_EN)
    assert list(where.values()) == sorted(where.values()) and where["Cover"] == 2
    for heading, page in where.items():
        lines = [line.strip() for line in _pdftotext(out, page).splitlines() if line.strip()]
        assert lines[0].startswith(heading.split(":")[0]), (heading, page, lines[:3])
        assert lines[-1].endswith(f"Page {page} / {pages}"), (heading, page, lines[-1])
    assert not list(demo["work"].glob("*.partial"))


def test_the_japanese_pdf_prints_japanese(demo):
    """With a Japanese font installed (bin/setup), the Japanese PDF's text reads back as Japanese."""
    out = _report(demo, "ja.pdf", "--to", "pdf", "--pdf-file", "ja.pdf", "--pdf-lang", "ja")
    first = _pdftotext(out, 1)
    assert "目次" in first and "表紙" in first, first[:400]
    where = _contents(first.split("目次", 1)[1], ("表紙", "エグゼクティブサマリー", "問題の一覧"))
    assert "エグゼクティブサマリー" in _pdftotext(out, where["エグゼクティブサマリー"])


@pytest.mark.parametrize(
    "args, message",
    [
        (("--html-lang", "fr"), "unknown report language 'fr' (languages: en, ja)"),
        (("--html-compare", "99"), "cannot compare with commit 99: audit.nitpicker has no commit 99"),
        (("--html-examples", "0"), "the number of example URLs must be at least 1"),
    ],
)
def test_bad_input_is_one_line_and_nothing_written(demo, args, message):
    out = demo["work"] / "bad" / "report.html"
    out.parent.mkdir(exist_ok=True)
    done = run_cli(
        "report", str(demo["archive"]), "--to", "html", "--html-file", str(out), *args, cwd=demo["work"]
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"nitpicker: error: {message}"]
    assert list(out.parent.iterdir()) == []


def test_a_browser_that_cannot_print_is_one_line_and_nothing_written(demo, tmp_path):
    """A Chromium that exits at once (here `false`, named by NITPICKER_BROWSER) ends the PDF in one line."""
    done = run_cli(
        "report",
        str(demo["archive"]),
        "--to",
        "pdf",
        "--pdf-file",
        "r.pdf",
        cwd=tmp_path,
        env={"NITPICKER_BROWSER": "false"},
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "nitpicker: error: Chromium could not print the PDF: Chromium exited (status 1)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_destination_is_one_line(demo, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "report.pdf").mkdir()  # a directory where the file should go
    done = run_cli(
        "report", str(demo["archive"]), "--to", "pdf", "--pdf-file", str(locked / "report.pdf"), cwd=tmp_path
    )
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("nitpicker: error: ")
    unknown = run_cli(
        "report",
        str(demo["archive"]),
        "--to",
        "pdf",
        "--pdf-file",
        str(tmp_path / "r.pdf"),
        "--pdf-paper",
        "a3",
    )
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "nitpicker: error: unknown paper size 'a3' (paper sizes: a4, letter)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locked"]


PNG = (  # a 1x1 PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
)


def test_branding_from_the_config_file_and_flags(demo, tmp_path):
    (tmp_path / "logo.png").write_bytes(PNG)
    (tmp_path / "nitpicker.toml").write_text(
        '[report]\nhtml_title = "Example Ltd audit"\nhtml_logo = "logo.png"\nhtml_accent = "#0a7d5a"\n'
        'html_footer = "from the file"\n'
    )
    done = run_cli(
        "report",
        str(demo["archive"]),
        "--to",
        "html",
        "--html-file",
        "brand.html",
        "--html-footer",
        "Prepared by Example Ltd",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    tree = lxml_html.fromstring((tmp_path / "brand.html").read_bytes())
    assert tree.xpath("string(//title)") == "Example Ltd audit" == tree.xpath("string(//header/h1)")
    logo = tree.xpath("//header/img/@src")[0]
    assert logo.startswith("data:image/png;base64,") and logo.endswith("==")
    assert ":root { --accent: #0a7d5a; }" in tree.xpath("string(//style)")
    assert (
        tree.xpath("string(//footer/p[@class='brand-footer'])") == "Prepared by Example Ltd"
    )  # the flag wins


@pytest.mark.parametrize(
    "make, args, message",
    [
        (
            lambda p: p.write_text("not an image"),
            ("--pdf-logo", "logo.png"),
            "logo logo.png is not a PNG, JPEG, GIF, WebP or SVG image",
        ),
        (
            lambda p: p.write_bytes(PNG + b"\0" * (2 * 1024 * 1024)),
            ("--pdf-logo", "logo.png"),
            "logo logo.png is 2.0 MB: the limit is 2 MB",
        ),
        (lambda p: None, ("--pdf-logo", "missing.png"), "logo file not found: missing.png"),
        (
            lambda p: None,
            ("--pdf-accent", "green"),
            "accent colour 'green' is not #rgb or #rrggbb (e.g. #1f4e79)",
        ),
    ],
)
def test_a_bad_logo_or_accent_is_one_line(demo, tmp_path, make, args, message):
    make(tmp_path / "logo.png")
    done = run_cli("report", str(demo["archive"]), "--to", "pdf", "--pdf-file", "r.pdf", *args, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"nitpicker: error: {message}"]
    assert not (tmp_path / "r.pdf").exists()


def test_the_status_chart_counts_the_summarys_totals_blocked_apart(demo, report_html):
    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager

    with open_archive(demo["archive"]) as reader:
        totals = run_query(query_registry(make_plugin_manager()), reader, "summary", {}, None)["totals"]
    tree = lxml_html.fromstring(report_html.read_bytes())
    keys = ("2xx", "3xx", "4xx", "5xx", "failed", "skipped", "blocked")
    assert _bars(tree.xpath("//*[@id='status-chart']")[0]) == {k: totals[k] for k in keys}
