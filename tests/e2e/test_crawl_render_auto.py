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


def _decisions(archive: Path, origin: str) -> dict[str, tuple[dict | None, str | None]]:
    with open_archive(archive) as reader:
        rows = reader.execute(
            "SELECT u.url, json_extract(ps.html_facts, '$.render'), ps.unrendered FROM commit_page cp "
            "JOIN page_state ps ON ps.id = cp.state_id JOIN url u ON u.id = cp.url_id "
            "WHERE cp.commit_id = ? AND u.url LIKE ? AND ps.content_type LIKE 'text/html%'",
            (reader.resolve(None), f"{origin}{A}/%"),
        )
    return {url.replace(origin + A, ""): (json.loads(d) if d else None, why) for url, d, why in rows}


@pytest.fixture
def auto(crawl, site):
    return crawl("--render", "auto", "--json", f"{site}{A}/", name="auto", shared=True)


def test_auto_renders_the_templates_whose_sample_differs(auto, site):
    found = _decisions(auto.archive, site)
    assert set(found) == set(EXPECTED)
    templates: dict[str | None, set[str]] = {}
    for path, (template, rendered, reason) in EXPECTED.items():
        decision, unrendered = found[path]
        assert decision is not None, path
        assert decision["mode"] == "auto" and decision["rendered"] is rendered, (path, decision)
        assert decision["reason"] == reason.format(A=site + A), (path, decision)
        # the page's record says it was read without a browser, and why, exactly when it was
        assert unrendered == (None if rendered else f"--render auto: {decision['reason']}"), path
        templates.setdefault(template, set()).add(decision["template"])
    # one key per template, told apart from the others; the empty page has none
    assert templates.pop(None) == {None}
    assert all(len(keys) == 1 for keys in templates.values()), templates
    assert len(set().union(*templates.values())) == len(templates)
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
