"""`crawl --render auto`: each template's rendered sample decides whether its pages are rendered (/auto-site/).

The mixed site has templates whose scripts change nothing (article: a script; list: none) and templates
whose scripts build links or change the head; one page has no body at all, one mislabels its charset. The
test asserts exactly which pages were rendered, the decision stored with each, and that the
JavaScript-dependence findings are those of `--render always`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _findings

from nitpicker_core.archive import open_archive

pytestmark = pytest.mark.browser

A = "/auto-site"
ARTICLE, LIST, BUILT, HEAD = "article", "list", "built", "head"
# page → (template, rendered, the decision's reason); the template is None for a page nothing could group
EXPECTED: dict[str, tuple[str | None, bool, str]] = {
    "/": ("home", True, "sample of its template: same"),
    "/article/1": (ARTICLE, True, "sample of its template: same"),
    "/article/2": (ARTICLE, False, "sample {A}/article/1 same; its 1 console error not looked for here"),
    "/article/3": (ARTICLE, False, "sample {A}/article/1 same; its 1 console error not looked for here"),
    "/latin": (
        ARTICLE,
        False,
        "sample {A}/article/1 same; its 1 console error not looked for here",
    ),  # Latin-1 bytes sent as UTF-8
    "/article/11": (
        ARTICLE,
        False,
        "sample {A}/article/1 same; its 1 console error not looked for here",
    ),  # found only by rendering /built/1
    "/article/12": (ARTICLE, False, "sample {A}/article/1 same; its 1 console error not looked for here"),
    "/list/1": (LIST, True, "sample of its template: same"),
    "/list/2": (LIST, False, "sample {A}/list/1 same"),
    "/built/1": (BUILT, True, "sample of its template: differs: links +1"),
    "/built/2": (BUILT, True, "sample {A}/built/1 differs: links +1"),
    "/head/title": (HEAD, True, "sample of its template: differs: title"),
    "/head/canonical": (HEAD, True, "sample {A}/head/title differs: title"),
    "/head/robots": (HEAD, True, "sample {A}/head/title differs: title"),
    "/empty": (None, True, "the HTML as sent could not be parsed"),
}
JS_CHECKS = ("js-links-rendered-only", "js-text-rendered-only", "js-head-changed", "js-noindex-mismatch")
JS_FINDINGS = {
    "js-links-rendered-only": {(f"{A}/built/1", f"{A}/article/11"), (f"{A}/built/2", f"{A}/article/12")},
    "js-text-rendered-only": set(),
    "js-head-changed": {
        (f"{A}/head/title", "title"),
        (f"{A}/head/canonical", "canonical"),
        (f"{A}/head/robots", "robots"),
    },
    "js-noindex-mismatch": {(f"{A}/head/robots", "noindex only after rendering")},
}


def _decisions(archive: Path, origin: str, root: str = A) -> dict[str, tuple[dict | None, str | None]]:
    with open_archive(archive) as reader:
        rows = reader.execute(
            "SELECT u.url, cp.render_decision, ps.unrendered FROM commit_page cp "
            "JOIN page_state ps ON ps.id = cp.state_id JOIN url u ON u.id = cp.url_id "
            "WHERE cp.commit_id = ? AND u.url LIKE ? AND ps.content_type LIKE 'text/html%'",
            (reader.resolve(None), f"{origin}{root}/%"),
        )
    return {url.replace(origin + root, ""): (json.loads(d) if d else None, why) for url, d, why in rows}


def _assert_expected(found: dict[str, tuple[dict | None, str | None]], origin: str, root: str = A) -> None:
    """Each page's stored decision is EXPECTED's, its template told apart from the others' (the empty page has
    none), and its record says it was read without a browser, and why, exactly when it was."""
    assert set(found) == set(EXPECTED)
    templates: dict[str | None, set[str]] = {}
    for path, (template, rendered, reason) in EXPECTED.items():
        decision, unrendered = found[path]
        assert decision is not None, path
        assert decision["mode"] == "auto" and decision["rendered"] is rendered, (path, decision)
        assert decision["reason"] == reason.format(A=origin + root), (path, decision)
        assert unrendered == (None if rendered else f"--render auto: {decision['reason']}"), path
        templates.setdefault(template, set()).add(decision["template"])
    assert templates.pop(None) == {None}
    assert all(len(keys) == 1 for keys in templates.values()), templates
    assert len(set().union(*templates.values())) == len(templates)


@pytest.fixture
def auto(crawl, site):
    return crawl("--render", "auto", "--json", f"{site}{A}/", name="auto", shared=True)


def test_auto_renders_the_templates_whose_sample_differs(auto, site):
    _assert_expected(_decisions(auto.archive, site), site)
    result = json.loads(auto.result.stdout)
    rendered = sum(1 for _, r, _ in EXPECTED.values() if r)
    assert (result["rendered"], result["parsed"]) == (rendered, len(EXPECTED) - rendered)
    assert result["auto"] == {"templates": 5, "samples": 5, "rendered_templates": 2, "degraded": ""}
    assert (
        f"({rendered} rendered, {len(EXPECTED) - rendered} read without a browser (auto: 5 templates, 2 rendered)"
        in (auto.result.stderr)
    )
    # the page read from Latin-1 bytes labelled UTF-8 was stored as a browser decodes it
    assert auto.page(f"{site}{A}/latin")["title"] == "Caf\ufffd"


def test_auto_finds_what_always_finds(auto, crawl, site):
    always = crawl(f"{site}{A}/", name="always", shared=True)
    assert set(always.pages) == set(auto.pages)
    got, expected = _findings(auto.archive, site), _findings(always.archive, site)
    for check in JS_CHECKS:
        assert got[check] == expected[check] == JS_FINDINGS[check], check
    # what auto does not look for on a page read as sent: the console error harmless.js logs
    noisy = {"/article/1", "/article/2", "/article/3", "/article/11", "/article/12", "/latin"}
    logged = {(f"{A}{path}", "harmless but noisy") for path in noisy}
    assert expected["console-error"] == logged
    assert got["console-error"] == {(f"{A}/article/1", "harmless but noisy")}  # the sample's
    assert {c: f for c, f in got.items() if c != "console-error"} == {
        c: f for c, f in expected.items() if c != "console-error"
    }


def test_the_pages_query_and_the_page_detail_show_the_decision(auto, site):
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.query import run_query
    from nitpicker_core.registries import query_registry
    from nitpicker_viewer.app import create_app

    pm = make_plugin_manager()
    with open_archive(auto.archive) as reader:
        rows = run_query(query_registry(pm), reader, "pages", {"url": f"{site}{A}/", "limit": 100})["items"]
    column = {row["url"].replace(site + A, ""): row["render_decision"] for row in rows}
    for path, (_, rendered, reason) in EXPECTED.items():
        said = "rendered: " if rendered else "read as sent: "
        assert column[path] == said + reason.format(A=site + A), path
    app = create_app(auto.archive, pm)
    try:
        client = app.test_client()
        sent = client.get("/page", query_string={"url": f"{site}{A}/list/2"}).get_data(as_text=True)
        sample = client.get("/page", query_string={"url": f"{site}{A}/built/1"}).get_data(as_text=True)
        ja = client.get(
            "/page", query_string={"url": f"{site}{A}/list/2"}, headers={"Accept-Language": "ja"}
        ).get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()
    assert "<strong>Read from the HTML as sent, without a browser</strong> (--render auto, template" in sent
    assert f": sample {site}{A}/list/1 same</td>" in sent
    assert (
        "<strong>Rendered in the browser</strong>" in sample
        and "sample of its template: differs: links +1" in sample
    )
    assert "<strong>送られた HTML からブラウザーなしで読み取り</strong>" in ja


def test_the_page_list_sheet_says_whether_each_page_was_rendered_and_why(auto, site, tmp_path):
    """The report's Page List (xlsx) has each page's decision: Rendered (a boolean) and its reason."""
    from openpyxl import load_workbook
    from support import run_cli

    done = run_cli("report", str(auto.archive), "--xlsx", "out.xlsx", "--only", "Page List", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sheet = load_workbook(tmp_path / "out.xlsx")["Page List"]
    header, *rows = ([cell.value for cell in row] for row in sheet.iter_rows())
    found = {}
    for row in rows:
        values = dict(zip(header, row, strict=True))
        url = values["URL"].split('"')[1]  # =HYPERLINK("url","url")
        if url.startswith(site + A + "/"):
            found[url.replace(site + A, "")] = (values["Rendered"], values["Rendering Reason"])
    assert found == {
        path: (rendered, "render auto: " + reason.format(A=site + A))
        for path, (_, rendered, reason) in EXPECTED.items()
    }


def test_a_template_whose_sample_fails_to_render_is_rendered(crawl, site):
    """One page of the template redirects the browser to itself for good: whichever page is the sample, its
    failure is recorded, the other page is rendered and says why, and the crawl goes on."""
    import uuid

    token = uuid.uuid4().hex
    root = f"{site}{A}/failing/{token}/"
    done = crawl("--render", "auto", "--json", root, name="failing", ok=(1,))
    [error] = done.errors
    assert (error["kind"], error["phase"]) == ("redirect-chain-too-long", "render")
    failed = error["url"]
    [other] = {f"{root}page/1", f"{root}page/2"} - {failed}
    decisions = {path: d for path, (d, _) in _decisions(done.archive, site).items()}
    assert decisions[f"/failing/{token}/page/{other[-1]}"]["reason"] == (
        f"sample {failed} failed to render (redirect-chain-too-long)"
    )
    assert decisions[f"/failing/{token}/page/{other[-1]}"]["rendered"] is True
    assert done.page(other)["status"] == 200 and done.page(other)["title"] == f"Failing {other[-1]}"
    assert json.loads(done.result.stdout)["auto"]["rendered_templates"] == 1
    # the failure is stored with the sample's decision and what it settled (a resumed crawl reads it back)
    with open_archive(done.archive) as reader:
        [(fact,)] = reader.execute(
            "SELECT cp.render_decision FROM commit_page cp JOIN url u ON u.id = cp.url_id "
            "WHERE cp.commit_id = ? AND u.url = ?",
            (reader.resolve(None), failed),
        )
    assert json.loads(fact) == {
        "mode": "auto",
        "template": decisions[f"/failing/{token}/page/{other[-1]}"]["template"],
        "rendered": True,
        "reason": "sample of its template: failed to render (redirect-chain-too-long)",
        "verdict": {"render": True, "reason": f"sample {failed} failed to render (redirect-chain-too-long)"},
    }


def test_a_resumed_crawl_samples_no_template_again(site, tmp_path):
    """Stopped once each template's sample is stored (the site holds back every page that follows one), then
    resumed: the templates keep the verdicts their samples settled, no page is a sample again or rendered
    twice, and every decision is the uninterrupted crawl's."""
    import signal
    import sqlite3
    import urllib.request
    import uuid

    from support import RunningCli, run_cli, wait_until

    root = f"{A}/run/{uuid.uuid4().hex}"
    archive = tmp_path / "stopped.nitpicker"
    db = tmp_path / "stopped.nitpicker.stub" / "archive.db"

    def stored() -> set[str]:
        if not db.exists():
            return set()
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
                rows = conn.execute(
                    "SELECT u.url FROM commit_page cp JOIN url u ON u.id = cp.url_id "
                    "WHERE cp.render_decision IS NOT NULL"
                ).fetchall()
        except sqlite3.Error:  # created but not initialised yet
            return set()
        return {url.replace(site + root, "") for (url,) in rows}

    running = RunningCli(
        "crawl", "-o", str(archive), "--render", "auto", "--parallels", "2", f"{site}{root}/", cwd=tmp_path
    )
    samples = {"/", "/article/1", "/list/1", "/built/1", "/head/title", "/empty"}
    wait_until(
        lambda: stored() >= samples or running.proc.poll() is not None, "each template's sample stored", 300
    )
    assert stored() == samples, running.stderr  # every other page waits at the site's gate
    running.signal(signal.SIGTERM)
    assert running.wait(timeout=120) == 130, running.stderr
    with urllib.request.urlopen(urllib.request.Request(f"{site}{root}/open", method="POST"), timeout=30):
        pass
    resumed = run_cli("crawl", "--resume", str(archive), "--json", cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    _assert_expected(_decisions(archive, site, root), site, root)
    result = json.loads(resumed.stdout)
    rendered = {path for path, (_, r, _) in EXPECTED.items() if r}
    assert (result["rendered"], result["parsed"]) == (len(rendered), len(EXPECTED) - len(rendered))
    # the commit's templates, as the uninterrupted crawl counts them
    assert result["auto"] == {"templates": 5, "samples": 5, "rendered_templates": 2, "degraded": ""}
    with urllib.request.urlopen(f"{site}{root}/navigations", timeout=30) as answer:
        navigated = json.load(answer)
    assert navigated == dict.fromkeys(rendered, 1)  # each rendered page once, no second sample


def test_a_page_read_as_sent_still_gets_the_browser_analyzer(auto, site):
    """axe runs in a browser over the stored HTML: an article read as sent has its sample's defect."""
    from support import run_cli

    done = run_cli("analyze", str(auto.archive), "--plugin", "axe", cwd=auto.archive.parent, timeout=600)
    assert done.returncode == 0, done.stderr
    with open_archive(auto.archive) as reader:
        found = {(v["url"].replace(site + A, ""), v["rule"]) for v in reader.violations(analyzer="axe")}
    unlabelled = {path for path, rule in found if rule == "label"}
    assert unlabelled == {"/article/1", "/article/2", "/article/3", "/article/11", "/article/12", "/latin"}
    assert not EXPECTED["/article/2"][1] and EXPECTED["/article/1"][1]  # read as sent, and rendered


def test_render_auto_from_the_config_file_and_in_pipeline(crawl, site, tmp_path):
    """`[crawl] render = "auto"` sets it for crawl; pipeline takes --render auto and records it."""
    from support import run_cli

    (tmp_path / "nitpicker.toml").write_text('[crawl]\nrender = "auto"\n', encoding="utf-8")
    c = crawl(f"{site}{A}/list/1", "--scope", f"{site}{A}/list/", "--no-image", "--json")
    result = json.loads(c.result.stdout)
    assert (result["rendered"], result["parsed"]) == (1, 1)  # the sample, and the page that followed it
    assert result["auto"] == {"templates": 1, "samples": 1, "rendered_templates": 0, "degraded": ""}
    assert (
        c.page(f"{site}{A}/list/2")["extra"]["unrendered"] == f"--render auto: sample {site}{A}/list/1 same"
    )
    (tmp_path / "nitpicker.toml").unlink()
    archive = tmp_path / "pipeline.nitpicker"
    done = run_cli(
        "pipeline",
        f"{site}{A}/list/1",
        "--scope",
        f"{site}{A}/list/",
        "--render",
        "auto",
        "--no-analyze",
        "-o",
        str(archive),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    crawled = json.loads(done.stdout)["crawl"]
    assert (crawled["rendered"], crawled["parsed"], crawled["auto"]["samples"]) == (1, 1, 1)
    with open_archive(archive) as reader:
        commit = reader.commits()[0]
    assert (commit["options"]["render"], commit["stats"]["parsed"], commit["stats"]["auto"]["templates"]) == (
        "auto",
        1,
        1,
    )


def test_bad_input_ends_as_a_recorded_state_with_its_reason(crawl, site):
    """/auto-site/bad/: a page too big to read a template from, HTML no parser makes a document of, bytes
    that are no text and a mislabelled charset each end recorded, with the reason, and the crawl completes."""
    from test_server.routes.auto_bad import B

    done = crawl("--render", "auto", "--json", f"{site}{B}/", name="bad")
    decisions = _decisions(done.archive, site, B)
    same = f"sample {site}{B}/plain/1 same"
    assert {
        path: (d["rendered"], d["template"] is None, d["reason"]) for path, (d, _) in decisions.items() if d
    } == {
        "/": (True, False, "sample of its template: same"),
        "/plain/1": (True, False, "sample of its template: same"),
        "/plain/2": (False, False, same),
        "/mojibake": (False, False, same),
        "/huge": (True, True, "the body is over the 10485760-byte limit"),
        "/comment": (True, True, "the HTML as sent could not be parsed"),
    }
    # bytes that are no text are no page: recorded from the answer, without a browser
    assert decisions["/binary"] == (None, "a binary body served as text/html: not read as a page")
    assert done.errors == []
    assert {url.replace(site + B, ""): page["status"] for url, page in done.pages.items() if B in url} == {
        path: 200 for path in ("/", "/plain/1", "/plain/2", "/mojibake", "/huge", "/comment", "/binary")
    }
    # read as sent, the page labelled windows-1252 shows what a browser shows: the header wins over the meta
    assert done.page(f"{site}{B}/mojibake")["title"] == "Caf\u00c3\u00a9"
    assert done.page(f"{site}{B}/huge")["title"] == "Huge"  # rendered whole
    result = json.loads(done.result.stdout)
    assert result["auto"] == {"templates": 2, "samples": 2, "rendered_templates": 0, "degraded": ""}


def test_a_site_of_pages_that_share_no_template_degrades_to_rendering_bounded(crawl, site):
    """/auto-site/varied/: every page a template of its own. Once there are more than 50 templates, and more
    than half as many as pages, every page is rendered without a sample: 50 samples, each page rendered once."""
    from nitpicker_core.crawler.auto import MIN_GROUPS
    from test_server.routes.auto_bad import VARIED, V

    done = crawl("--render", "auto", "--json", f"{site}{V}/", name="varied")
    decisions = [d for d, _ in _decisions(done.archive, site, V).values()]
    assert len(decisions) == VARIED + 1 and all(d is not None and d["rendered"] for d in decisions)
    degraded = (
        f"degraded: too many templates ({MIN_GROUPS + 1} in {MIN_GROUPS + 1} pages), "
        "every page rendered from here on"
    )
    reasons = [d["reason"] for d in decisions if d is not None]
    assert reasons.count("sample of its template: same") == MIN_GROUPS
    assert reasons.count(degraded) == VARIED + 1 - MIN_GROUPS
    result = json.loads(done.result.stdout)
    assert (result["rendered"], result["parsed"]) == (VARIED + 1, 0)
    assert result["auto"] == {
        "templates": MIN_GROUPS,
        "samples": MIN_GROUPS,
        "rendered_templates": 0,
        "degraded": degraded,
    }
    assert f"(auto: {MIN_GROUPS} templates, 0 rendered; {degraded})" in done.result.stderr


def test_the_browser_starts_while_the_first_page_is_still_coming(site, tmp_path):
    """The first page is its template's sample, and nothing else is known until it is rendered: Chromium starts
    with the crawl, not once that page has come. The site holds the first page back until the browser is up."""
    import urllib.request
    import uuid

    from support import RunningCli, server_hits, wait_until

    from nitpicker_core.crawler.browser import MARKER_SWITCH, _proc_table

    run = uuid.uuid4().hex
    gate, first = f"/progress-gate/{run}", f"/progress-gate/{run}/alpha"  # alpha answers once opened
    running = RunningCli(
        "crawl", "-o", str(tmp_path / "early.nitpicker"), "--render", "auto", "--no-image", "--json",
        "--no-fetch-external", f"{site}{first}", cwd=tmp_path,
    )  # fmt: skip

    def browser_up() -> bool:
        table = _proc_table()
        for pid, (_, cmdline) in table.items():
            if MARKER_SWITCH not in cmdline:
                continue
            seen: set[int] = set()
            while pid in table and pid not in seen:  # up its ancestors: a Chromium of this crawl's?
                if pid == running.proc.pid:
                    return True
                seen.add(pid)
                pid = table[pid][0]
        return False

    try:
        wait_until(
            lambda: server_hits(site, first) >= 1 or running.proc.poll() is not None, "the first page asked"
        )
        wait_until(lambda: browser_up() or running.proc.poll() is not None, "a Chromium of the crawl's", 120)
        assert running.proc.poll() is None, (
            f"no Chromium while the first page was held back: {running.stderr}"
        )
    finally:
        with urllib.request.urlopen(
            urllib.request.Request(f"{site}{gate}/open?n=5", method="POST"), timeout=30
        ):
            pass
    assert running.wait(timeout=300) == 0, running.stderr
    assert running.proc.stdout is not None
    result = json.loads(running.proc.stdout.read())
    assert (result["rendered"], result["auto"]["samples"]) == (1, 1)  # alpha, its sample, in that browser


def _commit_decisions(archive: Path, commit: int, url: str) -> dict[str, object]:
    """``url``'s decision in ``commit`` as each reader shows it: the pages query's column, the page detail,
    the report rows and what a resumed crawl would take over (the writer's ``render_decisions``)."""
    from nitpicker_core import read
    from nitpicker_core.archive.writer import ArchiveWriter
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.query import run_query
    from nitpicker_core.registries import query_registry

    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        [row] = run_query(registry, reader, "pages", {"url": url, "limit": 10}, commit=commit)["items"]
        detail = run_query(registry, reader, "page-detail", {"url": url}, commit=commit)["render"]
        [report] = [r for r in read.report_pages(reader, commit)["items"] if r["url"] == url]
    with ArchiveWriter.open(archive) as writer:
        resumed = dict(writer.render_decisions(commit)).get(url)
    return {
        "pages": row["render_decision"],
        "detail": None if detail is None else (detail["rendered"], detail["reason"]),
        "report": (report["render_rendered"], report["render_reason"]),
        "resume": None if resumed is None else (resumed["rendered"], resumed["reason"]),
    }


def _shown(rendered: bool, reason: str) -> dict[str, object]:
    return {
        "pages": ("rendered: " if rendered else "read as sent: ") + reason,
        "detail": (rendered, reason),
        "report": (int(rendered), reason),
        "resume": (rendered, reason),
    }


NOT_AUTO = {"pages": None, "detail": None, "report": (None, None), "resume": None}


@pytest.mark.parametrize("modes", [("auto", "always"), ("always", "auto")])
def test_each_commit_shows_the_decision_it_made_itself(site, tmp_path, modes):
    """A page's state is shared by the commits that found it unchanged, but the decision is the crawl's: a
    second crawl into the archive with --render always shows none for the sample the auto crawl before it
    rendered (the same state), and an auto crawl after a --render always one shows its sample's decision."""
    from support import run_cli

    first, second = f"{site}{A}/list/1", f"{site}{A}/list/2"
    scope = ("--scope", f"{site}{A}/list/", "--no-image", "--no-fetch-external", "--parallels", "2")
    archive = tmp_path / "twice.nitpicker"
    for mode in modes:
        done = run_cli("crawl", "-o", str(archive), "--render", mode, *scope, first, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    for commit, mode in enumerate(modes, 1):
        found = {url: _commit_decisions(archive, commit, url) for url in (first, second)}
        if mode == "auto":
            expected = {
                first: _shown(True, "sample of its template: same"),
                second: _shown(False, f"sample {first} same"),
            }
        else:
            expected = {first: NOT_AUTO, second: NOT_AUTO}
        assert found == expected, (commit, mode)
