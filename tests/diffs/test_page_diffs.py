"""Diffs that explain: what changed in each page between commits, by query and by `nitpicker diff`."""

from __future__ import annotations

import hashlib
import json

import pytest
from archives import SITE, build_archive, page_html

from nitpicker_core import Anchor, Image, JsonLd, ScrapeResult, Tag, UsageError
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

HOME, ABOUT, NEWS = SITE + "/", SITE + "/about", SITE + "/news"
DENY = {"x-frame-options": "DENY"}


def home(
    title: str = "Home",
    links: tuple[str, ...] = ("/about", "/news"),
    *,
    headers=None,
    images=(),
    resources=(),
    jsonld=(),
    tags=(),
) -> ScrapeResult:
    return ScrapeResult(
        url=HOME,
        status=200,
        content_type="text/html",
        metadata={"title": title},
        html=page_html(title, "Welcome.", list(links)),
        headers=dict(headers or {"content-type": "text/html"}),
        anchors=[Anchor(SITE + href, href) for href in links],
        images=list(images),
        resources=list(resources),
        jsonld=list(jsonld),
        tags=list(tags),
    )


def leaf(url: str, title: str) -> ScrapeResult:
    return ScrapeResult(
        url=url,
        status=200,
        content_type="text/html",
        metadata={"title": title},
        html=page_html(title, "Text.", []),
        anchors=[],
    )


@pytest.fixture(scope="module")
def registry():
    return query_registry(make_plugin_manager())


@pytest.fixture(scope="module")
def generations(tmp_path_factory):
    """Four commits into one archive: 1 → 2 the home page changes in every way, 3 does not crawl /news and
    changes only the order of the home page's links and images, 4 crawls /news (new title) but not home."""
    path = tmp_path_factory.mktemp("gen") / "site.nitpicker"
    logo, hero = Image(SITE + "/logo.png", alt="Logo"), Image(SITE + "/hero.jpg", alt="")
    website = JsonLd('{"@type": "WebSite"}', parsed={"@type": "WebSite"}, types=["WebSite"])
    org = JsonLd('{"@type": "Organization"}', parsed={"@type": "Organization"}, types=["Organization"])
    gtm_old, gtm_new = (
        Tag("google-tag-manager", "analytics", "GTM-OLD"),
        Tag("google-tag-manager", "analytics", "GTM-NEW"),
    )

    def headers(day: str, **more: str) -> dict[str, str]:
        return {"content-type": "text/html", "date": f"{day}, 0{len(day)} Dec 2026 10:00:00 GMT", **more}

    build_archive(
        path,
        [
            home(
                headers=headers("Mon"),
                images=[logo],
                resources=[SITE + "/a.css", SITE + "/old.js"],
                jsonld=[website],
                tags=[gtm_old],
            ),
            leaf(ABOUT, "About"),
            leaf(NEWS, "News"),
        ],
    )
    build_archive(
        path,
        [
            home(
                "Home page",
                ("/about", "/news", "/contact"),
                headers=headers("Tue", **DENY),
                images=[logo, hero],
                resources=[SITE + "/a.css", SITE + "/new.js"],
                jsonld=[org],
                tags=[gtm_new],
            ),
            leaf(ABOUT, "About"),
            leaf(NEWS, "News"),
        ],
    )
    build_archive(
        path,
        [
            home(
                "Home page",
                ("/contact", "/news", "/about"),
                headers=headers("Wed", **DENY),
                images=[hero, logo],
                resources=[SITE + "/new.js", SITE + "/a.css"],
                jsonld=[org],
                tags=[gtm_new],
            ),
            leaf(ABOUT, "About"),
        ],
    )
    build_archive(path, [leaf(ABOUT, "About"), leaf(NEWS, "Latest news")])
    return path


def query(registry, path, name, commit=None, **params):
    with open_archive(path) as reader:
        return run_query(registry, reader, name, params, commit)


def test_page_diff_names_each_field_old_and_new_and_every_set_added_and_removed(registry, generations):
    delta = query(registry, generations, "page-diff", commit=2, url=HOME)
    assert (delta["status"], delta["base"], delta["commit"]) == ("modified", 1, 2)
    assert delta["fields"]["title"] == ["Home", "Home page"]
    assert delta["anchors"] == {"added": [{"href": SITE + "/contact", "text": "/contact"}]}
    assert delta["images"] == {"added": [{"src": SITE + "/hero.jpg", "alt": ""}]}
    assert delta["resources"] == {"added": [SITE + "/new.js"], "removed": [SITE + "/old.js"]}
    assert delta["jsonld"] == {
        "added": [{"kind": "jsonld", "types": ["Organization"], "data": {"@type": "Organization"}}],
        "removed": [{"kind": "jsonld", "types": ["WebSite"], "data": {"@type": "WebSite"}}],
    }
    assert delta["tags"] == {
        "added": [
            {
                "provider": "google-tag-manager",
                "category": "analytics",
                "external_id": "GTM-NEW",
                "version": "",
            }
        ],
        "removed": [
            {
                "provider": "google-tag-manager",
                "category": "analytics",
                "external_id": "GTM-OLD",
                "version": "",
            }
        ],
    }
    # a header that changes on every response is named as noise, never shown as the change
    assert delta["headers"] == {"added": {"x-frame-options": "DENY"}, "noise": ["date"]}
    assert set(delta["changed"]) == {
        "title",
        "html_sha256",
        "headers",
        "anchors",
        "images",
        "resources",
        "jsonld",
        "tags",
    }


def test_a_new_order_of_links_images_and_resources_is_no_change(registry, generations):
    delta = query(registry, generations, "page-diff", commit=3, url=HOME)
    # only the rendered HTML and the Date header differ: the sets are the same sets
    for name in ("anchors", "images", "resources", "jsonld", "tags", "headings"):
        assert name not in delta
    assert delta["headers"] == {"noise": ["date"]} and "headers" not in delta["changed"]


def test_headers_that_differ_on_every_response_are_named_as_noise_not_as_the_change(registry, tmp_path):
    path = tmp_path / "site.nitpicker"
    for day, title in (("Mon", "Home"), ("Tue", "Home, again")):
        build_archive(
            path,
            [
                home(
                    title,
                    headers={
                        "date": f"{day}, 01 Dec 2026 10:00:00 GMT",
                        "x-request-id": day,
                        "set-cookie": f"session={day}",
                        "content-type": "text/html",
                        "content-security-policy": f"script-src 'nonce-{day}42'",
                    },
                )
            ],
        )
    delta = query(registry, path, "page-diff", url=HOME)
    assert sorted(delta["changed"]) == ["html_sha256", "title"]
    assert delta["headers"] == {"noise": ["content-security-policy", "date", "set-cookie", "x-request-id"]}


def test_page_diff_of_added_removed_unchanged_and_unknown_pages(registry, generations):
    assert query(registry, generations, "page-diff", commit=4, url=HOME)["status"] == "removed"
    assert query(registry, generations, "page-diff", commit=2, url=SITE + "/contact")["status"] == "added"
    assert query(registry, generations, "page-diff", commit=2, url=ABOUT)["status"] == "unchanged"
    with pytest.raises(UsageError, match="is in neither site.nitpicker@1 nor site.nitpicker@2"):
        query(registry, generations, "page-diff", commit=2, url=SITE + "/nowhere")
    with pytest.raises(UsageError, match="commit 1 has no parent"):
        query(registry, generations, "page-diff", commit=1, url=HOME)


def test_page_diff_query_adds_the_normalised_html_diff(registry, generations):
    delta = query(registry, generations, "page-diff", commit=2, url=HOME, html=True)
    assert "-<title>Home</title>\n+<title>Home page</title>\n" in delta["html_diff"]
    quiet = query(
        registry, generations, "page-diff", commit=2, url=HOME, html=True, normalize=["<title>(.*)</title>"]
    )
    assert (
        " <title>…</title>" in quiet["html_diff"].splitlines()
        and '+<a href="/contact">/contact</a>' in quiet["html_diff"]
    )
    assert (
        query(registry, generations, "page-diff", commit=4, url=HOME, html=True)["html_diff"] is None
    )  # removed
    with pytest.raises(UsageError, match="parameter 'normalize' is not a valid regular expression"):
        query(registry, generations, "page-diff", commit=2, url=HOME, html=True, normalize=["("])


def test_diff_query_explains_each_modified_page_and_lists_resources(registry, generations):
    result = query(registry, generations, "diff", commit=2)
    assert result["modified"] == [HOME] and list(result["changes"]) == [HOME]
    assert result["changes"][HOME]["fields"]["title"] == ["Home", "Home page"]
    assert result["changes"][HOME]["anchors"]["added"] == [{"href": SITE + "/contact", "text": "/contact"}]
    assert query(registry, generations, "diff", commit=2, explain=0)["changes"] == {}
    later = query(registry, generations, "diff", commit=4)
    assert (later["added"], later["removed"], later["modified"]) == ([], [HOME, SITE + "/contact"], [NEWS])
    assert later["changes"][NEWS]["fields"]["title"] == [None, "Latest news"]
    assert later["changes"][NEWS]["fields"]["scraped"] == [False, True]


def test_history_of_a_field_gives_the_value_per_commit_and_where_it_changed(registry, generations):
    title = query(registry, generations, "history", url=HOME, field="title")
    assert [(c["commit"], c["present"], c.get("value")) for c in title["commits"]] == [
        (1, True, "Home"),
        (2, True, "Home page"),
        (3, True, "Home page"),
        (4, False, None),
    ]
    assert title["changes"] == [
        {"commit": 2, "base": 1, "old": "Home", "new": "Home page"},
        {"commit": 4, "base": 3, "old": "Home page", "new": None},
    ]
    # commit 3 did not crawl /news (only the home page's link to it was kept), 4 did again
    news = query(registry, generations, "history", url=NEWS, field="title")
    assert [c["value"] for c in news["commits"]] == ["News", "News", None, "Latest news"]
    assert [(c["commit"], c["old"], c["new"]) for c in news["changes"]] == [
        (3, "News", None),
        (4, None, "Latest news"),
    ]
    links = query(registry, generations, "history", url=HOME, field="anchors", commit=3)
    # links compare as a set: the new order in commit 3 is no change
    assert links["changes"] == [
        {"commit": 2, "base": 1, "added": [{"href": SITE + "/contact", "text": "/contact"}]}
    ]
    assert [len(c["value"]) for c in links["commits"]] == [2, 3, 3]


def test_history_without_a_field_says_what_changed_at_each_change(registry, generations):
    history = query(registry, generations, "history", url=HOME)
    assert [c["commit"] for c in history["commits"]] == [1, 2, 3, 4]
    assert [(c["commit"], c["status"]) for c in history["changes"]] == [
        (2, "modified"),
        (3, "modified"),
        (4, "removed"),
    ]
    assert "title" in history["changes"][0]["changed"] and "title" not in history["changes"][1]["changed"]
    # up to a given commit only
    assert [c["commit"] for c in query(registry, generations, "history", url=HOME, commit=2)["commits"]] == [
        1,
        2,
    ]


def test_history_refuses_an_unknown_field_and_a_url_never_seen(registry, generations):
    with pytest.raises(UsageError, match="no field 'tilte'; fields: .*title"):
        query(registry, generations, "history", url=HOME, field="tilte")
    with pytest.raises(UsageError, match="is in no commit up to 4"):
        query(registry, generations, "history", url=SITE + "/nowhere")


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cli_diff_between_commits_with_url_and_html(cli, generations):
    before = digest(generations)
    result = cli("diff", str(generations), "1", "2")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["old"], data["new"], data["modified"]) == ("site.nitpicker@1", "site.nitpicker@2", [HOME])
    assert data["changes"][HOME]["tags"]["added"][0]["external_id"] == "GTM-NEW"
    assert data["resources"] == {"added": [], "removed": [], "modified": []}
    url = json.loads(cli("diff", str(generations), "1", "2", "--url", HOME).stdout)
    assert url["fields"]["title"] == ["Home", "Home page"] and url["url"] == HOME
    html = cli("diff", str(generations), "1", "2", "--html", HOME)
    assert html.returncode == 0, html.stderr
    lines = html.stdout.splitlines()
    assert lines[:2] == ["--- site.nitpicker@1", "+++ site.nitpicker@2"]
    assert "-<title>Home</title>" in lines and "+<title>Home page</title>" in lines
    assert '+<a href="/contact">/contact</a>' in lines
    assert cli("diff", str(generations), "2", "3", "--html", ABOUT).stdout == ""  # unchanged: no diff at all
    assert digest(generations) == before


def test_cli_diff_of_two_archives_compares_their_heads_by_url(cli, tmp_path):
    old, new = tmp_path / "old.nitpicker", tmp_path / "new.nitpicker"
    build_archive(old, [home(), leaf(ABOUT, "About"), leaf(NEWS, "News")])
    build_archive(old, [home(), leaf(ABOUT, "About"), leaf(NEWS, "News v2")])  # HEAD of old is commit 2
    build_archive(
        new, [home("Welcome", ("/about",)), leaf(ABOUT, "About"), leaf(SITE + "/contact", "Contact")]
    )
    result = cli("diff", str(old), str(new))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["old"], data["new"]) == ("old.nitpicker@2", "new.nitpicker@1")
    assert (data["added"], data["removed"], data["modified"]) == ([SITE + "/contact"], [NEWS], [HOME])
    assert data["changes"][HOME]["fields"]["title"] == ["Home", "Welcome"]
    html = cli("diff", str(old), str(new), "--html", HOME).stdout
    assert "-<title>Home</title>" in html and "+<title>Welcome</title>" in html


@pytest.mark.parametrize(
    "args, message",
    [
        (["1", "9"], "site.nitpicker has no commit 9"),
        (["7"], "site.nitpicker has no commit 7"),
        (["3", "4", "--html", HOME], f"{HOME} is not in site.nitpicker@4"),
        (["1", "2", "--html", SITE + "/contact"], f"{SITE}/contact is not in site.nitpicker@1"),
        (["2", "3", "--html", NEWS], f"{NEWS} has no stored HTML in site.nitpicker@3"),  # a bare link target
        (["1", "2", "--url", SITE + "/nowhere"], "is in neither site.nitpicker@1 nor site.nitpicker@2"),
        (["notes.txt"], "notes.txt is not a nitpicker archive"),
        (["missing.nitpicker"], "no such archive: missing.nitpicker"),
        (["1", "2", "--url", HOME, "--html", HOME], "give --url or --html, not both"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_leaves_the_archive_as_it_was(cli, generations, args, message):
    (generations.parent / "notes.txt").write_text("not an archive\n")
    before = digest(generations)
    result = cli("diff", str(generations), *args, cwd=generations.parent)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("nitpicker: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and str(generations.parent) not in result.stderr
    assert digest(generations) == before


def test_a_commit_without_parent_needs_a_base(cli, tmp_path):
    path = build_archive(tmp_path / "one.nitpicker", [home()])
    result = cli("diff", str(path))
    assert result.returncode == 1 and "commit 1 has no parent" in result.stderr


def test_the_viewer_api_serves_page_diff_and_history(generations):
    from nitpicker_testing.runs import viewer_client

    with viewer_client(make_plugin_manager(), generations) as client:
        delta = client.get("/api/page-diff", query_string={"url": HOME, "commit": 2}).get_json()
        history = client.get("/api/history", query_string={"url": HOME, "field": "title"}).get_json()
        missing = client.get("/api/page-diff", query_string={"url": SITE + "/nowhere", "commit": 2})
    assert delta["fields"]["title"] == ["Home", "Home page"]
    assert [c["commit"] for c in history["changes"]] == [2, 4]
    assert missing.status_code == 400 and "is in neither" in missing.get_json()["error"]
