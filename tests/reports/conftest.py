"""Shared fixtures for the report tests: one crawled-and-analyzed archive, a Sheets stand-in, credentials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import run_cli

ROOT = "/report-site/"


@pytest.fixture(scope="session")
def report_archive(site, tmp_path_factory) -> Path:
    """/report-site/ crawled once in Chromium, then analyzed by a test analyzer (one column, violations)."""
    from nitpicker_core import Analyzer, Column, PageReport, Violation, hookimpl
    from nitpicker_core.analyze import run_analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    workdir = tmp_path_factory.mktemp("report")
    archive = workdir / "site.nitpicker"
    result = run_cli("crawl", "-o", str(archive), site + ROOT, "--parallels", "2", cwd=workdir, timeout=300)
    assert archive.exists(), result.stderr

    class Links(Analyzer):
        name = "linkcount"
        columns = (Column("anchors", "Anchors"),)

        def each_page(self, page):
            anchors = len(page.document.findall(".//a"))
            found = (
                [Violation("few-links", f"only {anchors} link(s)", "warning", "body", snippet="<body>")]
                if anchors < 2
                else []
            )
            return PageReport({"anchors": anchors}, found)

    class Plugin:
        @hookimpl
        def register_analyzers(self, register):
            register(Links())

    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "linkcount-plugin")
    run_analyze(pm, load_config(pm, data={}), archive, ["linkcount"], commit=None)
    return archive


@pytest.fixture(scope="session")
def rsa_key():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture
def standin(rsa_key):
    from standin import Store, serve

    store = Store(public_key=rsa_key[1])
    server, base = serve(store)
    yield store, base
    server.shutdown()


@pytest.fixture
def service_account(tmp_path, rsa_key, standin) -> Path:
    """A service-account key file whose token_uri is the stand-in: google-auth signs a real JWT for it."""
    _, base = standin
    path = tmp_path / "sa.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "nitpicker-test",
                "private_key_id": "test-key-1",
                "private_key": rsa_key[0],
                "client_email": "reporter@nitpicker-test.iam.gserviceaccount.com",
                "client_id": "1234567890",
                "token_uri": f"{base}/token",
            }
        )
    )
    return path
