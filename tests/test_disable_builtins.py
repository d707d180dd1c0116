"""Disabling any built-in plugin, one by one, leaves every command working or refused in one line.

Runs the real CLI entry point in process (``nitpicker_cli.main.main``) with ``NITPICKER_DISABLE_PLUGINS``
naming one built-in: ``--help``, ``plugins``, a query, a CSV report and the markup analyzer either work or
end with exactly one ``nitpicker: error:`` line — never an internal error, a traceback or a half-done result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archives import build_archive
from support import BUILTIN_PLUGINS

from nitpicker_cli.main import main
from nitpicker_core.essential import ESSENTIAL


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_archive(tmp_path_factory.mktemp("disable") / "site.nitpicker")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_works_or_refuses(code: int, err: str, name: str, what: str) -> bool:
    """True when the command worked; otherwise it must be one clean line naming why."""
    assert "internal error" not in err and "Traceback" not in err, f"{what} without {name}: {err}"
    if code == 0:
        return True
    errors = [line for line in err.splitlines() if line.startswith("nitpicker: error:")]
    assert code == 1 and len(errors) == 1, f"{what} without {name}: exit {code}, {err!r}"
    return False


@pytest.mark.parametrize("name", BUILTIN_PLUGINS)
def test_disabling_one_builtin(
    name: str,
    archive: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NITPICKER_DISABLE_PLUGINS", name)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--help")
    if name in ESSENTIAL:  # refused before anything loads, whatever the command
        assert code == 1 and err.count("\n") == 1 and name in err and "essential" in err
        code, out, err = run(capsys, "query", str(archive), "summary")
        assert code == 1 and err.count("\n") == 1 and name in err
        return
    assert code == 0 and "Usage:" in out, err

    code, out, err = run(capsys, "plugins")
    if name == "cmd-plugins":
        assert not assert_works_or_refuses(code, err, name, "plugins") and name in err
    else:
        assert code == 0, err
        statuses = {p["name"]: p["status"] for p in json.loads(out)}
        assert statuses[name].startswith("disabled"), statuses[name]
        others = {n: s for n, s in statuses.items() if n != name and s != "enabled"}
        assert not others, others

    code, out, err = run(capsys, "query", str(archive), "summary")
    if assert_works_or_refuses(code, err, name, "query summary"):
        assert json.loads(out)["counts"]["internal"]["pages"] == 4
    else:
        assert name in ("cmd-query", "core-queries"), err  # only the query machinery may take the query down

    before = archive.read_bytes()
    code, out, err = run(capsys, "report", str(archive), "--csv", str(tmp_path / "csv"), "--all")
    if assert_works_or_refuses(code, err, name, "report --csv"):
        assert (tmp_path / "csv" / "page-list.csv").is_file()
    else:
        assert not (tmp_path / "csv").exists() or not any((tmp_path / "csv").iterdir())
    assert archive.read_bytes() == before
