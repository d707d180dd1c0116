"""The archive schema as peewee models; unbound, so each database binds them only to create tables."""

from __future__ import annotations

from typing import Any

import peewee as pw

from nitpicker_core.records import BOOLEAN_METADATA, METADATA_FIELDS

from . import times as times_module

# 2: page_state.source_sha256, anchor.raw_href/line/col and the heading table (a writer upgrades 1 on open)
# 3: commit_resource_referrer is a view over commit_page and page_resource (it was a table written per
#    commit, repeating for every commit what the page states already say), page_resource indexed by
#    resource, commit_resource.referrers counted at commit finish; crawl times of commit_page and
#    crawl_error as integer milliseconds (times.py). What an unchanged re-crawl adds shrank by half.
# 4: the sitemap and sitemap_entry tables: the sitemaps a crawl read, with the commit (older commits have none)
# 5: the keys the core writes into ScrapeResult.extra and reads back are page_state columns (PROMOTED);
#    extra keeps only plugins' data. A writer moves them out of extra on open; a reader of an older archive
#    sees the same columns through a temporary view (reader.py), so every read names the columns.
# 6: page_state.word_count (derived from the page, outside its hash) and what each crawl's request took,
#    with the commit: commit_page.response_ms, load_ms and http_version; the sitemap_alternate table
#    (sitemaps' xhtml:link hreflang alternates; a reader of an archive without it reads no such alternates)
# 7: page_state.html_facts (derived from the page's HTML when it is scraped, outside its hash): what the
#    canonical and nofollow checks read out of the HTML (nitpicker_core.html_facts); anchor.plain (whether
#    an anchor's text is plain, for the anchor-text check's filter: linkgraph.link_texts). NULL in older rows
# 8: commit_page.render_decision: ``--render auto``'s decision for the page (JSON: mode, template, rendered,
#    reason, a sample's verdict), with the commit that took it. Format 7 kept it in page_state.html_facts
#    (key ``render``), which a later commit reaching the same state showed as its own (and a state first
#    stored by another mode never got): the upgrade copies each format-7 decision to the rows of the
#    commits that showed it, and a reader of an unupgraded format-7 file reads it from html_facts as before
# Later tables without a new format number (a writer creates them on open; readers of an archive without
#    one read nothing from it): robots_txt, each origin's robots.txt as a crawl read it (status, failure,
#    body), so what well-known crawlers may fetch is judged afterwards (nitpicker_core.crawler_access)
FORMAT_VERSION = 8

# The promoted keys of ScrapeResult.extra and how each is stored: "text", "flag" (0/1, read back as a bool),
# "int", or "json" (canonical JSON text, the same text json_extract gives from extra).
PROMOTED: tuple[tuple[str, str], ...] = (
    ("error_kind", "text"),  # the crawl failed: timeout, dns, tls, ... (crawler/results.py)
    ("permanent", "flag"),  # that failure will not go away by itself
    ("blocked", "flag"),  # a bot wall answered
    ("redirect_chain", "json"),  # the hops of a redirect chain (prepare.chain_hops)
    ("redirect_status", "int"),  # the first status of a chain the browser followed
    ("client_redirect", "flag"),  # the page moved by script or meta refresh
    ("outside_scope", "flag"),  # a URL of the site's host outside the crawl's scope: checked, not crawled
    ("source_omitted", "text"),  # why the HTML the server sent was not kept
    ("unrendered", "text"),  # why the page was not rendered
    ("large_images", "json"),  # images over the size budget
)
PROMOTED_NAMES: tuple[str, ...] = tuple(name for name, _ in PROMOTED)
_SQL_TYPES = {"text": "TEXT", "flag": "INTEGER", "int": "INTEGER", "json": "TEXT"}


class _Base(pw.Model):
    class Meta:
        database = None
        legacy_table_names = False


class Info(_Base):
    key = pw.TextField(primary_key=True)
    value = pw.TextField()  # JSON


class Ref(_Base):
    name = pw.TextField(primary_key=True)
    commit_id = pw.IntegerField()


class Commit(_Base):
    # "commit" is an SQL keyword; a plural name keeps hand-written queries free of quoting.
    id = pw.AutoField()
    parent_id = pw.IntegerField(null=True)
    kind = pw.TextField()
    status = pw.TextField()
    started_at = pw.TextField()
    finished_at = pw.TextField(null=True)
    options = pw.TextField(default="{}")
    stats = pw.TextField(default="{}")
    environment = pw.TextField(default="{}")

    class Meta:
        table_name = "commits"


class Url(_Base):
    id = pw.AutoField()
    url = pw.TextField(unique=True)


class Blob(_Base):
    sha256 = pw.TextField(primary_key=True)
    codec = pw.TextField()
    size = pw.IntegerField()
    data = pw.BlobField()


class PageState(_Base):
    id = pw.AutoField()
    hash = pw.TextField(unique=True)
    url_id = pw.IntegerField(index=True)
    status = pw.IntegerField(null=True)
    status_text = pw.TextField(default="")
    content_type = pw.TextField(null=True, index=True)
    content_length = pw.IntegerField(null=True)
    headers = pw.TextField(default="{}")
    redirect_dest_url_id = pw.IntegerField(null=True, index=True)
    scraped = pw.IntegerField()
    is_target = pw.IntegerField()
    is_external = pw.IntegerField()
    is_skipped = pw.IntegerField()
    skip_reason = pw.TextField(default="")
    extra = pw.TextField(default="{}")
    html_sha256 = pw.TextField(null=True)


for _name in METADATA_FIELDS:
    _field = pw.IntegerField(null=True) if _name in BOOLEAN_METADATA else pw.TextField(null=True)
    PageState._meta.add_field(_name, _field)
# The HTML the server sent, in the blob table beside the rendered html_sha256 (format 2); added last, as
# ALTER TABLE ADD COLUMN puts it there in an upgraded archive too.
PageState._meta.add_field("source_sha256", pw.TextField(null=True))
for _name, _kind in PROMOTED:  # format 5, after source_sha256 for the same reason
    PageState._meta.add_field(
        _name, pw.IntegerField(null=True) if _kind in ("flag", "int") else pw.TextField(null=True)
    )
PageState._meta.add_field("word_count", pw.IntegerField(null=True))  # format 6
PageState._meta.add_field("html_facts", pw.TextField(null=True))  # format 7

# Column order of page_state as the writer inserts it (everything but id).
PAGE_STATE_COLUMNS: tuple[str, ...] = (
    "hash",
    "url_id",
    "status",
    "status_text",
    "content_type",
    "content_length",
    "headers",
    "redirect_dest_url_id",
    "scraped",
    "is_target",
    "is_external",
    "is_skipped",
    "skip_reason",
    "extra",
    "html_sha256",
    *METADATA_FIELDS,
    "source_sha256",
    *PROMOTED_NAMES,
    "word_count",
    "html_facts",
)


def _state_fk() -> pw.ForeignKeyField:
    # Children die with their state, which is what gc() relies on.
    return pw.ForeignKeyField(PageState, column_name="state_id", on_delete="CASCADE", index=True)


class Anchor(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    target_url_id = pw.IntegerField(index=True)
    fragment = pw.TextField(default="")
    text = pw.TextField(default="")
    raw_href = pw.TextField(null=True)  # as written in the page (format 2)
    line = pw.IntegerField(null=True)  # of the start tag in the HTML the server sent, 1-based
    col = pw.IntegerField(null=True)
    # the length of a plain text, 0 for any other (prepare.plain_length; format 7, NULL before)
    plain = pw.IntegerField(null=True)


class Heading(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    level = pw.IntegerField()
    text = pw.TextField(default="")


class Image(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    src = pw.TextField()
    current_src = pw.TextField(default="")
    alt = pw.TextField(null=True)
    width = pw.FloatField(null=True)
    height = pw.FloatField(null=True)
    natural_width = pw.IntegerField(null=True)
    natural_height = pw.IntegerField(null=True)
    is_lazy = pw.IntegerField(default=0)
    viewport_width = pw.IntegerField(default=0)
    markup = pw.TextField(default="")


class PageResource(_Base):
    state = _state_fk()
    resource_url_id = pw.IntegerField()

    class Meta:
        indexes = ((("resource_url_id", "state"), False),)


class JsonLd(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    kind = pw.TextField()
    raw = pw.TextField()  # type: ignore[assignment]  # the column's name shadows peewee's Model.raw
    parsed = pw.TextField(null=True)
    types = pw.TextField(default="[]")
    error = pw.TextField(default="")

    class Meta:
        table_name = "jsonld"


class Tag(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    provider = pw.TextField()
    category = pw.TextField(default="")
    external_id = pw.TextField(default="")
    version = pw.TextField(default="")
    confidence = pw.IntegerField(default=100)


class PageError(_Base):
    state = _state_fk()
    ordinal = pw.IntegerField()
    step = pw.TextField()
    message = pw.TextField()


class CommitPage(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    state = pw.ForeignKeyField(PageState, column_name="state_id", index=False)
    first_seen_at = pw.BigIntegerField()  # ms since the epoch (format 3; ISO text before), see times.py
    last_crawled_at = pw.BigIntegerField(null=True)
    order = pw.IntegerField(null=True)
    # What this crawl's request took (format 6): to the first byte, to the load event, and the protocol
    response_ms = pw.IntegerField(null=True)
    load_ms = pw.IntegerField(null=True)
    http_version = pw.TextField(null=True)
    # --render auto's decision for the page in this crawl (format 8; nitpicker_core.crawler.auto), NULL in
    # the other modes and for a page an update took over unchanged (this crawl decided nothing for it)
    render_decision = pw.TextField(null=True)

    class Meta:
        primary_key = pw.CompositeKey("commit", "url_id")
        without_rowid = True
        indexes = ((("commit", "state"), False),)


class ResourceState(_Base):
    id = pw.AutoField()
    hash = pw.TextField(unique=True)
    url_id = pw.IntegerField(index=True)
    status = pw.IntegerField(null=True)
    status_text = pw.TextField(default="")
    content_type = pw.TextField(null=True)
    content_length = pw.IntegerField(null=True)
    compression = pw.TextField(default="")
    cdn = pw.TextField(default="")
    headers = pw.TextField(default="{}")
    is_external = pw.IntegerField(default=0)


class CommitResource(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    state = pw.ForeignKeyField(ResourceState, column_name="state_id", index=True)
    referrers = pw.IntegerField(null=True)  # pages of the commit that loaded it; set when the commit finishes

    class Meta:
        primary_key = pw.CompositeKey("commit", "url_id")
        without_rowid = True


class CrawlError(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    kind = pw.TextField()
    message = pw.TextField()
    phase = pw.TextField(default="")
    at = pw.BigIntegerField()  # ms since the epoch (format 3; ISO text before)

    class Meta:
        indexes = ((("commit", "kind"), False), (("commit", "url_id"), False))


class InventoryRun(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE")
    sha256 = pw.TextField()
    counts = pw.TextField(default="{}")
    at = pw.TextField()


class Sitemap(_Base):
    # One sitemap file a crawl read (or could not): problems is JSON [[kind, detail], …]
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE")
    url_id = pw.IntegerField()
    source = pw.TextField()  # given, robots.txt, default, index
    parent_url_id = pw.IntegerField(null=True)  # the index that listed it
    scope = pw.TextField()  # the URL prefix its URLs must start with
    kind = pw.TextField()  # urlset, index, text, "" (nothing readable)
    status = pw.IntegerField(null=True)
    problems = pw.TextField(default="[]")
    entries = pw.IntegerField(default=0)


class SitemapEntry(_Base):
    # A URL a sitemap lists (for an index, a sitemap it lists); commit_id repeated so prune finds the rows
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    sitemap = pw.ForeignKeyField(Sitemap, column_name="sitemap_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    lastmod = pw.TextField(null=True)

    class Meta:
        primary_key = False
        indexes = ((("commit", "url_id"), False), (("sitemap", "url_id"), False))


class SitemapAlternate(_Base):
    # An <xhtml:link rel="alternate" hreflang> of a sitemap's <url>: the page (url_id), the code and the
    # target as read (normalised when http(s)); commit_id repeated so prune finds the rows
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    sitemap = pw.ForeignKeyField(Sitemap, column_name="sitemap_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    hreflang = pw.TextField()
    href = pw.TextField()

    class Meta:
        primary_key = False
        indexes = ((("commit", "url_id"), False),)


class RobotsTxt(_Base):
    # One origin's robots.txt as a crawl read it: the status (None: no answer), the failure and a 200's body
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    origin = pw.TextField()
    status = pw.IntegerField(null=True)
    failure = pw.TextField(null=True)
    body = pw.TextField(default="")

    class Meta:
        primary_key = pw.CompositeKey("commit", "origin")


class AnalysisCell(_Base):
    # The unique index leads with (commit_id, url_id), so it also serves per-page reads.
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    analyzer = pw.TextField()
    column = pw.TextField()
    value = pw.TextField(null=True)
    note = pw.TextField(default="")

    class Meta:
        indexes = ((("commit", "url_id", "analyzer", "column"), True),)


class Violation(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    analyzer = pw.TextField()
    severity = pw.TextField()
    rule = pw.TextField()
    message = pw.TextField()
    location = pw.TextField(default="")
    snippet = pw.TextField(default="")
    help_url = pw.TextField(default="")

    class Meta:
        indexes = ((("commit", "analyzer"), False), (("commit", "url_id"), False))


class AnalyzerError(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField(null=True)
    analyzer = pw.TextField()
    message = pw.TextField()

    class Meta:
        indexes = ((("commit", "url_id"), False),)


class AnalyzerRun(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    analyzer = pw.TextField()
    version = pw.TextField()
    settings = pw.TextField(default="{}")
    started_at = pw.TextField()
    finished_at = pw.TextField(null=True)
    status = pw.TextField()
    # sha256 of the canonical settings JSON: with analyzer and version, the key of analysis_cache
    settings_hash = pw.TextField(default="")

    class Meta:
        indexes = ((("commit", "analyzer"), True),)


class AnalyzerDone(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    analyzer = pw.TextField()
    url_id = pw.IntegerField()

    class Meta:
        primary_key = pw.CompositeKey("commit", "analyzer", "url_id")
        without_rowid = True


class AnalysisCache(_Base):
    """each_page results by (HTML content sha256, analyzer, analyzer version, settings hash), across commits."""

    html_sha256 = pw.TextField()
    analyzer = pw.TextField()
    version = pw.TextField()
    settings_hash = pw.TextField()
    cells = pw.TextField(default="[]")  # JSON [[column, value, note], ...]
    violations = pw.TextField(
        default="[]"
    )  # JSON [{severity, rule, message, location, snippet, help_url}, ...]
    created_at = pw.TextField()

    class Meta:
        primary_key = pw.CompositeKey("html_sha256", "analyzer", "version", "settings_hash")
        without_rowid = True


class ScreenshotBlob(_Base):
    """An image by its content hash (``crawl --screenshots``): stored as sent, JPEG needs no more compression."""

    sha256 = pw.TextField(primary_key=True)
    media_type = pw.TextField()
    width = pw.IntegerField()
    height = pw.IntegerField()
    size = pw.IntegerField()
    data = pw.BlobField()

    class Meta:
        without_rowid = True


class PageScreenshot(_Base):
    """A page state's screenshot and thumbnail (both in screenshot_blob); an unchanged page keeps its state's."""

    state = pw.ForeignKeyField(PageState, column_name="state_id", on_delete="CASCADE", primary_key=True)
    sha256 = pw.TextField()
    thumb_sha256 = pw.TextField()


MODELS: tuple[type[pw.Model], ...] = (
    Info,
    Ref,
    Commit,
    Url,
    Blob,
    PageState,
    Anchor,
    Heading,
    Image,
    PageResource,
    JsonLd,
    Tag,
    PageError,
    CommitPage,
    ResourceState,
    CommitResource,
    CrawlError,
    InventoryRun,
    Sitemap,
    SitemapEntry,
    SitemapAlternate,
    RobotsTxt,
    AnalysisCell,
    Violation,
    AnalyzerError,
    AnalyzerRun,
    AnalyzerDone,
    AnalysisCache,
    ScreenshotBlob,
    PageScreenshot,
)


# The pages of a commit that referenced each sub-resource: the resources each page state loaded
# (page_resource, shared by every commit that kept the state), for the state each page has in the commit.
# Derived, so an unchanged re-crawl adds nothing here. Looked up by (commit, resource) through
# page_resource's resource index and commit_page's primary key, by (commit, page) through that key.
REFERRER_VIEW = (
    "CREATE VIEW IF NOT EXISTS commit_resource_referrer (commit_id, resource_url_id, page_url_id) AS "
    "SELECT cp.commit_id, pr.resource_url_id, cp.url_id FROM page_resource pr "
    "JOIN page_state ps ON ps.id = pr.state_id "
    "JOIN commit_page cp ON cp.url_id = ps.url_id AND cp.state_id = pr.state_id"
)


def create_schema(db: pw.SqliteDatabase) -> None:
    """Create every table, index and view on ``db`` without leaving the models bound to it."""
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)
    db.execute_sql(REFERRER_VIEW)


# Columns each format added to existing tables, nullable, so older rows simply read NULL.
ADDED_COLUMNS: dict[int, tuple[tuple[str, str, str], ...]] = {
    2: (
        ("page_state", "source_sha256", "TEXT"),
        ("anchor", "raw_href", "TEXT"),
        ("anchor", "line", "INTEGER"),
        ("anchor", "col", "INTEGER"),
    ),
    3: (("commit_resource", "referrers", "INTEGER"),),
    5: tuple(("page_state", name, _SQL_TYPES[kind]) for name, kind in PROMOTED),
    6: (
        ("page_state", "word_count", "INTEGER"),
        ("commit_page", "response_ms", "INTEGER"),
        ("commit_page", "load_ms", "INTEGER"),
        ("commit_page", "http_version", "TEXT"),
    ),
    7: (("page_state", "html_facts", "TEXT"), ("anchor", "plain", "INTEGER")),
    8: (("commit_page", "render_decision", "TEXT"),),
}
#: Format 7's place of a page's ``--render auto`` decision: its state's facts (see format 8 above).
FORMAT7_DECISION = "CASE WHEN json_type({ps}.html_facts, '$.render') = 'object' THEN json_extract({ps}.html_facts, '$.render') END"


def promoted_from_extra_sql(extra: str = "extra") -> str:
    """``json_extract`` of each promoted key from the JSON column ``extra``, named after its column.

    The values are the columns' exactly: JSON true is 1, an array is its minified text (canonical JSON).
    """
    return ", ".join(f"json_extract({extra}, '$.{name}') AS {name}" for name in PROMOTED_NAMES)


def _promote(conn: Any) -> None:
    """Move the promoted keys of every state's extra into their columns (format 3 to 4)."""
    keys = ", ".join(f"'$.{name}'" for name in PROMOTED_NAMES)
    sets = ", ".join(f"{name} = json_extract(extra, '$.{name}')" for name in PROMOTED_NAMES)
    conn.execute(f"UPDATE page_state SET {sets}, extra = json_remove(extra, {keys}) WHERE extra != '{{}}'")


def _move_decisions(conn: Any) -> None:
    """Each format-7 decision to the commit_page rows of its state (format 7 to 8): what every reader
    showed for those commits, so they read as before. The states keep it in html_facts, where no reader of a
    format-8 file looks for it (rewriting every state of a large archive would buy nothing)."""
    conn.execute(
        "UPDATE commit_page SET render_decision = (SELECT "
        + FORMAT7_DECISION.format(ps="ps")
        + " FROM page_state ps WHERE ps.id = commit_page.state_id) WHERE state_id IN "
        "(SELECT id FROM page_state WHERE json_type(html_facts, '$.render') = 'object')"
    )


def upgrade_schema(db: pw.SqliteDatabase) -> bool:
    """Bring an older archive to FORMAT_VERSION in place (the writer only); True when anything changed."""
    conn = db.connection()
    changed = False
    promote = decisions = False
    for version in sorted(ADDED_COLUMNS):
        for table, column, sql_type in ADDED_COLUMNS[version]:
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}")
                changed = True
                promote = promote or version == 5
                decisions = decisions or version == 8
    if promote:
        _promote(conn)
    if decisions:
        _move_decisions(conn)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if any(m._meta.table_name not in tables for m in MODELS):
        with db.bind_ctx(MODELS):
            db.create_tables(MODELS, safe=True)  # new tables (heading) and their indexes
        changed = True
    if _text_times(conn):
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = 'commit_resource_referrer'"
        ).fetchone():
            conn.execute("DROP VIEW commit_resource_referrer")  # it names commit_page, rebuilt here
        for model in (CommitPage, CrawlError):
            _rebuild_with_integer_times(db, model)
        changed = True
    if "commit_resource_referrer" in tables:  # format 2 kept it as a table, filled per commit
        conn.execute(
            "UPDATE commit_resource SET referrers = (SELECT COUNT(*) FROM commit_resource_referrer r "
            "WHERE r.commit_id = commit_resource.commit_id AND r.resource_url_id = commit_resource.url_id) "
            "WHERE commit_id IN (SELECT id FROM commits WHERE status IN ('complete', 'interrupted'))"
        )
        conn.execute("DROP TABLE commit_resource_referrer")
        changed = True
    conn.execute(
        'CREATE INDEX IF NOT EXISTS "page_resource_resource_url_id_state_id" '
        'ON "page_resource" ("resource_url_id", "state_id")'
    )
    conn.execute(REFERRER_VIEW)
    bumped = conn.execute(
        "UPDATE info SET value = ? WHERE key = 'format_version' AND CAST(value AS INTEGER) < ?",
        (str(FORMAT_VERSION), FORMAT_VERSION),
    ).rowcount
    return changed or bumped > 0


def _text_times(conn: Any) -> bool:
    return any(
        row[1] == "first_seen_at" and row[2].upper() == "TEXT"
        for row in conn.execute("PRAGMA table_info(commit_page)")
    )


def _rebuild_with_integer_times(db: pw.SqliteDatabase, model: type[_Base]) -> None:
    """Copy ``model``'s table into its format-3 shape, its ISO time columns as milliseconds."""
    conn = db.connection()
    table = model._meta.table_name  # type: ignore[attr-defined]
    for (index,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (table,)
    ).fetchall():
        conn.execute(f'DROP INDEX "{index}"')
    conn.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_format2"')
    with db.bind_ctx([model]):
        db.create_tables([model])
    columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
    times = {"first_seen_at", "last_crawled_at", "at"}
    values = [times_module.ms_from_iso_sql(f'"{c}"') if c in times else f'"{c}"' for c in columns]
    names = ", ".join(f'"{c}"' for c in columns)
    conn.execute(f'INSERT INTO "{table}" ({names}) SELECT {", ".join(values)} FROM "{table}_format2"')
    conn.execute(f'DROP TABLE "{table}_format2"')
