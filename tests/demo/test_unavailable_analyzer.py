"""An analyzer whose plugin is unavailable, chosen by name, is refused with the plugin's reason and install hint."""

from __future__ import annotations

from archives import build_archive
from support import run_cli

MISSING = ("--lighthouse-binary", "/nonexistent/lighthouse")  # as if lighthouse were not installed


def test_lighthouse_without_its_binary_names_the_install_hint(tmp_path):
    archive = build_archive(tmp_path / "a.nitpicker")
    analyze = run_cli("analyze", "--plugin", "lighthouse", *MISSING, str(archive), cwd=tmp_path)
    pipeline = run_cli(
        "pipeline",
        "http://localhost:9/",
        "-o",
        "p.nitpicker",
        "--plugin",
        "lighthouse",
        *MISSING,
        cwd=tmp_path,
    )
    for result in (analyze, pipeline):
        assert result.returncode == 1
        said = result.stderr.strip().splitlines()
        assert len(said) == 1 and said[0].startswith(
            "nitpicker: error: analyzer 'lighthouse' is unavailable: "
        )
        assert "install it with: npm i -g lighthouse@" in said[0] and "unknown analyzer" not in said[0]
    assert not (tmp_path / "p.nitpicker").exists()  # refused before the crawl
