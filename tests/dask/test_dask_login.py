"""A logged-in crawl on Dask workers: the login runs on the client, its cookies and localStorage travel with
each page (no file path: a worker may be another machine)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import requests
from support import run_cli

from nitpicker_core.archive import open_archive
from test_server.routes.login_site import APP_PAGES, MEMBER_PAGES, PASSWORD, USER

MEMBERS = {f"Member {name.title()}" for name in MEMBER_PAGES} | {"Members"}


def test_a_scripted_login_renews_on_the_cluster_and_no_secret_reaches_its_logs(
    site: str, dask_cluster: Any, tmp_path: Path
) -> None:
    run = f"dask-{uuid.uuid4().hex[:8]}-n5"
    (tmp_path / "nitpicker.toml").write_text(
        f'[login]\nurl = "{site}/login-site/{run}/login"\nsubmit = "#sign-in"\n'
        f'[login.fields]\nusername = "{USER}"\npassword = "env:SITE_PASSWORD"\n',
        encoding="utf-8",
    )
    address = "dask://" + str(dask_cluster.scheduler.address).removeprefix("tcp://")
    archive = tmp_path / "members.nitpicker"
    result = run_cli(
        "--verbose",
        "crawl",
        f"{site}/login-site/{run}/members/",
        "-o",
        str(archive),
        "--executor",
        address,
        "--no-image",
        "--json",
        cwd=tmp_path,
        env={"SITE_PASSWORD": PASSWORD},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    with open_archive(archive) as reader:
        titles = {page["title"] for page in reader.pages() if page["status"]}
    assert titles == MEMBERS  # rendered on the workers, logged in
    login = json.loads(result.stdout)["login"]
    counts = requests.get(f"{site}/__counts?by=method", timeout=10).json()
    assert login["renewals"] >= 1 and counts[f"POST /login-site/{run}/login"] == 1 + login["renewals"]
    assert PASSWORD not in result.stdout + result.stderr


def test_a_storage_state_s_local_storage_reaches_the_workers(
    site: str, dask_cluster: Any, tmp_path: Path
) -> None:
    run = f"dask-app-{uuid.uuid4().hex[:8]}"
    token = requests.post(f"{site}/login-site/{run}/mint", timeout=10).json()["token"]
    state = tmp_path / "secrets" / "state.json"
    state.parent.mkdir()
    origin = {"origin": site, "localStorage": [{"name": "token", "value": token}]}
    state.write_text(json.dumps({"cookies": [], "origins": [origin]}), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    address = "dask://" + str(dask_cluster.scheduler.address).removeprefix("tcp://")
    result = run_cli(
        "--verbose",
        "crawl",
        f"{site}/login-site/{run}/app/",
        "-o",
        str(work / "app.nitpicker"),
        "--storage-state",
        str(state),
        "--executor",
        address,
        "--no-image",
        cwd=work,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    with open_archive(work / "app.nitpicker") as reader:
        titles = {page["title"] for page in reader.pages() if page["status"]}
    assert {"App", *(f"App {name.title()}" for name in APP_PAGES)} <= titles, titles
    assert token not in result.stdout + result.stderr
