"""Journal, failure classification, run lookup and --fail-on parsing (no browser)."""

from __future__ import annotations

import json
import socket

import pytest

from nitpicker_core.errors import ArchiveError, ArchiveLocked, UsageError
from nitpicker_core.pipeline import Journal, classify, find_journal, read_events, replay
from nitpicker_core.pipeline.state import scrub
from nitpicker_core.pipeline.verdict import Threshold, parse


def test_events_are_appended_one_json_line_each(tmp_path):
    path = tmp_path / "x.nitpicker.runs" / "r1.jsonl"
    journal = Journal(path, "r1")
    journal.append("run_started", declaration={"stages": ["crawl"], "url": "http://a.test/"})
    journal.append("stage_started", stage="crawl")
    lines = path.read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["run_started", "stage_started"]
    first = json.loads(lines[0])
    assert list(first) == sorted(first) and first["run"] == "r1" and first["at"].endswith("+00:00")
    with path.open("a") as handle:
        handle.write('{"event": "stage_fini')  # the writer was killed mid-line
    assert [e["event"] for e in read_events(path)] == ["run_started", "stage_started"]
    run = replay(path)
    assert run.state == "running" and run.stages["crawl"]["state"] == "running"


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (KeyboardInterrupt(), ("interrupted", "retryable")),
        (TimeoutError(), ("timeout", "retryable")),
        (ConnectionRefusedError(), ("network", "retryable")),
        (socket.gaierror(), ("network", "retryable")),
        (UsageError("bad"), ("usage", "hard")),
        (ArchiveError("corrupt"), ("archive", "hard")),
        (ArchiveLocked("locked", 3), ("archive", "hard")),
        (ValueError("bug"), ("internal", "hard")),
    ],
)
def test_failures_are_classified(exc, expected):
    assert classify(exc) == expected


def test_a_run_is_found_by_file_archive_or_id(tmp_path):
    runs = tmp_path / "a.nitpicker.runs"
    runs.mkdir()
    for name in ("20261130T100000Z-aaaa", "20261130T110000Z-bbbb"):
        (runs / f"{name}.jsonl").write_text("")
    assert find_journal(str(runs / "20261130T100000Z-aaaa.jsonl"), []).stem == "20261130T100000Z-aaaa"
    assert find_journal(str(tmp_path / "a.nitpicker"), []).stem == "20261130T110000Z-bbbb"  # the latest
    assert find_journal("20261130T100000Z-aaaa", [tmp_path]).stem == "20261130T100000Z-aaaa"
    with pytest.raises(UsageError, match=r"^no pipeline run 'nope' \(give"):
        find_journal("nope", [tmp_path])
    with pytest.raises(UsageError, match="^b.nitpicker has no pipeline run to resume$"):
        find_journal(str(tmp_path / "b.nitpicker"), [])


def test_fail_on_checks_parse():
    assert parse(" violations > 0 ") == Threshold("violations > 0", "violations", None, ">", 0)
    assert parse("violations:markup>=5") == Threshold("violations:markup>=5", "violations", "markup", ">=", 5)
    assert parse("broken-links>10").fails(11) and not parse("broken-links>10").fails(10)
    for bad in ("speed>1", "violations>x", "broken-links:markup>1", "violations=1", ""):
        with pytest.raises(UsageError, match="^--fail-on must be METRIC OP NUMBER"):
            parse(bad)


def test_messages_lose_their_directories():
    assert scrub("cannot read /home/u/audits/x.nitpicker: no") == "cannot read x.nitpicker: no"
    assert scrub("see /tmp/run/ and http://host/a/b") == "see  and http://host/a/b"


def test_an_event_after_a_torn_line_starts_on_a_fresh_line(tmp_path):
    path = tmp_path / "r1.jsonl"
    Journal(path, "r1").append("run_started", declaration={"stages": ["crawl"], "url": "http://a.test/"})
    with path.open("a") as handle:
        handle.write('{"event": "heartbeat", "stage": "cr')  # the writer was killed mid-line
    resumed = Journal(path, "r1")  # the next process, resuming the run
    resumed.append("run_resumed", declaration={"stages": ["crawl"], "url": "http://a.test/"})
    resumed.append("stage_started", stage="crawl")
    assert [e["event"] for e in read_events(path)] == [
        "run_started",
        "journal_torn",
        "run_resumed",
        "stage_started",
    ]
    torn = read_events(path)[1]
    assert torn["torn_bytes"] == len('{"event": "heartbeat", "stage": "cr')
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == 5
    run = replay(path)
    assert run.resumes == 1 and run.state == "running" and run.stages["crawl"]["state"] == "running"
