"""`nitpicker report --to NAME`: destinations chosen by name, their declared options as real flags.

A third-party destination is a real installed distribution (tests/plugin_dists.py) run through the real
CLI; what it wrote is read back and compared with the built-in CSV destination's output.
"""

from __future__ import annotations

import csv
import json
import re

import pytest
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT, run_cli

from nitpicker_core import Destination, DestinationOption, hookimpl
from nitpicker_core.errors import UsageError
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.report import destination_from_flags, prepare_destination

JSONDUMP = """
import json
from pathlib import Path
from nitpicker_core import Cell, Destination, DestinationOption, hookimpl

def write(sheets, options):
    out = Path(options["dir"])
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for sheet, rows in sheets:
        data = [[v.value if isinstance(v, Cell) else v for v in row] for row in rows]
        body = {"columns": list(sheet.columns), "rows": data,
                "options": {k: options.get(k) for k in ("dir", "indent", "tag", "compact")}}
        name = sheet.name.lower().replace(" ", "-") + ".json"
        (out / name).write_text(json.dumps(body, default=str, indent=None if options.get("compact")
                                           else options["indent"]))
        written[name] = len(data)
    return {"written": written}

@hookimpl
def register_report_destinations(register):
    register(Destination("jsondump", write, "one JSON file per sheet", options=(
        DestinationOption("dir", "output-dir", "Where the JSON files go.", required=True),
        DestinationOption("indent", "int", "Indentation of the JSON.", default=2),
        DestinationOption("tag", help="A label stored in every file."),
        DestinationOption("compact", "bool", "No whitespace at all."),
    )))
"""

# `--dedupe-resources` is the report command's own flag: this destination's option cannot have it
CLASHING = """
from nitpicker_core import Destination, DestinationOption, hookimpl

@hookimpl
def register_report_destinations(register):
    register(Destination("dedupe", lambda sheets, options: None, options=(DestinationOption("resources"),)))
"""


@pytest.fixture(scope="module")
def dest_env(tmp_path_factory):
    """The built-ins plus two installed third-party destinations: `jsondump` and the clashing `dedupe`."""
    root = tmp_path_factory.mktemp("dest-dists")
    make_dist(root / "a", "nitpicker-jsondump", "jsondump", "jsondump_plugin", JSONDUMP)
    make_dist(root / "b", "nitpicker-dedupe", "dedupe", "dedupe_plugin", CLASHING)
    return {
        "PYTHONPATH": f"{ROOT}:{root / 'a'}:{root / 'b'}",
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "jsondump", "dedupe"]),
    }


def test_a_third_party_destination_selected_by_to_receives_the_sheets(report_archive, dest_env, tmp_path):
    result = run_cli(
        "report",
        str(report_archive),
        "--to",
        "jsondump",
        "--jsondump-dir",
        "out",
        "--jsondump-tag",
        "weekly",
        "--jsondump-indent",
        "4",
        "--only",
        "Page List",
        "--only",
        "Links",
        cwd=tmp_path,
        env=dest_env,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"written": {"page-list.json": 4, "links.json": 5}}
    pages = json.loads((tmp_path / "out" / "page-list.json").read_text())
    assert pages["options"] == {"dir": "out", "indent": 4, "tag": "weekly", "compact": None}
    assert (
        (tmp_path / "out" / "page-list.json").read_text().startswith('{\n    "columns"')
    )  # the int reached it

    # the same sheet through the built-in CSV destination: same columns, same pages
    result = run_cli(
        "report",
        str(report_archive),
        "--to",
        "csv",
        "--csv-dir",
        "csv",
        "--only",
        "Page List",
        cwd=tmp_path,
        env=dest_env,
    )
    assert result.returncode == 0, result.stderr
    with (tmp_path / "csv" / "page-list.csv").open(encoding="utf-8-sig", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    assert pages["columns"] == header
    url = header.index("URL")
    assert sorted(r[url] for r in pages["rows"]) == sorted(r[url] for r in rows) and len(rows) == 4


def test_help_groups_each_destinations_options_on_report_and_pipeline(dest_env, tmp_path):
    for command in ("report", "pipeline"):
        result = run_cli(command, "--help", cwd=tmp_path, env=dest_env)
        assert result.returncode == 0, result.stderr
        text = result.stdout
        for section, flags in (
            (
                "Destination jsondump (--to jsondump):",
                [
                    "--jsondump-dir DIR",
                    "--jsondump-indent INT",
                    "--jsondump-tag TEXT",
                    "--jsondump-compact / --no-jsondump-compact",
                ],
            ),
            ("Destination xlsx (--to xlsx):", ["--xlsx-file FILE"]),
            ("Destination csv (--to csv):", ["--csv-dir DIR"]),
            (
                "Destination google-sheets (--to google-sheets):",
                ["--google-sheets-url TEXT", "--google-sheets-credentials FILE"],
            ),
        ):
            part = text.split(section, 1)[1].split("\n\n", 1)[0]
            assert all(flag in part for flag in flags), (command, section, part)
        assert "--to NAME" in text.split("Destination ", 1)[0]
        assert "--dedupe-resources" in text and "Destination dedupe" not in text


def test_a_destination_option_that_clashes_with_a_command_option_makes_only_its_plugin_unavailable(
    dest_env, tmp_path
):
    result = run_cli("plugins", cwd=tmp_path, env=dest_env)
    assert result.returncode == 0, result.stderr
    status = {p["name"]: p["status"] for p in json.loads(result.stdout)}
    # whichever of report and pipeline is built first finds the clash; both have --dedupe-resources
    assert re.fullmatch(
        r"unavailable: destination dedupe: --dedupe-resources is already an option of "
        r"`nitpicker (report|pipeline)`",
        status["dedupe"],
    ), status["dedupe"]
    assert status["jsondump"] == "enabled" and status["cmd-report"] == "enabled"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--to", "jsondmp"),
            "unknown report destination 'jsondmp' (did you mean jsondump? destinations: csv, "
            "google-sheets, html, jsondump, pdf, xlsx)",
        ),
        (
            ("--to", "xlxs"),
            "unknown report destination 'xlxs' (did you mean xlsx? destinations: csv, google-sheets, "
            "html, jsondump, pdf, xlsx)",
        ),
        (
            ("--to", "docx"),
            "unknown report destination 'docx' (destinations: csv, google-sheets, html, jsondump, pdf, xlsx)",
        ),
        (
            ("--to", "dedupe"),
            "report destination 'dedupe' is not available: plugin dedupe is unavailable: destination "
            "dedupe: --dedupe-resources is already an option of `nitpicker pipeline`",
        ),
        (("--to", "jsondump"), "destination jsondump needs --jsondump-dir DIR"),
        (("--to", "xlsx"), "destination xlsx needs --xlsx-file FILE"),
        (
            ("--jsondump-dir", "out"),
            "--jsondump-dir is an option of destination jsondump: give --to jsondump",
        ),
        (
            ("--to", "csv", "--csv-dir", "out", "--xlsx-file", "a.xlsx"),
            "--xlsx-file is an option of destination xlsx, not of csv",
        ),
        (("--to", "csv", "--xlsx", "a.xlsx"), "give one destination, not --to and --xlsx"),
        (("--xlsx", "a.xlsx", "--xlsx-file", "b.xlsx"), "give --xlsx or --xlsx-file, not both"),
        (
            ("--to", "jsondump", "--jsondump-dir", "plain-file"),
            "cannot write into plain-file: it exists and is not a directory",
        ),
        (
            ("--to", "xlsx", "--xlsx-file", "no/such/dir/a.xlsx"),
            "cannot write no/such/dir/a.xlsx: its directory does not exist",
        ),
        (
            ("--to", "google-sheets", "--google-sheets-url", "https://example.com/x"),
            "--sheet must be a Google Sheets URL (https://docs.google.com/spreadsheets/d/ID/…)",
        ),
        (
            (
                "--to",
                "google-sheets",
                "--google-sheets-url",
                "https://docs.google.com/spreadsheets/d/abc/edit",
            ),
            "credentials file not found: credentials.json (give --google-sheets-credentials FILE)",
        ),
        (
            ("--to", "jsondump", "--jsondump-dir", "out", "--jsondump-indent", "two"),
            "Invalid value for '--jsondump-indent': 'two' is not a valid integer. (see `nitpicker report --help`)",
        ),
    ],
)
def test_bad_destinations_are_one_line_before_anything_is_opened(dest_env, tmp_path, args, message):
    (tmp_path / "plain-file").write_text("x")
    # the archive does not exist: every one of these must fail before it is opened
    result = run_cli("report", "missing.nitpicker", *args, cwd=tmp_path, env=dest_env)
    assert (result.returncode, result.stderr) == (1, f"nitpicker: error: {message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain-file"]


# -- in process: the declaration and the checks ---------------------------------------------------------


def _pm_with(*destinations: Destination):
    class Plugin:
        @hookimpl
        def register_report_destinations(self, register):
            for destination in destinations:
                register(destination)

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "extra")
    return pm


def test_declarations_are_checked_when_made():
    with pytest.raises(ValueError, match="unknown type 'path'"):
        DestinationOption("file", "path")
    with pytest.raises(ValueError, match="a key is lower-case"):
        DestinationOption("Out File")
    with pytest.raises(ValueError, match="declared twice"):
        Destination("twice", print, options=(DestinationOption("a"), DestinationOption("a", "int")))
    assert Destination("listed", print, options=[DestinationOption("a")]).options == (DestinationOption("a"),)
    assert Destination("my-dest", print).flag("out_file") == "--my-dest-out-file"


def test_a_plugin_whose_destination_declaration_fails_is_unavailable_and_the_rest_stay():
    class Broken:
        @hookimpl
        def register_report_destinations(self, register):
            register(Destination("broken", print, options=(DestinationOption("x", "nope"),)))

    pm = make_plugin_manager()
    pm.add_plugin(Broken(), "broken")
    with pytest.raises(
        UsageError,
        match=r"^report destination 'broken' is not available: plugin broken is "
        r"unavailable: ValueError: destination option x: unknown type 'nope'",
    ):
        prepare_destination(pm, "broken", {})
    assert prepare_destination(pm, "csv", {"dir": "out"}, check_paths=False)[1] == {"dir": "out"}


def test_defaults_fill_options_and_free_form_destinations_keep_their_keys():
    checked = []
    declared = Destination(
        "declared",
        print,
        options=(DestinationOption("level", "int", default=3), DestinationOption("name", required=True)),
        check=checked.append,
    )
    free = Destination("free", print)  # declares nothing: any option passes, as before options were declared
    pm = _pm_with(declared, free)
    destination, options = prepare_destination(pm, "declared", {"name": "n", "level": None})
    assert destination is not None and options == {"name": "n", "level": 3} and checked == [options]
    with pytest.raises(
        UsageError, match=r"^destination declared has no option 'colour' \(options: level, name\)$"
    ):
        prepare_destination(pm, "declared", {"name": "n", "colour": "red"})
    assert prepare_destination(pm, "free", {"anything": 1})[1] == {"anything": 1}


def test_shorthands_map_to_the_declared_options():
    assert destination_from_flags(xlsx="a.xlsx") == ("xlsx", {"file": "a.xlsx"})
    assert destination_from_flags(csv="out") == ("csv", {"dir": "out"})
    assert destination_from_flags(
        sheet="https://docs.google.com/spreadsheets/d/x/", credentials="c.json"
    ) == ("google-sheets", {"url": "https://docs.google.com/spreadsheets/d/x/", "credentials": "c.json"})


def test_a_csv_report_that_fails_half_way_leaves_the_previous_report_whole(tmp_path):
    # issue 33: the sheets written before the failure were new, the rest old: a report of two crawls at once
    from nitpicker_csv import write_csv

    from nitpicker_core import Sheet

    out = tmp_path / "report"
    sheets = [Sheet(name, ("url", "n"), rows=lambda *_: []) for name in ("Summary", "Page List", "Links")]

    def rows(version: str, fail_at: str | None = None):
        def sheet_rows(sheet):
            for i in range(3):
                if sheet.name == fail_at and i == 2:
                    raise RuntimeError("the archive went away")
                yield [f"https://site.test/{version}/{i}", i]

        return [(sheet, sheet_rows(sheet)) for sheet in sheets]

    assert write_csv(rows("old"), {"dir": str(out), "silent": True}) == [
        "summary.csv",
        "page-list.csv",
        "links.csv",
    ]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(RuntimeError, match="the archive went away"):
        write_csv(rows("new", fail_at="Links"), {"dir": str(out), "silent": True})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no new file, no .partial left
    write_csv(rows("new"), {"dir": str(out), "silent": True})
    assert all(b"/new/" in p.read_bytes() and b"/old/" not in p.read_bytes() for p in out.iterdir())
