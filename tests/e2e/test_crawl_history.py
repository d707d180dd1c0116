"""End-to-end: --update makes a new commit, --append/--inventory/--retry-failed continue the newest one."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from support import run_cli

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def about_crawled(site, tmp_path_factory) -> Path:
    """One complete single-page crawl of /about for the module; each test gets its own copy (``about``)."""
    workdir = tmp_path_factory.mktemp("about")
    archive = workdir / "site.nitpicker"
    result = run_cli(
        "crawl",
        "-o",
        str(archive),
        "--parallels",
        "2",
        f"{site}/about",
        "--single",
        "--no-image",
        cwd=workdir,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return archive


@pytest.fixture
def about(about_crawled, tmp_path) -> Path:
    """A copy of the module's /about crawl as ``tmp_path/site.nitpicker``, the test's to change."""
    return Path(shutil.copy(about_crawled, tmp_path / "site.nitpicker"))


def _state(archive):
    with open_archive(archive) as reader:
        return reader.commits(), {p["url"]: p for p in reader.pages()}, reader


def test_update_makes_a_new_commit_sharing_unchanged_pages(crawl, site, cli, tmp_path):
    c = crawl(f"{site}/recursive/", "--no-image", shared=True)
    size = c.archive.stat().st_size
    result = cli("crawl", "--update", str(c.archive), "--no-image", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    with open_archive(c.archive) as reader:
        commits = reader.commits()
        assert [(x["id"], x["parent_id"], x["status"]) for x in commits] == [
            (2, 1, "complete"),
            (1, None, "complete"),
        ]
        assert reader.head() == 2
        changes = reader.diff(1, 2)
        hashes = reader.row_hashes(2)
        assert hashes == reader.row_hashes(1)
    assert changes["added"] == [] and changes["removed"] == [] and changes["modified"] == []
    # unchanged pages are shared, not copied; what grows is the commit itself and its stored findings, which
    # are repeated in every commit for now (about 10% on a site this small)
    assert c.archive.stat().st_size < size * 1.15


def test_append_widens_scope_in_the_same_commit(crawl, site, cli, tmp_path):
    c = crawl(f"{site}/scope/blog/", "--no-image", shared=True)
    assert c.page(f"{site}/scope/docs/")["extra"]["outside_scope"]  # the host's own: internal, checked only
    result = cli(
        "crawl", "--append", str(c.archive), f"{site}/scope/docs/", "--no-image", cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr
    with open_archive(c.archive) as reader:
        assert [(x["id"], x["status"]) for x in reader.commits()] == [(1, "complete")]
        docs = reader.page(f"{site}/scope/docs/")
        api = reader.page(f"{site}/scope/docs/api")
        roots = reader.info()["options"]["roots"]
    assert docs["is_target"] and not docs["is_external"]  # re-promoted: now in scope, rendered
    assert "outside_scope" not in docs["extra"]
    assert api["title"] == "API Docs" and roots == [f"{site}/scope/blog/", f"{site}/scope/docs/"]


def test_inventory_seeds_urls_and_logs_the_run(about, site, cli, tmp_path):
    listing = tmp_path / "inventory.txt"
    listing.write_text(f"# pages the client listed\n{site}/recursive/page-c\n{site}/about\n")
    result = cli(
        "crawl", "--inventory", str(listing), "-o", str(about), "--no-image", cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr
    with open_archive(about) as reader:
        runs = reader.inventory_runs()
        page_c = reader.page(f"{site}/recursive/page-c")
    assert page_c["title"] == "Page C" and page_c["is_target"]
    assert len(runs) == 1 and runs[0]["sha256"] == hashlib.sha256(listing.read_bytes()).hexdigest()
    assert json.loads(runs[0]["counts"]) if isinstance(runs[0]["counts"], str) else runs[0]["counts"]
    assert str(listing) not in json.dumps(runs) and "inventory.txt" not in json.dumps(runs)


def test_failed_inventory_leaves_the_archive_exactly_as_it_was(about, cli, tmp_path):
    before = about.read_bytes()
    listing = tmp_path / "bad.txt"
    listing.write_text("not a url\n")
    result = cli("crawl", "--inventory", str(listing), "-o", str(about), cwd=tmp_path)
    assert (
        result.returncode == 1
        and result.stderr.strip() == "nitpicker: error: not an http(s) URL: 'not a url'"
    )
    assert about.read_bytes() == before and not (tmp_path / "site.nitpicker.stub").exists()


def test_retry_failed_skips_permanent_failures(crawl, site, cli, tmp_path):
    c = crawl(f"{site}/broken-external/", "--no-image", "--retry", "1", ok=(2,))
    assert [e["kind"] for e in c.errors] == ["connection-refused"]
    result = cli("crawl", "--retry-failed", str(c.archive), "--no-image", cwd=tmp_path, timeout=300)
    # refused is permanent: nothing retried; the commit still holds that failure, so the exit code (which
    # describes the whole commit) stays 2, as for an uninterrupted crawl of the same page
    assert result.returncode == 2, result.stderr
    with open_archive(c.archive) as reader:
        assert len(reader.crawl_errors()) == 1 and [x["id"] for x in reader.commits()] == [1]


def test_resume_of_a_complete_crawl_is_refused(about, cli, tmp_path):
    before = about.read_bytes()
    result = cli("crawl", "--resume", str(about), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == "nitpicker: error: site.nitpicker has no interrupted crawl to resume"
    assert about.read_bytes() == before and not (tmp_path / "site.nitpicker.stub").exists()


def test_a_host_whose_dns_failed_is_not_asked_again_by_append(crawl, site, cli, tmp_path):
    # the DNS burn list lives in the archive, not in one run: the stored dns failure burns the host for
    # --append (and --resume, --retry-failed), which does not look it up again and says so (issue 33)
    c = crawl(f"{site}/dns-burn/first/", "--no-image", ok=(2,))
    assert [(e["url"], e["kind"]) for e in c.errors] == [("http://gone.dns-burn.invalid/one", "dns")]
    assert "earlier" not in c.errors[0]["message"]  # really looked up
    result = cli(
        "crawl",
        "--append",
        str(c.archive),
        f"{site}/dns-burn/second/",
        "--no-image",
        "--json",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    with open_archive(c.archive) as reader:
        errors = {e["url"]: (e["kind"], e["message"]) for e in reader.crawl_errors()}
    assert errors["http://gone.dns-burn.invalid/two"] == (
        "dns",
        "DNS lookup of gone.dns-burn.invalid failed in an earlier run: not asked again",
    )
    line = "1 URL(s) not asked: the DNS lookup of their host failed in an earlier run (gone.dns-burn.invalid)"
    assert line in result.stderr
    assert json.loads(result.stdout)["errors"]["dns_failed_before"] == {"gone.dns-burn.invalid": 1}
