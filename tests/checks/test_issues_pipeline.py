"""`nitpicker pipeline --fail-on new:…` on two real crawls of an unchanged site: the gate fails only on new findings."""

from __future__ import annotations

import json
import os

import pytest
from plugin_dists import make_dist
from support import run_cli

pytestmark = pytest.mark.browser

PLUGIN = """
from nitpicker_core import Check, Finding, hookimpl


def error_pages(ctx):
    for p in ctx.reader.pages(ctx.commit):
        if p["status"] and p["status"] >= 400 and not p["is_external"]:
            yield Finding(p["url"], str(p["status"]))


@hookimpl
def register_checks(register):
    register(Check("gate-error-page", "4xx/5xx pages", "links", "high", "", "", findings=error_pages))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = make_dist(
        tmp_path_factory.mktemp("dist"), "gate-checks", "gate-checks", "gate_checks_plugin", PLUGIN
    )
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
        "NITPICKER_LOAD_PLUGINS": os.environ["NITPICKER_LOAD_PLUGINS"] + ",gate-checks",
    }


def pipeline(site, work, env, *flags):
    return run_cli(
        "pipeline",
        f"{site}/pipeline-site/",
        "-o",
        "site.nitpicker",
        "--no-image",
        "--parallels",
        "3",
        "--no-analyze",
        *flags,
        cwd=work,
        env=env,
        timeout=300,
    )


def test_a_weekly_gate_fails_on_the_first_crawl_and_passes_when_nothing_is_new(site, env, tmp_path):
    first = pipeline(site, tmp_path, env, "--fail-on", "new:gate-error-page")
    assert first.returncode == 3, first.stderr  # the gate failed
    verdict = json.loads(first.stdout)["verdict"]
    assert verdict == {
        "passed": False,
        "checks": [
            {"check": "new:gate-error-page", "value": 1, "failed": True, "failing": ["gate-error-page"]}
        ],
    }

    # the same site again: the 404 persists (its fingerprint survived the re-crawl), nothing is new
    second = pipeline(site, tmp_path, env, "--fail-on", "new:gate-error-page", "--fail-on", "broken-links>5")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["verdict"]["checks"][0] == {
        "check": "new:gate-error-page",
        "value": 0,
        "failed": False,
        "failing": [],
    }
    issues = run_cli(
        "query", "site.nitpicker", "issue-urls", "--check", "gate-error-page", cwd=tmp_path, env=env
    )
    assert [(i["url"], i["state"]) for i in json.loads(issues.stdout)["items"]] == [
        (f"{site}/pipeline-site/missing", "persisting")
    ]

    # any finding, new or not, still fails the gate that asks for it
    third = run_cli(
        "pipeline", "--resume", "site.nitpicker", "--fail-on", "high", cwd=tmp_path, env=env, timeout=300
    )
    assert third.returncode == 3, third.stderr
    (check,) = json.loads(third.stdout)["verdict"]["checks"]
    assert check["check"] == "high" and check["failed"] and "gate-error-page" in check["failing"]
