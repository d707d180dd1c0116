"""`nitpicker report --compare COMMIT --lang LANG`: one compared commit and language for every destination of
the run (the sheets' ``compare``, the html/pdf reports' own options, which win when given)."""

from __future__ import annotations

import re

import pytest
from support import run_cli
from test_report_issue_urls import _query
from test_report_issue_urls import archive as archive  # noqa: F401 (the three-commit archive fixture)


def _states(rows, check):
    return sorted(r[4] for r in rows if r[0] == check)


def test_xlsx_compare_reaches_the_cover_and_issue_urls(archive, tmp_path):  # noqa: F811
    done = run_cli(
        "report",
        str(archive),
        "--to",
        "xlsx",
        "--xlsx-file",
        "out.xlsx",
        "--all",
        "--compare",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    from openpyxl import load_workbook

    book = load_workbook(tmp_path / "out.xlsx")
    cover = {(r[0], r[1]): r[2] for r in book["Cover"].iter_rows(values_only=True) if r[0]}
    assert cover[("Report", "Compared with")] == 1
    assert ("Changes since commit 1", "New") in cover and ("Changes since commit 2", "New") not in cover
    rows = [list(r) for r in book["Issue URLs"].iter_rows(min_row=2, values_only=True)]
    expected = sorted(
        i["state"] for i in _query(archive, "issue-urls", "--check", "broken-link", "--base", "1")["items"]
    )
    assert expected == ["new", "new", "persisting"]  # against commit 2 one of them is "regressed"
    assert _states(rows, "broken-link") == expected


def test_without_compare_the_sheets_compare_with_the_parent(archive, tmp_path):  # noqa: F811
    done = run_cli("report", str(archive), "--xlsx", "out.xlsx", "--only", "Issue URLs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from openpyxl import load_workbook

    rows = [list(r) for r in load_workbook(tmp_path / "out.xlsx")["Issue URLs"].iter_rows(values_only=True)]
    assert _states(rows, "broken-link") == ["new", "new", "regressed"]


def _cover_compare(document: str) -> str:
    match = re.search(r"<th scope=\"row\">Compared with commit</th><td>([^<]*)</td>", document)
    assert match, document[:2000]
    return match[1]


def test_html_compare_and_lang(archive, tmp_path):  # noqa: F811
    done = run_cli(
        "report", str(archive), "--to", "html", "--html-file", "r.html", "--compare", "1", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert _cover_compare(document) == "1"
    assert "What changed since commit 1" in document
    # the destination's own flag wins over the run's
    done = run_cli(
        "report",
        str(archive),
        *("--to", "html", "--html-file", "own.html", "--compare", "1", "--html-compare", "2"),
        *("--lang", "ja"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    own = (tmp_path / "own.html").read_text(encoding="utf-8")
    assert '<html lang="ja">' in own and "What changed since commit" not in own
    assert re.search(r"<td>2</td>", own.split("</table>", 1)[0])  # the cover names commit 2
    done = run_cli(
        "report",
        str(archive),
        *("--to", "html", "--html-file", "en.html", "--lang", "ja", "--html-lang", "en"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '<html lang="en">' in (tmp_path / "en.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "destination",
    [("--to", "xlsx", "--xlsx-file", "out.xlsx"), ("--to", "html", "--html-file", "out.html")],
)
def test_a_compare_commit_that_does_not_exist_is_one_line_and_no_file(archive, tmp_path, destination):  # noqa: F811
    done = run_cli("report", str(archive), *destination, "--all", "--compare", "9", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "nitpicker: error: cannot compare with commit 9: site.nitpicker has no commit 9"
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_lang_is_one_line(archive, tmp_path):  # noqa: F811
    done = run_cli("report", str(archive), "--xlsx", "out.xlsx", "--lang", "fr", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "nitpicker: error: unknown report language 'fr' (languages: en, ja)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_pipeline_refuses_a_compare_commit_before_the_crawl(tmp_path):
    done = run_cli(
        "pipeline",
        "http://127.0.0.1:9/",
        "-o",
        "new.nitpicker",
        "--xlsx",
        "out.xlsx",
        "--compare",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "nitpicker: error: cannot compare with commit 1: new.nitpicker does not exist yet"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.browser
def test_pipeline_passes_compare_and_lang_to_its_report_stage(site, tmp_path):
    def pipeline(*args, code=0):
        done = run_cli(
            "pipeline",
            f"{site}/pipeline-site/",
            "-o",
            "p.nitpicker",
            "--single",
            "--no-analyze",
            "--no-image",
            *args,
            cwd=tmp_path,
            timeout=300,
        )
        assert done.returncode == code, done.stderr
        return done

    pipeline()
    pipeline()
    pipeline("--xlsx", "out.xlsx", "--to", "html", code=1)  # two destinations: refused, no commit made
    pipeline("--xlsx", "out.xlsx", "--compare", "1")
    from openpyxl import load_workbook

    cover = {
        (r[0], r[1]): r[2] for r in load_workbook(tmp_path / "out.xlsx")["Cover"].iter_rows(values_only=True)
    }
    assert cover[("Report", "Commit")] == 3 and cover[("Report", "Compared with")] == 1
    pipeline("--to", "html", "--html-file", "r.html", "--compare", "2", "--lang", "ja")
    document = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<html lang="ja">' in document
    assert re.search(r"<td>4</td>.*<td>2</td>", document.split("</table>", 1)[0])  # commit 4 against 2
    done = pipeline("--xlsx", "bad.xlsx", "--compare", "9", code=1)
    assert done.stderr.strip().splitlines() == [
        "nitpicker: error: cannot compare with commit 9: p.nitpicker has no commit 9"
    ]
    assert not (tmp_path / "bad.xlsx").exists()
    assert len(_query(tmp_path / "p.nitpicker", "commits")["items"]) == 4  # nothing crawled
