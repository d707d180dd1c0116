"""End-to-end: answers the browser will not render are recorded as the server sent them; long chains; bad ports."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

ROOT = "/hostile-status/"


@pytest.fixture(scope="module")
def statuses(site, tmp_path_factory):
    """One crawl of the hostile-status pages, shared by the tests that only read it."""
    from support import run_cli

    from tests.e2e.conftest import Crawled

    work = tmp_path_factory.mktemp("statuses")
    archive = work / "statuses.nitpicker"
    result = run_cli(
        "crawl", "-o", str(archive), "--parallels", "2", "--no-image", f"{site}{ROOT}", cwd=work, timeout=300
    )
    return Crawled(result, archive)


def test_unrenderable_answers_are_not_crawl_failures(statuses):
    # 401/403/429 are blocked, 204/304/attachments are answers: none of them is a hard failure (exit 0)
    assert statuses.result.returncode == 0, statuses.result.stderr
    assert statuses.errors == []


@pytest.mark.parametrize(
    ("path", "status", "text"),
    [
        ("challenge", 401, "UNAUTHORIZED"),
        ("forbidden", 403, "FORBIDDEN"),
        ("too-many", 429, "TOO MANY REQUESTS"),
    ],
)
def test_blocked_statuses_are_recorded_with_their_status(statuses, site, path, status, text):
    page = statuses.page(f"{site}{ROOT}{path}")
    assert (page["status"], page["status_text"]) == (status, text)
    assert page["extra"].get("blocked") is True
    assert "error_kind" not in page["extra"]
    assert page["content_type"] == "text/html"


def test_auth_challenge_keeps_its_header(statuses, site):
    page = statuses.page(f"{site}{ROOT}challenge")
    assert page["headers"]["www-authenticate"] == 'Basic realm="hostile"'
    assert page["title"] == "Login Required"  # from the body the server sent with its challenge
    assert page["is_target"] and not page["is_external"]


@pytest.mark.parametrize(("path", "status"), [("no-content", 204), ("not-modified", 304)])
def test_bodyless_statuses_are_recorded(statuses, site, path, status):
    page = statuses.page(f"{site}{ROOT}{path}")
    assert page["status"] == status
    assert "error_kind" not in page["extra"] and not page["extra"].get("blocked")


def test_attachment_keeps_status_type_and_disposition(statuses, site):
    page = statuses.page(f"{site}{ROOT}attachment")
    assert (page["status"], page["content_type"]) == (200, "text/html")
    assert page["headers"]["content-disposition"] == 'attachment; filename="report.html"'
    assert "error_kind" not in page["extra"]


def test_a_normal_page_beside_them_is_rendered(statuses, site):
    page = statuses.page(f"{site}{ROOT}normal")
    assert (page["status"], page["title"]) == (200, "Hostile Normal")
    assert not page["extra"].get("blocked")


def test_wrong_credentials_record_the_servers_401(crawl, site):
    # The preflight sends the credentials and is told 401; Chromium gives up with a net error instead of a status
    host = site.removeprefix("http://")
    c = crawl(f"http://user:wrong@{host}{ROOT}challenge", "--no-image")
    page = c.page(f"{site}{ROOT}challenge")
    assert (page["status"], page["extra"].get("blocked")) == (401, True)
    assert c.errors == []


def test_a_bodyless_root_is_recorded_not_failed(crawl, site):
    c = crawl(f"{site}{ROOT}no-content", "--no-image")
    assert c.page(f"{site}{ROOT}no-content")["status"] == 204
    assert c.errors == []


def test_links_with_bad_ports_are_invalid_links_never_requested(crawl, site):
    from test_server.routes.hostile_status import BAD_PORTS

    c = crawl(f"{site}{ROOT}bad-ports/", "--no-image", ok=(2,), shared=True)  # only links to no site failed
    targets = [f"http://localhost:{port}/x" for port in BAD_PORTS]
    hrefs = [a["href"] for a in c.anchors[f"{site}{ROOT}bad-ports/"]]
    assert hrefs == [*targets, f"{site}{ROOT}normal"]  # kept as written
    assert {e["url"]: (e["kind"], e["phase"]) for e in c.errors} == {
        t: ("invalid-url", "link") for t in targets
    }
    for target in targets:
        page = c.page(target)
        assert page["extra"] == {"error_kind": "invalid-url", "permanent": True} and page["status"] is None
    # dropping the port would have sent these to port 80, where nothing listens here: a refused error
    assert "http://localhost/x" not in c.pages


def test_an_archive_holding_invalid_links_can_be_continued(crawl, site, cli, tmp_path):
    # the archive's URLs seed the queue of --append/--resume: an invalid one must not break it
    from nitpicker_core.archive import open_archive

    c = crawl(f"{site}{ROOT}bad-ports/", "--no-image", ok=(2,), shared=True)
    result = cli(
        "crawl", "--append", str(c.archive), f"{site}{ROOT}normal", "--no-image", cwd=tmp_path, timeout=300
    )
    assert result.returncode in (0, 2), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    with open_archive(c.archive) as reader:
        kinds = [e["kind"] for e in reader.crawl_errors()]
        assert reader.page(f"{site}{ROOT}normal")["title"] == "Hostile Normal"
    assert kinds == ["invalid-url"] * 4  # recorded once, not asked again


def test_a_redirect_to_a_bad_port_is_not_followed(crawl, site):
    c = crawl(f"{site}{ROOT}bad-ports/redirect", "--no-image", ok=(1,))
    assert [(e["url"], e["kind"]) for e in c.errors] == [(f"{site}{ROOT}bad-ports/redirect", "invalid-url")]
    assert "invalid port '99999'" in c.errors[0]["message"]
    assert "http://localhost/x" not in c.pages


def test_thirty_hops_are_a_long_chain_not_a_loop(crawl, site):
    c = crawl(f"{site}{ROOT}hops/", "--no-image", ok=(1,), shared=True)
    kinds = {e["url"]: e["kind"] for e in c.errors}
    assert kinds == {
        f"{site}{ROOT}hops/chain/30": "redirect-chain-too-long",
        f"{site}{ROOT}hops/loop-a": "redirect-loop",
    }
    long_chain = c.page(f"{site}{ROOT}hops/chain/30")
    assert long_chain["extra"] == {"error_kind": "redirect-chain-too-long", "permanent": False}
    assert c.page(f"{site}{ROOT}hops/chain/0")["title"] == "End Of The Chain"  # three hops reach it


def test_retry_failed_retries_a_long_chain_but_not_a_loop(crawl, site, tmp_path):
    from support import run_cli

    from nitpicker_core.archive import open_archive

    first = crawl(f"{site}{ROOT}hops/", "--no-image", ok=(1,), shared=True)
    again = run_cli("crawl", "--retry-failed", str(first.archive), "--no-image", cwd=tmp_path, timeout=300)
    assert again.returncode == 1, again.stderr
    with open_archive(first.archive) as reader:
        retried = [e["url"] for e in reader.crawl_errors()]
    # the long chain failed again in the retry run (a second error row); the loop was not asked again
    assert retried.count(f"{site}{ROOT}hops/chain/30") == 2
    assert retried.count(f"{site}{ROOT}hops/loop-a") == 1


@pytest.mark.parametrize("port", ["99999", "65536", "-1", "abc"])
def test_a_root_with_an_invalid_port_is_refused_in_one_line(cli, tmp_path, port):
    result = cli("crawl", f"http://user:secret@localhost:{port}/", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"nitpicker: error: not a valid URL: 'http://localhost:{port}/': "
        f"invalid port '{port}' (a port is a number from 0 to 65535)"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_listed_url_with_an_invalid_port_is_refused(cli, tmp_path, site):
    result = cli("crawl", "--list", f"{site}/about,http://localhost:99999/x", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("nitpicker: error: not a valid URL: 'http://localhost:99999/x'")
    assert list(tmp_path.iterdir()) == []


def test_blocked_answers_are_an_outcome_of_their_own_in_the_pages_and_the_summary(statuses, site):
    import json

    from support import run_cli

    found = run_cli("query", str(statuses.archive), "pages", "--outcome", "blocked", "--every-type")
    assert found.returncode == 0, found.stderr
    rows = json.loads(found.stdout)["items"]
    assert {(r["url"], r["outcome"]) for r in rows} == {
        (f"{site}{ROOT}{path}", "blocked") for path in ("challenge", "forbidden", "too-many")
    }
    answered = run_cli("query", str(statuses.archive), "pages", "--outcome", "answered", "--every-type")
    assert f"{site}{ROOT}forbidden" not in {r["url"] for r in json.loads(answered.stdout)["items"]}
    summary = json.loads(run_cli("query", str(statuses.archive), "summary").stdout)
    totals = summary["totals"]
    assert totals["blocked"] == 3 and totals["internal"]["blocked"] == 3
    assert {(r["status"], r["count"]) for r in totals["blocked_by_status"]} == {(401, 1), (403, 1), (429, 1)}
    assert totals["4xx"] >= 3  # still counted by their status class: they answered
    assert (
        "Blocked: 3 internal (1 × 401, 1 × 403, 1 × 429)" in statuses.result.stderr + statuses.result.stdout
    )


def test_the_report_counts_blocked_answers_apart_on_the_cover_and_the_summary(statuses, site, tmp_path):
    import json

    from openpyxl import load_workbook
    from support import run_cli

    result = run_cli("report", str(statuses.archive), "--xlsx", "out.xlsx", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    book = load_workbook(tmp_path / "out.xlsx")
    cover = {(r[0].value, r[1].value): r[2] for r in book["Cover"].iter_rows(min_row=2)}
    blocked = cover[("Totals", "Blocked")]
    assert blocked.value == 3
    assert blocked.comment.text == (
        "1 × 401, 1 × 403, 1 × 429 (3 internal): the server refused the crawler, not a broken page"
    )
    summary = {(r[0], r[1]): r[2:] for r in book["Summary"].iter_rows(min_row=2, values_only=True)}
    total = json.loads(run_cli("query", str(statuses.archive), "summary").stdout)["status"]["total"]
    assert summary[("Status", "blocked")] == (3, round(3 / total, 4))
    assert {item: v[0] for (section, item), v in summary.items() if section == "Blocked by status"} == {
        "401": 1,
        "403": 1,
        "429": 1,
    }
    appendix = {(r[0], r[1]): r[2] for r in book["Appendix"].iter_rows(min_row=2, values_only=True)}
    assert appendix[("What the numbers mean", "Blocked")].startswith("URLs whose server refused the crawler")
