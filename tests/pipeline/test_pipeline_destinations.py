"""`nitpicker pipeline --to NAME`: a third-party destination as the report stage, kept across resumes."""

from __future__ import annotations

import json

import pytest
from pipeline_helpers import events, journal_of
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT, run_cli

JSONDUMP = """
import json
from pathlib import Path
from nitpicker_core import Cell, Destination, DestinationOption, hookimpl

def write(sheets, options):
    out = Path(options["dir"])
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for sheet, rows in sheets:
        data = [[v.value if isinstance(v, Cell) else v for v in row] for row in rows]
        name = sheet.name.lower().replace(" ", "-") + ".json"
        (out / name).write_text(json.dumps({"columns": list(sheet.columns), "rows": data, "tag": options.get("tag")},
                                           default=str))
        names.append(name)
    return names

@hookimpl
def register_report_destinations(register):
    register(Destination("jsondump", write, "one JSON file per sheet", options=(
        DestinationOption("dir", "output-dir", "Where the JSON files go.", required=True),
        DestinationOption("tag", help="A label stored in every file."),
    )))
"""


@pytest.fixture(scope="module")
def jsondump_env(tmp_path_factory):
    dist = make_dist(
        tmp_path_factory.mktemp("pipe-dest-dist"),
        "nitpicker-jsondump",
        "jsondump",
        "jsondump_plugin",
        JSONDUMP,
    )
    return {
        "PYTHONPATH": f"{ROOT}:{dist}",
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "jsondump"]),
    }


def _run(*args, cwd, env, code=0):
    result = run_cli("pipeline", *args, cwd=cwd, env=env, timeout=300)
    assert result.returncode == code, result.stderr
    return json.loads(result.stdout)


@pytest.mark.browser
def test_a_third_party_destination_is_the_report_stage_and_survives_resume(site, jsondump_env, tmp_path):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    summary = _run(
        f"{site}/pipeline-site/",
        "-o",
        "p.nitpicker",
        "--single",
        "--no-analyze",
        "--no-image",
        "--to",
        "jsondump",
        "--jsondump-dir",
        "out",
        "--jsondump-tag",
        "nightly",
        "--only",
        "Page List",
        cwd=work,
        env=jsondump_env,
    )
    assert summary["stages"] == {"crawl": "done", "report": "done"}
    assert summary["report"] == {"destination": "jsondump", "target": "out", "result": ["page-list.json"]}
    written = json.loads((work / "out" / "page-list.json").read_text())
    assert written["tag"] == "nightly" and "URL" in written["columns"]
    url = written["columns"].index("URL")
    assert [row[url] for row in written["rows"]] == [f"{site}/pipeline-site/"]
    archive = work / "p.nitpicker"
    report = events(journal_of(archive))[0]["declaration"]["report"]
    assert report["destination"] == "jsondump"
    assert report["options"] == {"dir": str(work / "out"), "tag": "nightly"}  # stored absolute

    # resumed from another directory: the stored destination still points at work/out, which is intact
    again = _run("--resume", str(archive), cwd=elsewhere, env=jsondump_env)
    assert again["stages"]["report"] == "reused"

    # a shorthand given on resume replaces the stored --to (not "give one destination, not --to and --csv")
    switched = _run("--resume", str(archive), "--csv", "csv-out", cwd=elsewhere, env=jsondump_env)
    assert switched["stages"]["report"] == "done"
    assert switched["report"] == {"destination": "csv", "target": "csv-out", "result": ["page-list.csv"]}
    assert (elsewhere / "csv-out" / "page-list.csv").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--to", "jsondumb"),
            "unknown report destination 'jsondumb' (did you mean jsondump? destinations: csv, "
            "google-sheets, html, jsondump, pdf, xlsx)",
        ),
        (("--to", "jsondump"), "destination jsondump needs --jsondump-dir DIR"),
        (
            ("--to", "jsondump", "--jsondump-dir", "out", "--csv", "c"),
            "give one destination, not --to and --csv",
        ),
        (
            ("--to", "xlsx", "--xlsx-file", "missing-dir/a.xlsx"),
            "cannot write a.xlsx: its directory does not exist",
        ),
    ],
)
def test_a_bad_destination_is_refused_before_the_crawl(jsondump_env, tmp_path, args, message):
    result = run_cli("pipeline", "http://localhost:9/", *args, cwd=tmp_path, env=jsondump_env)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"nitpicker: error: {message}\n")
    assert list(tmp_path.iterdir()) == []
