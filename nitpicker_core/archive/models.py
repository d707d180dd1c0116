"""The archive schema as peewee models; unbound, so each database binds them only to create tables."""

from __future__ import annotations

import peewee as pw

from nitpicker_core.records import BOOLEAN_METADATA, METADATA_FIELDS

# 2: page_state.source_sha256, anchor.raw_href/line/col and the heading table (a writer upgrades 1 on open)
FORMAT_VERSION = 2


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
    first_seen_at = pw.TextField()
    last_crawled_at = pw.TextField(null=True)
    order = pw.IntegerField(null=True)

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

    class Meta:
        primary_key = pw.CompositeKey("commit", "url_id")
        without_rowid = True


class CommitResourceReferrer(_Base):
    # The primary key doubles as the (commit_id, resource_url_id) index.
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    resource_url_id = pw.IntegerField()
    page_url_id = pw.IntegerField()

    class Meta:
        primary_key = pw.CompositeKey("commit", "resource_url_id", "page_url_id")
        without_rowid = True
        indexes = ((("commit", "page_url_id"), False),)


class CrawlError(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE", index=False)
    url_id = pw.IntegerField()
    kind = pw.TextField()
    message = pw.TextField()
    phase = pw.TextField(default="")
    at = pw.TextField()

    class Meta:
        indexes = ((("commit", "kind"), False), (("commit", "url_id"), False))


class InventoryRun(_Base):
    commit = pw.ForeignKeyField(Commit, column_name="commit_id", on_delete="CASCADE")
    sha256 = pw.TextField()
    counts = pw.TextField(default="{}")
    at = pw.TextField()


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
    CommitResourceReferrer,
    CrawlError,
    InventoryRun,
    AnalysisCell,
    Violation,
    AnalyzerError,
    AnalyzerRun,
    AnalyzerDone,
    AnalysisCache,
    ScreenshotBlob,
    PageScreenshot,
)


def create_schema(db: pw.SqliteDatabase) -> None:
    """Create every table and index on ``db`` without leaving the models bound to it."""
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS)


# Columns each format added to existing tables, nullable, so older rows simply read NULL.
ADDED_COLUMNS: dict[int, tuple[tuple[str, str, str], ...]] = {
    2: (
        ("page_state", "source_sha256", "TEXT"),
        ("anchor", "raw_href", "TEXT"),
        ("anchor", "line", "INTEGER"),
        ("anchor", "col", "INTEGER"),
    ),
}


def upgrade_schema(db: pw.SqliteDatabase) -> bool:
    """Bring an older archive to FORMAT_VERSION in place (the writer only); True when anything changed."""
    conn = db.connection()
    changed = False
    for version in sorted(ADDED_COLUMNS):
        for table, column, sql_type in ADDED_COLUMNS[version]:
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}")
                changed = True
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if any(m._meta.table_name not in tables for m in MODELS):
        with db.bind_ctx(MODELS):
            db.create_tables(MODELS, safe=True)  # new tables (heading) and their indexes
        changed = True
    bumped = conn.execute(
        "UPDATE info SET value = ? WHERE key = 'format_version' AND CAST(value AS INTEGER) < ?",
        (str(FORMAT_VERSION), FORMAT_VERSION),
    ).rowcount
    return changed or bumped > 0
