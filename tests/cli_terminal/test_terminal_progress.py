"""On a terminal: the crawl's progress line against the crawl's real numbers, and the summaries people read."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from pty_terminal import Terminal
from support import server_hits, wait_until

from nitpicker_cli.summary import gather
from nitpicker_core.plugins import make_plugin_manager

pytestmark = pytest.mark.browser

RUN = "terminal"  # the gate's run name: its own counter in the test site
LINE = re.compile(
    r"internal (\d+)/(\d+) done \((\d+) rendered\) · external (\d+)/(\d+) checked · (\d+) queued · "
    r"(\d+) in progress · errors (\d+) internal / (\d+) external · (\d+)%"
)


def _open_gate(site: str, n: int) -> None:
    request = urllib.request.Request(f"{site}/progress-gate/{RUN}/open?n={n}", method="POST")
    urllib.request.urlopen(request, timeout=30).close()


def _numbers(fragment: str) -> tuple[int, ...]:
    match = LINE.search(fragment)
    assert match is not None, fragment
    return tuple(int(n) for n in match.groups())


@pytest.fixture(scope="module")
def gated_crawl(site, tmp_path_factory):
    """The crawl of the gated site on a terminal; the screen at each moment the test let it reach."""
    workdir = Path(tmp_path_factory.mktemp("terminal"))
    # --interval keeps one worker per tab (no URL preflighted ahead while the tabs render), so "in progress"
    # is exactly the two pages held at their gates
    term = Terminal(
        "crawl",
        "-o",
        "gate.nitpicker",
        "--no-image",
        "--parallels",
        "2",
        "--interval",
        "1",
        f"{site}/progress-gate/{RUN}/",
        cwd=workdir,
    )
    moments = {}
    try:
        # the top page is done, two workers wait at the closed gates of alpha and bravo, the rest is queued
        term.wait_for(r"internal 1/7 done .* 2 in progress")
        moments["closed"] = (term.fragments()[-1], server_hits(site, f"/progress-gate/{RUN}/charlie"))
        _open_gate(site, 1)  # alpha answers; charlie is taken and waits
        term.wait_for(r"internal 2/7 done .* 2 in progress")
        line = term.fragments()[-1]
        # charlie counts as in progress from the moment it is taken; its request follows the 1 s --interval
        wait_until(lambda: server_hits(site, f"/progress-gate/{RUN}/charlie") >= 1, "charlie requested")
        moments["one open"] = (line, server_hits(site, f"/progress-gate/{RUN}/charlie"))
        _open_gate(site, 4)
        code = term.wait()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    return term, moments, code, workdir


def test_the_progress_line_shows_from_the_start_before_any_page_is_done(gated_crawl):
    term, _, _, _ = gated_crawl
    shown = term.fragments()
    first = next(i for i, f in enumerate(shown) if f.startswith("Crawling:"))
    assert shown[first].startswith("Crawling: starting")


def test_the_progress_line_counts_what_the_crawl_has_done_at_each_moment(gated_crawl, site):
    _, moments, _, _ = gated_crawl
    line, charlie = moments["closed"]
    # done/found, rendered, external done/found, queued, in progress, errors internal/external, percent
    assert _numbers(line) == (1, 7, 1, 0, 1, 5, 2, 0, 0, 12), line
    assert charlie == 0  # in progress means requested: alpha and bravo, not charlie
    line, charlie = moments["one open"]
    assert _numbers(line) == (2, 7, 2, 0, 1, 4, 2, 0, 0, 25), line
    assert charlie == 1  # requested once, held at its gate


def test_the_last_line_matches_the_archive_and_nothing_ever_counts_down(gated_crawl):
    term, _, code, workdir = gated_crawl
    assert code == 1  # an internal error (the redirect loop)
    lines = [_numbers(f) for f in term.fragments() if LINE.search(f)]
    for before, after in zip(lines, lines[1:], strict=False):
        assert after[0] >= before[0] and after[1] >= before[1] and after[3] >= before[3], (before, after)
        assert after[0] <= after[1] and after[3] <= after[4] and after[9] <= 100
    facts = gather(make_plugin_manager(), workdir / "gate.nitpicker")  # the summary and error-kinds queries
    internal, external = facts["urls"]["internal"], facts["urls"]["external"]
    errors = (sum(k["internal"] for k in facts["errors"]), sum(k["external"] for k in facts["errors"]))
    assert lines[-1] == (internal, internal, 6, external, external, 0, 0, *errors, 100)
    assert (internal, external, errors) == (7, 1, (1, 1))


def test_the_crawl_ends_with_a_summary_for_people(gated_crawl):
    term, _, _, _ = gated_crawl
    text = "\n".join(term.fragments())
    summary = text[text.index("Crawl complete:") :]
    assert re.match(
        r"Crawl complete: 6 pages of \d+ internal URLs \(6 rendered, 0 skipped\), 1 external URL checked "
        r"in \d+ s\nErrors: 1 internal \(1 failed\), 1 external \(1 failed\)\n",
        summary,
    ), summary
    assert re.search(
        r"connection-refused \(1 external\): connection refused \(nothing listens on 127\.0\.0\.1:\d+\)",
        summary,
    )
    assert "redirect-loop (1 internal): it redirects in a loop" in summary
    assert re.search(r"\nFindings: .*\d+ high.* — most severe: ", summary)
    assert "Changed: nothing to compare with (the archive's first commit)" in summary
    assert summary.endswith(
        "Archive: gate.nitpicker (commit 1)\nNext:\nnitpicker viewer gate.nitpicker\n"
        "nitpicker analyze gate.nitpicker\nnitpicker issues gate.nitpicker"
    )
    assert "{" not in summary  # no JSON for people
