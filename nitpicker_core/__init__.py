"""nitpicker's public API for plugins: import everything a plugin needs from here, nothing deeper."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from typing import TYPE_CHECKING

from nitpicker_core import read
from nitpicker_core.check_context import CheckContext
from nitpicker_core.checks import (
    CHECK_TYPES,
    PRIORITIES,
    SEVERITY_PRIORITY,
    Check,
    Finding,
    Rule,
    fingerprint,
    load_translations,
    priority_of,
)
from nitpicker_core.content_types import CATEGORIES, HTML_TYPES, normalize_content_type
from nitpicker_core.content_types import classify as classify_content_type
from nitpicker_core.content_types import sql_case as content_type_sql_case
from nitpicker_core.content_types import sql_filter as content_type_sql_filter
from nitpicker_core.counts import DEFINITIONS as COUNT_DEFINITIONS
from nitpicker_core.counts import share as url_share
from nitpicker_core.counts import totals as count_totals
from nitpicker_core.defaults import IMAGE_PRESETS, SCRAPE_TIMEOUTS, node_prefix
from nitpicker_core.elements import RENDERED as RENDERED_HTML
from nitpicker_core.elements import SENT as SENT_HTML
from nitpicker_core.elements import PageElements, Where
from nitpicker_core.elements import Tag as ElementTag
from nitpicker_core.elements import scan as scan_elements
from nitpicker_core.errors import ArchiveError, NitpickerError, NotConfigured, UsageError
from nitpicker_core.hookspecs import hookimpl, hookspec
from nitpicker_core.html_facts import ABSENT as ABSENT_FACT
from nitpicker_core.html_facts import JS as JS_DEPENDENCE_FACT
from nitpicker_core.html_facts import absence as head_field_absence
from nitpicker_core.html_facts import (
    canonical_elements,
    js_dependence,
    nofollow_targets,
    render_decision,
    version_record,
)
from nitpicker_core.html_facts import derive as derive_html_facts
from nitpicker_core.html_facts import stored as stored_html_facts
from nitpicker_core.indexability import non_indexable_reason
from nitpicker_core.main_content import compile_selector as compile_main_content_selector
from nitpicker_core.main_content import locate as locate_main_content
from nitpicker_core.main_content import main_text, visible_texts
from nitpicker_core.main_content import words as content_words
from nitpicker_core.permalink import heading_text
from nitpicker_core.query import check_commit, describe, query_registry, run_query, validate_params
from nitpicker_core.records import (
    METADATA_FIELDS,
    Anchor,
    CrawlContext,
    CrawlErrorRecord,
    Heading,
    Image,
    JsonLd,
    PageError,
    Resource,
    ScrapeResult,
    Screenshot,
    Tag,
)
from nitpicker_core.registries import check_registry
from nitpicker_core.registry import Register, RegisterBlueprint, RegisterSetting
from nitpicker_core.sinks import ArchiveSink, LinkGraph, RevalidatingSink, SinkRefused
from nitpicker_core.types import (
    ROW_STYLES,
    Analyzer,
    Cell,
    Column,
    Destination,
    DestinationOption,
    MenuLink,
    PageInput,
    PageReport,
    Query,
    ReportSection,
    Setting,
    Sheet,
    Violation,
)
from nitpicker_core.urls import UrlJoiner
from nitpicker_core.urls import join as join_url
from nitpicker_core.urls import normalize as normalize_url
from nitpicker_core.writable import NotWritable, check_directory_destination, check_file_destination

if TYPE_CHECKING:
    from nitpicker_core.analyze.engine import AnalyzeRun
    from nitpicker_core.archive.alternates import (
        Alternate,
        link_header_alternates,
        page_alternates,
        sitemap_alternates,
    )
    from nitpicker_core.archive.reader import ArchiveReader
    from nitpicker_core.config import Config, config_of
    from nitpicker_core.crawler.auto import template_key_of
    from nitpicker_core.crawler.browser import BrowserHost, kill_marked
    from nitpicker_core.crawler.chromium import browser_args, find_browser
    from nitpicker_core.plugins import NitpickerPluginManager
    from nitpicker_core.report import ReportContext

_BROWSER_NAMES = ("BrowserHost", "browser_args", "find_browser", "kill_marked")
# What hooks pass, for annotations: imported on first use, so a plugin that names them only under
# TYPE_CHECKING costs nothing at start-up (the archive reader, the plugin manager and the analyze engine
# each pull in more modules than most commands need).
_LAZY = {
    "Alternate": "nitpicker_core.archive.alternates",
    "link_header_alternates": "nitpicker_core.archive.alternates",
    "page_alternates": "nitpicker_core.archive.alternates",
    "sitemap_alternates": "nitpicker_core.archive.alternates",
    "AnalyzeRun": "nitpicker_core.analyze.engine",
    "ArchiveReader": "nitpicker_core.archive.reader",
    "Config": "nitpicker_core.config",
    "config_of": "nitpicker_core.config",
    "NitpickerPluginManager": "nitpicker_core.plugins",
    "ReportContext": "nitpicker_core.report",
    "template_key_of": "nitpicker_core.crawler.auto",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    # The Chromium launcher pulls in Playwright (~60 ms); only browser-based plugins pay for it.
    if name in ("browser_args", "find_browser"):  # a path lookup: no Playwright import
        from nitpicker_core.crawler import chromium

        return getattr(chromium, name)
    if name in _BROWSER_NAMES:
        from nitpicker_core.crawler import browser

        return getattr(browser, name)
    raise AttributeError(f"module 'nitpicker_core' has no attribute {name!r}")


try:
    __version__ = _dist_version("nitpicker")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "read",
    "AnalyzeRun",
    "ArchiveReader",
    "Config",
    "config_of",
    "NitpickerPluginManager",
    "Register",
    "RegisterBlueprint",
    "RegisterSetting",
    "ReportContext",
    "ReportSection",
    "BrowserHost",
    "browser_args",
    "find_browser",
    "kill_marked",
    "CATEGORIES",
    "COUNT_DEFINITIONS",
    "count_totals",
    "url_share",
    "METADATA_FIELDS",
    "normalize_content_type",
    "Analyzer",
    "Anchor",
    "ArchiveError",
    "Cell",
    "Check",
    "CheckContext",
    "Column",
    "CrawlContext",
    "CrawlErrorRecord",
    "Destination",
    "Finding",
    "DestinationOption",
    "Heading",
    "Image",
    "JsonLd",
    "MenuLink",
    "NitpickerError",
    "NotConfigured",
    "PageError",
    "PageInput",
    "PageReport",
    "Query",
    "Resource",
    "ROW_STYLES",
    "Rule",
    "ScrapeResult",
    "Screenshot",
    "Setting",
    "Sheet",
    "Tag",
    "UsageError",
    "Violation",
    "ArchiveSink",
    "LinkGraph",
    "RevalidatingSink",
    "SinkRefused",
    "NotWritable",
    "check_commit",
    "check_registry",
    "check_directory_destination",
    "check_file_destination",
    "__version__",
    "classify_content_type",
    "content_type_sql_case",
    "content_type_sql_filter",
    "describe",
    "fingerprint",
    "load_translations",
    "hookimpl",
    "hookspec",
    "join_url",
    "UrlJoiner",
    "template_key_of",
    "Alternate",
    "link_header_alternates",
    "page_alternates",
    "sitemap_alternates",
    "normalize_url",
    "RENDERED_HTML",
    "SENT_HTML",
    "ElementTag",
    "PageElements",
    "Where",
    "scan_elements",
    "heading_text",
    "canonical_elements",
    "nofollow_targets",
    "js_dependence",
    "version_record",
    "render_decision",
    "JS_DEPENDENCE_FACT",
    "derive_html_facts",
    "head_field_absence",
    "ABSENT_FACT",
    "stored_html_facts",
    "non_indexable_reason",
    "compile_main_content_selector",
    "locate_main_content",
    "main_text",
    "content_words",
    "visible_texts",
    "query_registry",
    "run_query",
    "validate_params",
    "HTML_TYPES",
    "CHECK_TYPES",
    "PRIORITIES",
    "SEVERITY_PRIORITY",
    "priority_of",
    "IMAGE_PRESETS",
    "SCRAPE_TIMEOUTS",
    "node_prefix",
]
