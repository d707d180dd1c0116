"""Each commit records the tools that made it; its stats describe the whole commit, whatever ran into it."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from archive_testdata import page

from nitpicker_core.archive import ArchiveWriter
from nitpicker_core.archive.manifest import rule_set

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/archives.py: build_archive
from archives import build_archive  # noqa: E402


def test_a_crawled_commit_records_its_environment_and_analyzer_runs(tmp_path: Path, cli) -> None:
    archive = build_archive(tmp_path / "site.nitpicker")
    analyzed = cli(
        "analyze", str(archive), "--plugin", "axe", "--plugin", "markup", cwd=tmp_path, timeout=300
    )
    assert analyzed.returncode == 0, analyzed.stderr
    result = cli("log", str(archive), "--json")
    assert result.returncode == 0, result.stderr
    (commit,) = json.loads(result.stdout)
    env = commit["environment"]
    assert env["python"].startswith(platform.python_version())
    assert env["os"] == platform.platform() and env["state_hash"] == 2
    assert env["playwright"] and env["chromium"].startswith(("Chromium", "Google Chrome", "HeadlessChrome"))
    assert env["plugins"]["archive-writer"].startswith("nitpicker ")
    assert commit["options"] == {"parallels": 1}
    runs = {run["analyzer"]: run for run in commit["analyzers"]}
    assert set(runs) == {"axe", "markup"}
    assert runs["axe"]["rule_set"].startswith("axe-core ") and len(runs["axe"]["settings_hash"]) == 64
    assert runs["markup"]["version"] and runs["markup"]["status"].startswith("complete")
    line = cli("log", str(archive)).stdout
    assert line.startswith("HEAD    1") and env["chromium"].split()[1] in line and "axe-core " in line
    # the commits query (MCP, the viewer's commits page) carries the same manifest and the short line
    queried = json.loads(cli("query", str(archive), "commits").stdout)["items"][0]
    assert queried["environment"] == env and queried["analyzers"] == commit["analyzers"]
    assert queried["tools"] in line


def test_rule_set_is_what_the_version_names_after_plus() -> None:
    assert rule_set("0.3.0+axe-core.4.10.2") == "axe-core 4.10.2"
    assert rule_set("1.0") is None
    assert rule_set("2+rules") == "rules"


def _logged_pages(cli, target: Path) -> str:
    """The count log shows: pages (and URLs) of a complete commit, the URLs recorded so far of an unfinished one."""
    words = cli("log", str(target)).stdout.split()
    if "pages" in words:
        return words[words.index("pages") + 1]
    return words[words.index("urls") + 1]


def test_log_counts_the_whole_commit_after_a_resume_and_while_interrupted(tmp_path: Path, cli) -> None:
    target = tmp_path / "site.nitpicker"
    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit()
    writer.put_pages(commit, [page(i, 32) for i in range(25)])
    writer.finish_commit(commit, "interrupted", {"pages": 25})
    writer.write()
    writer.close()
    assert _logged_pages(cli, target) == "25"
    writer = ArchiveWriter.open(target)
    writer.resume_commit(commit)
    writer.put_pages(commit, [page(i, 32) for i in range(25, 32)])
    # a run that is still going (or was killed): its commit has no stats yet, log counts its rows
    writer.write()
    assert _logged_pages(cli, target) == "32"
    writer.finish_commit(commit, "complete", {"pages": 7})  # the resumed run saw 7 pages
    # an archive written before stats counted the whole commit keeps the last run's count: log recounts
    writer._conn.execute("UPDATE commits SET stats = '{\"pages\": 7}' WHERE id = ?", (commit,))
    writer.write()
    writer.close()
    out = cli("log", str(target), "--json").stdout
    assert json.loads(out)[0]["stats"]["pages"] == 32
    assert _logged_pages(cli, target) == "32"


def test_a_resume_with_other_tools_is_recorded(tmp_path: Path) -> None:
    from nitpicker_core.archive import open_archive

    target = tmp_path / "site.nitpicker"
    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit(environment={"nitpicker": "1.0", "chromium": "Chromium 150"})
    writer.finish_commit(commit, "interrupted")
    writer.resume_commit(commit, {"nitpicker": "1.0", "chromium": "Chromium 150"})  # same tools: nothing
    writer.finish_commit(commit, "interrupted")
    for _ in range(2):  # upgraded Chromium between runs: recorded once
        writer.resume_commit(commit, {"nitpicker": "1.0", "chromium": "Chromium 151"})
        writer.finish_commit(commit, "interrupted")
    writer.write()
    writer.close()
    with open_archive(target) as reader:
        env = reader.commits()[0]["environment"]
    assert env == {
        "nitpicker": "1.0",
        "chromium": "Chromium 150",
        "later_runs": [{"nitpicker": "1.0", "chromium": "Chromium 151"}],
    }
