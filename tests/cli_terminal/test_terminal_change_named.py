"""On a terminal, the demo's second run names what changed: its new broken link, by check, before the
security headers of the two added pages (issue 27: it said "12 new, 8 fixed" and named none of them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pty_terminal import Terminal

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return Path(tmp_path_factory.mktemp("demo-again"))


@pytest.fixture(scope="module")
def second_run(workdir) -> str:
    """The summary the demo's second `nitpicker pipeline` printed (version 2 of the shop, commit 2)."""
    shown = ""
    for _ in range(2):
        term = Terminal("pipeline", "--no-image", "--plugin", "markup", cwd=workdir)
        code = term.wait()
        shown = "\n".join(term.fragments())
        assert code == 2, shown[-3000:]  # 2: only an external link failed (the closed partner)
    return shown[shown.index("Crawl complete:") :]


def test_the_second_demo_run_names_its_new_broken_link(second_run):
    lines = second_run.splitlines()
    findings = next(i for i, line in enumerate(lines) if line.startswith("Findings: "))
    counts = re.search(r"since commit 1: (\d+) new, (\d+) fixed$", lines[findings])
    assert counts, lines[findings]
    # 8: the new 404 is broken-link's defect alone (a linked 4xx is no client-error-page finding too); the two
    # added pages bring five header checks, canonical-missing and content-low (short pages); no page that
    # was there before is new to content-low only because its word count moved (the detail has no count)
    assert lines[findings + 1] == f"New since commit 1: {counts[1]} findings of 8 checks", "\n".join(
        lines[findings:]
    )
    # the most severe first: the link from blog post 5 to the product page that answers 404 now
    assert re.fullmatch(
        r"high +broken-link \(1\): http://localhost:\d+/showcase/blog/5 → "
        r"http://localhost:\d+/showcase/products/8",
        lines[findings + 2],
    ), lines[findings + 2]
    new = lines[findings + 2 : lines.index(next(x for x in lines if x.startswith("Fixed since commit 1: ")))]
    # fourteen findings of seven checks (five headers, canonical-missing, content-low) on the two added pages:
    # two lines, not fourteen
    headers = [line for line in new if "missing-" in line]
    assert len(headers) == 2 and "/showcase/products/9" in headers[0] and "/showcase/blog/6" in headers[0]
    assert headers[1].endswith("(2 each): the same pages as missing-content-security-policy")
    fixed = lines.index(next(x for x in lines if x.startswith("Fixed since commit 1: ")))
    assert re.fullmatch(
        r"high +broken-link \(1\): http://localhost:\d+/showcase/ → "
        r"http://localhost:\d+/showcase/old-catalogue",
        lines[fixed + 1],
    ), lines[fixed + 1]
    assert lines[fixed].startswith(f"Fixed since commit 1: {counts[2]} findings")


def test_resuming_a_demo_run_whose_port_is_taken_is_one_line_and_journaled(second_run, workdir):
    # issue 33: Werkzeug's raw "Address already in use", exit 1, and nothing in the journal
    import json
    import socket
    from urllib.parse import urlsplit

    from support import run_cli

    archive = workdir / "nitpicker-demo.nitpicker"
    journal = sorted((workdir / "nitpicker-demo.nitpicker.runs").glob("*.jsonl"))[-1]
    started = json.loads(journal.read_text().splitlines()[0])
    port = urlsplit(started["declaration"]["url"]).port
    before = archive.read_bytes()
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # its last connections may wait still
        taken.bind(("127.0.0.1", port))
        taken.listen()
        result = run_cli("pipeline", "--resume", journal.stem, cwd=workdir, timeout=300)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"nitpicker: error: cannot resume {journal.stem}: the demo this run crawled was served on port {port}, "
        "which another program uses now; free it and resume again, or start a new run"
    ]
    last = json.loads(journal.read_text().splitlines()[-1])
    assert last["event"] == "resume_refused" and str(port) in last["reason"]
    assert archive.read_bytes() == before
