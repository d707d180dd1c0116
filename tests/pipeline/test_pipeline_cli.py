"""`nitpicker pipeline` through the CLI on /pipeline-site/: journal, resume, changed settings, --fail-on, report."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from pipeline_helpers import events, journal_of, kinds
from support import run_cli

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

# index + p1..p6 + missing (404): every internal URL of /pipeline-site/
PAGES = {"": "Pipeline Site", **{f"p{n}": f"Page {n}" for n in range(1, 7)}, "missing": "Not Found"}


def cells(archive, analyzer="pipe-words"):
    with open_archive(archive) as reader:
        return {
            row["url"].split("/pipeline-site/", 1)[1]: row["value"]
            for row in reader.analysis(analyzer=analyzer)
        }


@pytest.fixture(scope="module")
def first(site, pipe_env, tmp_path_factory):
    """One complete run: crawl + analyze with the test analyzer only."""
    work = tmp_path_factory.mktemp("pipe-first")
    result = run_cli(
        "pipeline",
        f"{site}/pipeline-site/",
        "-o",
        "site.nitpicker",
        "--no-image",
        "--parallels",
        "3",
        "--plugin",
        "pipe-words",
        "--heartbeat",
        "0.3",
        cwd=work,
        env=pipe_env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    archive = work / "site.nitpicker"
    return work, archive, json.loads(result.stdout), events(journal_of(archive))


def test_a_run_prints_a_summary_and_journals_every_stage(first, site):
    work, archive, summary, evs = first
    journal = journal_of(archive)
    assert summary["run"] == journal.stem and summary["journal"] == journal.name
    assert summary["stages"] == {"crawl": "done", "analyze": "done"}
    assert {k: summary["crawl"][k] for k in ("commit", "status", "pages", "rendered", "internal_errors")} == {
        "commit": 1,
        "status": "complete",
        "pages": 8,
        "rendered": 8,
        "internal_errors": 0,
    }
    # "pages" is the summary query's (internal HTML answers); the crawler's own count of URLs is named so
    assert summary["crawl"]["pages"] == summary["totals"]["pages"]
    assert summary["crawl"]["urls_recorded"] == summary["totals"]["urls"] - summary["totals"]["skipped"] == 8
    assert summary["report"] == {"skipped": "no report destination"}
    assert kinds(evs) == [
        "run_started",
        "stage_started:crawl",
        "stage_finished:crawl",
        "stage_started:analyze",
        "stage_finished:analyze",
        "run_finished",
    ]
    assert {e["run"] for e in evs} == {journal.stem}
    decl = evs[0]["declaration"]
    assert decl["url"] == f"{site}/pipeline-site/" and decl["stages"] == ["crawl", "analyze"]
    assert decl["archive"] == str(archive) and decl["analyze"] == {"plugins": ["pipe-words"]}
    assert decl["crawl"]["parallels"] == 3 and decl["crawl"]["image"] is False and decl["report"] is None
    finished = {e["stage"]: e["outputs"] for e in evs if e["event"] == "stage_finished"}
    assert finished["crawl"]["commit"] == 1 and finished["crawl"]["mode"] == "new"
    assert finished["analyze"]["analyzers"] == {
        "pipe-words": {"version": "1.0", "settings": {"word": "Page"}}
    }
    assert (
        evs[-1]["state"] == "complete" and evs[-1]["exit_code"] == 0
    )  # a 404 is a finding, not a crawl error


def test_heartbeats_carry_crawl_counts(first):
    beats = [e for e in first[3] if e["event"] == "heartbeat" and e["stage"] == "crawl"]
    assert beats, "a 3 s crawl with --heartbeat 0.3 journals heartbeats"
    last = beats[-1]["progress"]
    assert last["commit"] == 1 and last["mode"] == "new"
    assert 0 <= last["internal_done"] <= last["internal_found"] <= 8
    times = [e["ts"] for e in first[3]]
    assert times == sorted(times)


def test_the_analysis_is_in_the_archive(first):
    assert cells(first[1]) == {"": 6, **{f"p{n}": 2 for n in range(1, 7)}, "missing": 0}


def resume(work, *args, env, code=0):
    result = run_cli("pipeline", "--resume", "site.nitpicker", *args, cwd=work, env=env, timeout=300)
    assert result.returncode == code, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def new_events(archive, before):
    return events(journal_of(archive))[before:]


def test_resume_reuses_valid_outputs_and_reruns_what_changed(first, pipe_env):
    work, archive, _, _ = first
    before = len(events(journal_of(archive)))
    summary = resume(work, env=pipe_env)
    assert summary["stages"] == {"crawl": "reused", "analyze": "reused"}
    evs = new_events(archive, before)
    assert kinds(evs) == ["run_resumed", "stage_reused:crawl", "stage_reused:analyze", "run_finished"]
    assert evs[0]["declaration"]["params"]["plugins"] == ["pipe-words"]  # the stored invocation is replayed

    # changed analyzer settings: the crawl is reused, analyze runs again (and only analyze)
    before += len(evs)
    summary = resume(work, "--pipewords-word", "alpha", env=pipe_env)
    assert summary["stages"] == {"crawl": "reused", "analyze": "done"}
    evs = new_events(archive, before)
    assert kinds(evs) == [
        "run_resumed",
        "stage_reused:crawl",
        "stage_mismatch:analyze",
        "stage_started:analyze",
        "stage_finished:analyze",
        "run_finished",
    ]
    named = [e for e in evs if e["event"] != "heartbeat"]  # a slow stage may journal heartbeats in between
    assert named[2]["reason"] == "pipe-words: settings changed"
    assert named[4]["outputs"]["analyzers"]["pipe-words"]["settings"] == {"word": "alpha"}
    assert cells(archive) == {"": 1, **{f"p{n}": 1 for n in range(1, 7)}, "missing": 0}
    with open_archive(archive) as reader:
        assert [c["id"] for c in reader.commits()] == [1]  # no second crawl

    # the new setting is now part of the run: resuming again reuses everything
    before += len(evs)
    assert resume(work, env=pipe_env)["stages"] == {"crawl": "reused", "analyze": "reused"}


def test_fail_on_stops_the_run_with_a_verdict(first, pipe_env):
    work, archive, _, _ = first
    before = len(events(journal_of(archive)))
    checks = (
        "broken-links>0",
        "violations>5",
        "violations:pipe-words>=0",
        "crawl-errors>0",
        "analyzer-errors>0",
    )
    summary = resume(work, *(a for c in checks for a in ("--fail-on", c)), env=pipe_env, code=3)
    assert summary["verdict"] == {
        "passed": False,
        "checks": [
            {"check": "broken-links>0", "value": 1, "failed": True},
            {"check": "violations>5", "value": 0, "failed": False},
            {"check": "violations:pipe-words>=0", "value": 0, "failed": True},
            {"check": "crawl-errors>0", "value": 0, "failed": False},
            {"check": "analyzer-errors>0", "value": 0, "failed": False},
        ],
    }
    evs = new_events(archive, before)
    assert kinds(evs)[-2:] == ["verdict", "run_finished"]
    assert evs[-1]["state"] == "stopped" and evs[-1]["exit_code"] == 3  # a failed gate, not an error
    summary = resume(work, "--fail-on", "broken-links>1", env=pipe_env)
    assert summary["verdict"]["passed"] is True


def test_a_bad_fail_on_is_a_usage_error(first, pipe_env):
    result = run_cli(
        "pipeline", "--resume", "site.nitpicker", "--fail-on", "speed<3", cwd=first[0], env=pipe_env
    )
    assert result.returncode == 1 and result.stdout == ""
    assert (
        result.stderr.startswith("nitpicker: error: --fail-on must be METRIC OP NUMBER")
        and "/" not in result.stderr.split("got", 1)[1]
    )


def test_report_stage_writes_csv_and_is_reused_while_its_output_exists(first, pipe_env):
    work, archive, _, _ = first
    out = work / "report"
    summary = resume(work, "--csv", str(out), "--only", "Pipe Pages", env=pipe_env)
    assert summary["stages"] == {"crawl": "reused", "analyze": "reused", "report": "done"}
    assert summary["report"] == {"destination": "csv", "target": "report", "result": ["pipe-pages.csv"]}
    with (out / "pipe-pages.csv").open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Path", "Status", "Title"]
    assert sorted(rows[1:]) == sorted(
        [path, "404" if path == "missing" else "200", title] for path, title in PAGES.items()
    )
    assert resume(work, env=pipe_env)["stages"]["report"] == "reused"
    shutil.rmtree(out)
    before = len(events(journal_of(archive)))
    assert resume(work, env=pipe_env)["stages"]["report"] == "done"
    evs = new_events(archive, before)
    assert [e["reason"] for e in evs if e["event"] == "stage_mismatch"] == ["report is missing"]
    assert (out / "pipe-pages.csv").is_file()


def test_a_failing_report_is_a_hard_failure_in_the_journal(first, pipe_env):
    work, archive, _, _ = first
    before = len(events(journal_of(archive)))
    summary = resume(work, "--csv", str(work / "r2"), "--only", "No Such Sheet", env=pipe_env, code=1)
    assert summary["report"]["reason"] == "usage" and summary["report"]["class"] == "hard"
    assert summary["report"]["message"].startswith("unknown sheet 'No Such Sheet'")
    evs = new_events(archive, before)
    assert kinds(evs)[-2:] == ["stage_failed:report", "run_finished"]
    assert evs[-2]["class"] == "hard" and evs[-1]["state"] == "failed"


def test_an_unreachable_site_is_a_retryable_network_failure(pipe_env, tmp_path):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_cli(
        "pipeline",
        f"http://localhost:{port}/",
        "-o",
        "down.nitpicker",
        "--no-image",
        "--retry",
        "1",
        "--heartbeat",
        "0.2",
        cwd=tmp_path,
        env=pipe_env,
        timeout=300,
    )
    assert result.returncode == 1
    summary = json.loads(result.stdout)
    assert summary["stages"] == {"crawl": "failed"}
    assert summary["crawl"]["reason"] == "network" and summary["crawl"]["class"] == "retryable"
    assert summary["analyze"] == {"skipped": "crawl failed"}
    assert result.stderr.splitlines()[-1].startswith(
        "nitpicker: error: crawl failed (network, retryable): no page could be rendered ("
    )
    evs = events(journal_of(tmp_path / "down.nitpicker"))
    assert kinds(evs) == ["run_started", "stage_started:crawl", "stage_failed:crawl", "run_finished"]
    assert evs[-1] == {**evs[-1], "state": "failed", "exit_code": 1}


def test_report_stage_writes_xlsx(first, pipe_env):
    import openpyxl

    work = first[0]
    summary = resume(work, "--xlsx", "out.xlsx", "--only", "Pipe Pages", env=pipe_env)
    assert summary["stages"]["report"] == "done" and summary["report"]["target"] == "out.xlsx"
    book = openpyxl.load_workbook(work / "out.xlsx", read_only=True)
    rows = [["" if v is None else v for v in r] for r in book["Pipe Pages"].iter_rows(values_only=True)]
    assert rows[0] == ["Path", "Status", "Title"]
    assert sorted(rows[1:]) == sorted([p, 404 if p == "missing" else 200, t] for p, t in PAGES.items())


def test_a_bad_sheet_url_is_refused_before_anything_runs(pipe_env, tmp_path):
    result = run_cli(
        "pipeline", "http://localhost:9/", "--sheet", "https://example.com/x", cwd=tmp_path, env=pipe_env
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        "nitpicker: error: --sheet must be a Google Sheets URL "
        "(https://docs.google.com/spreadsheets/d/ID/…)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_credentials_and_header_values_never_reach_the_journal(site, pipe_env, tmp_path):
    host = site.split("//", 1)[1]
    result = run_cli(
        "pipeline",
        f"http://auditor:pa55word@{host}/pipeline-site/",
        "--single",
        "--no-analyze",
        "--no-image",
        "--header",
        "X-Token: t0ken-value",
        "-o",
        "c.nitpicker",
        cwd=tmp_path,
        env=pipe_env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    text = journal_of(tmp_path / "c.nitpicker").read_text()
    assert "pa55word" not in text and "t0ken-value" not in text
    assert "pa55word" not in result.stdout + result.stderr
    declaration = events(journal_of(tmp_path / "c.nitpicker"))[0]["declaration"]
    assert declaration["url"] == f"{site}/pipeline-site/" and declaration["params"]["header_names"] == [
        "X-Token"
    ]
    assert declaration["stages"] == ["crawl"]


def test_a_report_file_replaced_or_cut_short_is_written_again(first, pipe_env):
    import openpyxl

    work, archive, _, _ = first
    out = work / "checked"
    assert resume(work, "--csv", str(out), "--only", "Pipe Pages", env=pipe_env)["stages"]["report"] == "done"
    good = (out / "pipe-pages.csv").read_bytes()
    (out / "pipe-pages.csv").write_bytes(b"garbage!")  # 8 bytes where the report was
    before = len(events(journal_of(archive)))
    assert resume(work, env=pipe_env)["stages"]["report"] == "done"
    assert [e["reason"] for e in new_events(archive, before) if e["event"] == "stage_mismatch"] == [
        "pipe-pages.csv is not the file the report wrote"
    ]
    assert (out / "pipe-pages.csv").read_bytes() == good
    assert resume(work, env=pipe_env)["stages"]["report"] == "reused"

    assert (
        resume(work, "--xlsx", "checked.xlsx", "--only", "Pipe Pages", env=pipe_env)["stages"]["report"]
        == "done"
    )
    book = work / "checked.xlsx"
    book.write_bytes(book.read_bytes()[: book.stat().st_size // 2])  # a copy cut short
    before = len(events(journal_of(archive)))
    assert resume(work, env=pipe_env)["stages"]["report"] == "done"
    assert [e["reason"] for e in new_events(archive, before) if e["event"] == "stage_mismatch"] == [
        "checked.xlsx is not the file the report wrote"
    ]
    assert len(list(openpyxl.load_workbook(book)["Pipe Pages"].iter_rows(values_only=True))) == len(PAGES) + 1


def test_a_recrawled_archive_does_not_reuse_the_report_of_the_old_one(site, pipe_env, tmp_path):
    url = f"{site}/pipeline-site/"
    result = run_cli(
        "pipeline",
        url,
        "-o",
        "re.nitpicker",
        "--no-image",
        "--no-analyze",
        "--single",
        "--csv",
        "out",
        "--only",
        "Pipe Pages",
        cwd=tmp_path,
        env=pipe_env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    archive = tmp_path / "re.nitpicker"
    old = sorted((tmp_path / "out" / "pipe-pages.csv").read_text(encoding="utf-8-sig").splitlines())
    archive.unlink()  # the archive is made again, by another crawl of the whole site: its commit is 1 again
    result = run_cli(
        "crawl", url, "-o", "re.nitpicker", "--no-image", cwd=tmp_path, env=pipe_env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    with open_archive(archive) as reader:
        assert [c["id"] for c in reader.commits()] == [1] and len(list(reader.pages(1))) == len(PAGES)
    before = len(events(journal_of(archive)))
    result = run_cli("pipeline", "--resume", "re.nitpicker", cwd=tmp_path, env=pipe_env, timeout=300)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stages"] == {"crawl": "done", "report": "done"}
    evs = new_events(archive, before)
    assert [(e["stage"], e["reason"]) for e in evs if e["event"] == "stage_mismatch"] == [
        ("crawl", "commit 1 of re.nitpicker is not the one this run crawled (the archive was made again)"),
        ("report", "crawl ran again"),
    ]
    # the run's own crawl (--single) is commit 2 of the new archive, and the report is made from it
    assert summary["crawl"]["commit"] == 2
    report = next(e for e in evs if e["event"] == "stage_finished" and e["stage"] == "report")
    assert report["outputs"]["commit"] == 2
    assert sorted((tmp_path / "out" / "pipe-pages.csv").read_text(encoding="utf-8-sig").splitlines()) == old
