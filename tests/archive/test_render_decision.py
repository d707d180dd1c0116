"""``--render auto``'s decision is the commit's (commit_page.render_decision, format 8), not its page state's.

A state is shared by every commit that stored the same content; the decision is what one crawl did. Format 7
kept it in the state (html_facts' ``render``): a reader shows such a file as it always did, and a writer moves
each decision to the rows of the commits that showed it, so every read gives what it gave before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archive_testdata import downgrade_to_format7, page

from nitpicker_core import read
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.models import FORMAT_VERSION
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import query_registry

A, B, C = (f"https://example.org/p/{i}" for i in range(3))
SAMPLE = {"mode": "auto", "template": "t1", "rendered": True, "reason": "sample of its template: same"}
SAMPLE_SETTLED = {**SAMPLE, "verdict": {"render": False, "reason": f"sample {A} same"}}
READ = {"mode": "auto", "template": "t1", "rendered": False, "reason": f"sample {A} same"}
FACTS = '{"canonicals":[[],[]],"js":{"link_count":0,"changed":{}}}'


def _page(i: int, decision: dict[str, Any] | None, variant: str = "") -> Any:
    result = page(i, 3, variant=variant)
    result.html_facts = FACTS
    result.render_decision = None if decision is None else json.dumps(decision, separators=(",", ":"))
    return result


def _commit(w: ArchiveWriter, *results: Any) -> int:
    c = w.begin_commit()
    w.put_pages(c, list(results))
    w.finish_commit(c)
    return c


def crawl(target: Path) -> list[int]:
    """An auto crawl (A its template's sample, B read as sent), then a --render always crawl that stored A's
    same content (the same state) and B's changed."""
    w = ArchiveWriter.open(target)
    commits = [
        _commit(w, _page(0, SAMPLE_SETTLED), _page(1, READ), _page(2, None)),
        _commit(w, _page(0, None), _page(1, None, variant=" changed"), _page(2, None)),
    ]
    w.write()
    w.close()
    return commits


def read_only(target: Path, commits: list[int]) -> dict[tuple[int, str], tuple[Any, ...]]:
    """What the readers give for each page of each commit (a reader never upgrades the file): the pages
    query's column, the page detail's decision and the report rows' two columns."""
    registry = query_registry(make_plugin_manager())
    found: dict[tuple[int, str], tuple[Any, ...]] = {}
    with open_archive(target) as r:
        for c in commits:
            reported = {row["url"]: row for row in read.report_pages(r, c)["items"]}
            for row in run_query(registry, r, "pages", {"limit": 10, "every_type": True}, commit=c)["items"]:
                url = row["url"]
                if url in (A, B, C):
                    detail = run_query(registry, r, "page-detail", {"url": url}, commit=c)["render"]
                    report = reported[url]
                    found[(c, url)] = (
                        row["render_decision"],
                        detail,
                        report["render_rendered"],
                        report["render_reason"],
                    )
    return found


def seen(target: Path, commits: list[int]) -> dict[tuple[int, str], tuple[Any, ...]]:
    """``read_only``'s, and what a resumed crawl takes over (the writer's ``render_decisions``)."""
    found = read_only(target, commits)
    w = ArchiveWriter.open(target)
    try:
        resumed = {c: dict(w.render_decisions(c)) for c in commits}
    finally:
        w.close()
    return {(c, url): (*values, resumed[c].get(url)) for (c, url), values in found.items()}


def _shown(decision: dict[str, Any] | None) -> tuple[Any, ...]:
    if decision is None:
        return (None, None, None, None, None)
    said = ("rendered: " if decision["rendered"] else "read as sent: ") + decision["reason"]
    return (said, decision, int(decision["rendered"]), decision["reason"], decision)


def test_each_commit_reads_the_decision_it_took(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    first, second = crawl(target)
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION == 8
        shared = r.execute(
            "SELECT COUNT(DISTINCT state_id) FROM commit_page cp JOIN url u ON u.id = cp.url_id WHERE u.url = ?",
            [A],
        )[0][0]
        # the decision is no fact of the content: the state's facts are what the scrape found
        facts = {
            row[0] for row in r.execute("SELECT html_facts FROM page_state WHERE html_facts IS NOT NULL")
        }
    assert shared == 1 and facts == {FACTS}
    assert seen(target, [first, second]) == {
        (first, A): _shown(SAMPLE_SETTLED),
        (first, B): _shown(READ),
        (first, C): _shown(None),
        (second, A): _shown(None),  # the same state: the auto crawl's decision is not this crawl's
        (second, B): _shown(None),
        (second, C): _shown(None),
    }


def test_a_format_7_archive_reads_as_before_and_a_writer_moves_its_decisions(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    commits = crawl(target)
    downgrade_to_format7(target)
    with open_archive(target) as r:  # readers never migrate: the decisions are in the states' facts
        assert r.format_version == 7 and not r.has_column("commit_page", "render_decision")
        facts = dict(
            r.execute("SELECT u.url, ps.html_facts FROM page_state ps JOIN url u ON u.id = ps.url_id")
        )
    assert json.loads(facts[A])["render"] == SAMPLE_SETTLED
    before = {key: values[:4] for key, values in read_only(target, commits).items()}
    # format 7 showed the state's decision in every commit holding it: the --render always crawl too
    assert before[(commits[1], A)] == _shown(SAMPLE_SETTLED)[:4]
    assert before[(commits[0], B)] == _shown(READ)[:4] and before[(commits[1], B)] == _shown(None)[:4]
    w = ArchiveWriter.open(target)  # the upgrade
    try:
        assert w.info()["format_version"] == FORMAT_VERSION
        w.write()
    finally:
        w.close()
    after = seen(target, commits)
    with open_archive(target) as r:
        assert r.format_version == FORMAT_VERSION and r.has_column("commit_page", "render_decision")
    assert {key: values[:4] for key, values in after.items()} == before
    assert after[(commits[0], A)][4] == SAMPLE_SETTLED  # what a resumed crawl takes over: as format 7 did
    w = ArchiveWriter.open(target)
    try:
        third = _commit(w, _page(0, None), _page(1, READ), _page(2, None))  # a commit of format 8
        w.write()
    finally:
        w.close()
    again = seen(target, [*commits, third])
    assert {key: v for key, v in again.items() if key[0] != third} == after
    assert again[(third, A)] == _shown(None) and again[(third, B)] == _shown(READ)
