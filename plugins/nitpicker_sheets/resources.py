"""Resources (raw or grouped), Images, Violations and Summary sheets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from nitpicker_core import Cell, Sheet

from .cells import listed
from .natural import natural_sorted

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, ReportContext

RESOURCE_COLUMNS = ("URL", "Status Code", "Status Text", "Content Type", "Content Length", "Referrers")
PATTERN_CAP = 100  # distinct values counted per query key; past it the pattern says `key=100+`


def canonical(url: str) -> str:
    """The resource URL without query string and fragment: what a cache-busting parameter varies."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class QueryPattern:
    """Distinct values per query key of one group, counted through hashes and capped: values are never kept."""

    def __init__(self) -> None:
        self._seen: dict[str, set[bytes]] = {}
        self._capped: set[str] = set()

    def add(self, url: str) -> None:
        for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
            if key in self._capped:
                continue
            seen = self._seen.setdefault(key, set())
            seen.add(hashlib.blake2b(value.encode(), digest_size=8).digest())
            if len(seen) >= PATTERN_CAP:
                self._capped.add(key)
                seen.clear()

    def text(self) -> str:
        keys = sorted(self._seen)
        return ", ".join(
            f"{k}={PATTERN_CAP}+" if k in self._capped else f"{k}={len(self._seen[k])}" for k in keys
        )


def _raw(items: Iterable[dict[str, Any]]) -> Iterator[list[Any]]:
    for r in natural_sorted(items, lambda r: r["url"]):
        yield [
            r["url"],
            r["status"],
            r["status_text"] or "",
            r["content_type"] or "",
            r["content_length"],
            Cell(r["referrers"], listed(r["referrer_urls"], r["referrers"])),
        ]


def _grouped(items: Iterable[dict[str, Any]]) -> Iterator[list[Any]]:
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (canonical(r["url"]), r["status"], r["content_type"])

    # Sorting by "canonical URL, then the whole URL" makes each group contiguous and the groups natural.
    ordered = natural_sorted(
        items, lambda r: f"{canonical(r['url'])}\x00{r['status']}\x00{r['content_type']}"
    )
    group: list[Any] | None = None
    pattern = QueryPattern()
    current: tuple[Any, ...] | None = None
    for r in ordered:
        if key(r) != current:
            if group is not None:
                yield [*group[:5], group[5], group[6], pattern.text()]
            current, pattern = key(r), QueryPattern()
            group = [current[0], r["status"], r["status_text"] or "", r["content_type"] or "", 0, 0, 0]
        assert group is not None
        group[4] += r["content_length"] or 0
        group[5] += r["referrers"]
        group[6] += 1
        pattern.add(r["url"])
    if group is not None:
        yield [*group[:5], group[5], group[6], pattern.text()]


def resource_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    items = report.stream("report-resources")
    return _grouped(items) if report.options.get("dedupe_resources") else _raw(items)


def _resource_extra(reader: ArchiveReader, commit: int, report: ReportContext) -> tuple[str, ...]:
    return ("Count", "Query Pattern") if report is not None and report.options.get("dedupe_resources") else ()


def image_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for i in report.stream("images"):
        alt = Cell("", "no alt attribute") if i["alt"] is None else i["alt"]
        yield [
            i["page"],
            i["src"],
            i["current_src"],
            alt,
            i["width"],
            i["height"],
            i["natural_width"],
            i["natural_height"],
            i["is_lazy"],
            i["viewport_width"],
            i["missing_size"],
            i["oversized"],
        ]


def violation_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    for v in report.stream("violations"):
        yield [
            v["analyzer"],
            v["priority"],
            v["severity"],
            v["rule"],
            v.get("snippet") or "",
            v["message"],
            v["url"],
            v.get("location") or "",
            v.get("help_url") or "",
        ]


def summary_rows(reader: ArchiveReader, commit: int, report: ReportContext) -> Iterator[list[Any]]:
    s = report.query("summary")
    totals = s["totals"]  # named as every front door names them (Cover: what the numbers mean)
    yield ["URLs", "internal", totals["internal_urls"], None]
    yield ["URLs", "external", totals["external_urls"], None]
    yield ["Pages", "internal", totals["pages"], None]
    status = s["status"]
    total = status["total"] or 0
    for row in status["by_code"]:
        yield ["Status", str(row["status"]), row["count"], _share(row["count"], total)]
    for name in ("redirect_hops", "skipped", "failed", "not_checked"):
        count = status.get(name, 0)  # not_checked: absent from a summary stored by an older nitpicker
        yield ["Status", name.replace("_", " "), count, _share(count, total)]
    # answered, so in their status rows too, but no broken page: the server refused the crawler
    yield ["Status", "blocked", totals["blocked"], _share(totals["blocked"], total)]
    for row in totals["blocked_by_status"]:
        yield ["Blocked by status", str(row["status"]), row["count"], _share(row["count"], total)]
    for row in status["failed_by_kind"]:
        yield ["Failed by kind", row["kind"], row["count"], _share(row["count"], total)]
    for row in s["content_types"]:
        if row["count"]:
            yield ["Content type", row["category"], row["count"], _share(row["count"], total)]
    for row in s["metadata_fill"]:
        yield ["Metadata filled (internal HTML)", row["field"], row["filled"], row["rate"]]
    crawlers = s.get("crawlers")  # None: no robots.txt was read (--ignore-robots, an older archive)
    if crawlers is not None:
        section = "Blocked site-wide by robots.txt"
        search = [token for token in crawlers["blocked"] if token not in crawlers["ai_blocked"]]
        ai, others = crawlers["ai_crawlers"], crawlers["crawlers"] - crawlers["ai_crawlers"]
        for item, of, blocked in (
            ("AI crawlers", ai, crawlers["ai_blocked"]),
            ("search crawlers", others, search),
        ):
            # the tokens as the note; the share of the well-known crawlers of that kind
            yield [
                section,
                f"{item} (of {of})",
                Cell(len(blocked), ", ".join(blocked)),
                _share(len(blocked), of),
            ]


def _share(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


SHEETS = (
    Sheet(
        "Resources",
        RESOURCE_COLUMNS,
        resource_rows,
        order=40,
        uses_report=True,
        extra_columns=_resource_extra,
        description="sub-resources in natural order (--dedupe-resources groups them by canonical URL)",
        links=("URL",),
        widths={"URL": 420, "Query Pattern": 240},
    ),
    Sheet(
        "Images",
        (
            "Page URL",
            "Image Path (src)",
            "Image Path (currentSrc)",
            "Alternative Text",
            "Displayed Width",
            "Displayed Height",
            "Natural Width",
            "Natural Height",
            "Lazy Loading",
            "Viewport Width",
            "Missing Size",
            "Oversized",
        ),
        image_rows,
        order=50,
        uses_report=True,
        links=("Page URL",),
        freeze=(1, 1),
        description="images of internal pages per device viewport, from the crawl's image records",
        widths={"Page URL": 320, "Image Path (src)": 320, "Image Path (currentSrc)": 320},
    ),
    Sheet(
        "Violations",
        ("Validator", "Priority", "Severity", "Rule", "Code", "Message", "URL", "Location", "Help"),
        violation_rows,
        order=55,
        uses_report=True,
        links=("URL", "Help"),
        description="analyzer findings, with the priority every analyzer shares and the analyzer's own severity",
        widths={"Code": 240, "Message": 420, "URL": 320},
    ),
    Sheet(
        "Summary",
        ("Section", "Item", "Value", "Share"),
        summary_rows,
        order=5,
        uses_report=True,
        description="counts, status and content-type distribution, metadata fill rates",
        widths={"Section": 220, "Item": 200},
        number_formats={"Share": "percent"},
    ),
)
