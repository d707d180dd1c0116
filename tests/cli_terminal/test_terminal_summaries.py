"""On a terminal: pipeline shows its stages in order (crawl line, analyzer bars) and ends with a summary;
analyze run again says the same numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pty_terminal import Terminal

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def runs(site, tmp_path_factory):
    """One pipeline (crawl → markup) on a terminal, then `analyze` again."""
    workdir = Path(tmp_path_factory.mktemp("summaries"))
    shown = {}
    for name, args in (
        (
            "pipeline",
            (
                "pipeline",
                f"{site}/analyze/markup/",
                "-o",
                "pipe.nitpicker",
                "--no-image",
                "--plugin",
                "markup",
            ),
        ),
        ("analyze", ("analyze", "pipe.nitpicker", "--plugin", "markup")),
    ):
        term = Terminal(*args, cwd=workdir)
        code = term.wait()
        shown[name] = (code, term.fragments())
    return shown


def _after(fragments: list[str], start: str) -> str:
    text = "\n".join(fragments)
    return text[text.index(start) :]


def test_pipeline_shows_its_stages_in_order_with_analyzer_bars(runs):
    code, shown = runs["pipeline"]
    assert code == 0, shown[-20:]
    header = next(i for i, f in enumerate(shown) if f.startswith("pipeline: run "))
    crawling = next(i for i, f in enumerate(shown) if f.startswith("Crawling:"))
    bar = next(i for i, f in enumerate(shown) if re.match(r"markup .* 3/3 pages · \d+ violations", f))
    summary = next(i for i, f in enumerate(shown) if f.startswith("Crawl complete:"))
    assert header < crawling < bar < summary
    assert not any(f.startswith("pipeline: run ") for f in shown[header + 1 :])  # said once, never redrawn


def test_pipeline_ends_with_a_summary_for_people(runs):
    _, shown = runs["pipeline"]
    summary = _after(shown, "Crawl complete:")
    assert re.match(
        r"Crawl complete: 3 pages of \d+ internal URLs \(3 rendered, 0 skipped\)(, \d+ external URLs? "
        r"checked)? in \d+ s\n"
        r"Errors: none\n"
        # the test site's robots.txt (test_server/routes/robots.py) shuts three AI tokens out
        r"AI crawlers: 3 of 24 blocked site-wide by robots\.txt \(Google-Extended, GPTBot, CCBot\); "
        r"search crawlers: 0 of 6 \(query crawlers\)\n"
        r"Analyzed 3 pages with 1 analyzer \(markup\): \d+ violations, 0 analyzer errors\n"
        r"Findings: .+\n"
        r"Changed: nothing to compare with \(the archive's first commit\)\n"
        r"Archive: pipe\.nitpicker \(commit 1\) · journal: [\w-]+\.jsonl\n"
        r"Next:\nnitpicker viewer pipe\.nitpicker\nnitpicker issues pipe\.nitpicker$",
        summary,
    ), summary
    assert "{" not in summary


def test_analyze_again_says_the_stored_violations(runs):
    _, shown = runs["pipeline"]
    violations = int(re.search(r"\(markup\): (\d+) violations", "\n".join(shown)).group(1))
    assert violations > 0
    code, again = runs["analyze"]
    assert code == 0
    summary = _after(again, "Analyzed ")
    # issue 18: a re-run whose pages were all done before said 0 violations at the top
    assert summary.startswith(
        f"Analyzed 3 pages with 1 analyzer (markup): {violations} violations, "
        "0 analyzer errors, 3 page results reused\nFindings: "
    ), summary
    assert summary.endswith(
        "Archive: pipe.nitpicker (commit 1)\nNext:\nnitpicker viewer pipe.nitpicker\n"
        "nitpicker issues pipe.nitpicker"
    )
