"""The crawlers query: what robots.txt lets each well-known search engine and AI crawler fetch (issue 32)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, UsageError, read

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader


def _crawlers(archive: ArchiveReader, commit: int, agent: str | None = None) -> dict[str, Any]:
    found = read.crawler_access(archive, commit, agent)
    if agent and not found["crawlers"]:
        raise UsageError(
            f"{agent!r} is not a crawler nitpicker knows (the crawlers query without agent lists them)"
        )
    return found


QUERIES = [
    Query(
        "crawlers",
        "What the site's robots.txt lets each well-known crawler fetch (search engines and AI crawlers, from "
        "nitpicker's data file with each vendor's documentation as `source`, dated `written`): per crawler its "
        "token, company, kind (search, ai-training, ai-search, ai-assistant, control: a token that only says "
        "whether pages may feed AI), `ai`, `renders_js` (null: not documented), `group` (the robots.txt "
        "user-agent line that applies: its own token, * or none), `site_wide` (may it fetch / of the start "
        "URLs' origins: true, false, partly, null when no robots.txt was read), `pages_allowed`, "
        "`pages_disallowed` and `pages_unknown` of the commit's pages (internal HTML pages and URLs skipped for "
        "robots.txt) and `everything_blocked` (/ and every page disallowed); `robots_txt` lists the files read "
        "with their status. `agent` gives one crawler with its `disallowed` page URLs. Judged from the "
        "robots.txt the crawl stored (none with --ignore-robots or in archives written before robots.txt was kept); what a "
        "crawler that runs no JavaScript sees of each page is the raw_text_share and js_links columns of pages.",
        _crawlers,
        {
            "agent": {
                "type": "string",
                "description": "one crawler's token (case-insensitive, e.g. GPTBot): its row with the disallowed pages",
            }
        },
        order=57,
    ),
]
