"""The demo from the installed wheel, outside the source tree: `nitpicker pipeline` twice, version 1 then 2.

The wheel is built from a copy of the working tree and installed into a new venv. Its dependencies come
from the registry when NITPICKER_INSTALL_DEPS=1 (a fresh install took over 10 minutes here, so CI sets
it in one job only); otherwise from the interpreter running the tests, through a directory of links that
leaves out this checkout's editable install, so nitpicker's own code can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from support import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SKIPPED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.nitpicker",
    "*.nitpicker.stub",
    "*.runs",
    ".tox",
    ".*_cache",
    ".hypothesis",
    "node_modules",
    "benchmarks",
    "tests",
)
# The checkout's own install in this interpreter: the editable finder and its metadata (entry points)
OWN = ("nitpicker", "__editable__", "_nitpicker")


def _run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _dependencies(into: Path) -> Path:
    """A directory linking every package of this interpreter's site-packages but nitpicker's own."""
    into.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if not entry.name.lower().startswith(OWN) and entry.suffix != ".pth":
            (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("installed")
    source, wheels, venv = base / "src", base / "wheels", base / "venv"
    shutil.copytree(ROOT, source, ignore=SKIPPED, symlinks=True)
    built = _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        wheels,
        source,
        cwd=base,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(wheels.glob("nitpicker-*.whl"))
    full = os.environ.get("NITPICKER_INSTALL_DEPS") == "1"
    made = _run(sys.executable, "-m", "venv", *([] if full else ["--without-pip"]), venv, cwd=base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    if full:
        done = _run(python, "-m", "pip", "install", "-q", wheel, cwd=base, timeout=1800)
    else:
        done = _run(
            sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", wheel, cwd=base
        )
        purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=base)
        (Path(purelib.stdout.strip()) / "nitpicker_deps.pth").write_text(f"{_dependencies(base / 'deps')}\n")
    assert done.returncode == 0, done.stderr
    shutil.rmtree(source)  # nothing of the checkout is left to import from
    work = base / "elsewhere"
    work.mkdir()
    return {"wheel": wheel, "nitpicker": venv / "bin" / "nitpicker", "work": work}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return env


def _cli(installed: dict[str, Path], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return _run(installed["nitpicker"], *args, cwd=installed["work"], env=_env(), timeout=timeout)


def _pipeline(installed: dict[str, Path]) -> dict:
    # markup and text (the Japanese pages) besides the built-in checks; axe and images left out for time
    result = _cli(installed, "pipeline", "--json", "--no-image", "--plugin", "markup", "--plugin", "text")
    assert result.returncode == 2, result.stderr  # 2: only an external link failed (the closed partner)
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def runs(installed) -> list[dict]:
    return [_pipeline(installed), _pipeline(installed)]


def _issues(installed: dict[str, Path], *args: str) -> dict[str, dict]:
    result = _cli(installed, "issues", "nitpicker-demo.nitpicker", "--json", *args, timeout=300)
    assert result.returncode == 0, result.stderr
    return {item["id"]: item for item in json.loads(result.stdout)["items"]}


def test_the_wheel_ships_the_demo_not_the_test_site(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "nitpicker_demo/site.py" in names
    assert not [n for n in names if n.startswith(("test_server/", "tests/"))]
    where = _run(
        installed["nitpicker"].with_name("python"),
        "-c",
        "import nitpicker_demo; print(nitpicker_demo.__file__)",
        cwd=installed["work"],
        env=_env(),
    )
    assert "site-packages" in where.stdout and str(ROOT) not in where.stdout


def test_the_first_run_crawls_the_shop_and_finds_each_kind_of_problem(installed, runs):
    first = runs[0]
    assert first["archive"] == "nitpicker-demo.nitpicker" and first["stages"] == {
        "crawl": "done",
        "analyze": "done",
    }
    assert first["crawl"]["rendered"] >= 20 and first["crawl"]["external_errors"] == 1
    assert "nitpicker viewer nitpicker-demo.nitpicker" in " ".join(first.get("next") or [])
    found = {k: v["findings"] for k, v in _issues(installed, "--commit", "1").items() if v["findings"]}
    for check in (
        "broken-link",
        "link-to-redirect",
        "redirect-chain",
        "link-to-server-error",
        "external-link-broken",
        "title-duplicate",
        "description-duplicate",
        "canonical-mismatch",
        "og-title-mismatch",
        "jsonld-parse-error",
        "h1-missing",
        "h1-multiple",
        "title-too-long",
        "console-error",
        "noindex-linked",
        "html-lang",
        "duplicate-id",
        "text/doubled-particle",
        "text/halfwidth-kana",
    ):
        assert check in found, (check, sorted(found))


def test_the_second_run_crawls_version_2_and_shows_what_changed(installed, runs):
    second = runs[1]
    assert second["archive"] == "nitpicker-demo.nitpicker" and second["crawl"]["commit"] == 2
    diff = _cli(installed, "diff", "nitpicker-demo.nitpicker", timeout=300)
    assert diff.returncode == 0, diff.stderr
    changed = json.loads(diff.stdout)
    assert {u.split("/showcase/")[1] for u in changed["added"]} == {
        "products/9",
        "blog/6",
    }  # same URLs: same port
    issues = _issues(installed)
    assert (
        issues["broken-link"]["new"] >= 1 and issues["broken-link"]["fixed"] >= 1
    )  # products/8 ; old-catalogue
    assert issues["text/doubled-particle"]["fixed"] == 1 and issues["console-error"]["fixed"] == 1
