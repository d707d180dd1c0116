"""Plain, picklable data types shared by the crawler, analyzers, queries, reports and plugins."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import UsageError

if TYPE_CHECKING:  # checks.py is loaded only where checks are used
    from nitpicker_core.checks import Rule

SETTING_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "list": list}
#: What an analyzer may read: the HTML the server sent, or the DOM serialised after the page's scripts ran.
HTML_KINDS = ("source", "rendered")
_OPTION_KEY = re.compile(r"[a-z][a-z0-9_-]*")
_XML_DECLARATION = re.compile(r"\A\ufeff?\s*<\?xml\b[^>]*\?>")


@dataclass(frozen=True)
class Setting:
    """One plugin setting, declared once; the core derives the config key and the CLI flag from it.

    ``plugin`` is the plugin's entry-point name (``search``), ``key`` the setting name (``keywords``):
    the config key is ``plugins.search.keywords`` and the flag ``--search-keywords``.
    """

    plugin: str
    key: str
    type: str = "str"
    default: Any = None
    help: str = ""
    #: the flag's name without ``--`` when it is not ``<plugin>-<key>`` (``extract`` for ``extract.rules``)
    flag_name: str = ""
    #: a list flag's values are split at commas; False keeps each occurrence whole (selectors, regexes)
    split: bool = True

    def __post_init__(self) -> None:
        if self.type not in SETTING_TYPES:
            raise ValueError(f"setting {self.plugin}.{self.key}: unknown type {self.type!r}")

    @property
    def config_key(self) -> str:
        return f"plugins.{self.plugin}.{self.key}"

    @property
    def flag(self) -> str:
        return f"--{self.flag_name}" if self.flag_name else f"--{self.plugin}-{self.key}".replace("_", "-")

    @property
    def dest(self) -> str:
        return f"{self.plugin}_{self.key}".replace("-", "_")


@dataclass(frozen=True)
class Column:
    """A table column an analyzer fills for every page."""

    key: str
    label: str


@dataclass
class Violation:
    """One finding of an analyzer on one page."""

    rule: str
    message: str
    severity: str = "error"
    location: str = ""
    url: str = ""
    analyzer: str = ""
    snippet: str = ""
    help_url: str = ""


@dataclass
class Cell:
    """One table cell: a value and an optional note (a tooltip in reports)."""

    value: Any
    note: str = ""


@dataclass
class PageReport:
    """What an analyzer returns for one page or URL: table cells by column key, and violations.

    ``skipped`` names the checks the analyzer did not make on this page, each with the reason
    (``{"parse-error, invalid-nesting": "1,234,567 characters exceed max_size 1000000"}``). The engine
    stores each one as an ``info`` finding with the rule ``skipped`` and counts the page as skipped in the
    run's summary, so a check that could not run is never mistaken for a clean result.
    """

    cells: dict[str, Any] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class PageInput:
    """One page handed to ``Analyzer.each_page`` inside a worker: plain data plus a lazily parsed tree."""

    url: str
    html: str
    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]
    #: which HTML ``html`` is: ``"source"`` (what the server sent) or ``"rendered"`` (the DOM after scripts).
    #: An analyzer that reads ``source`` gets the rendered HTML of a page whose archive did not keep the
    #: server's HTML (archives written before it was kept); this says which one it got.
    html_kind: str = "rendered"
    #: reads a stored HTML body by its sha256 (the engine's archive reader); None where the worker has no
    #: archive (a Dask worker that gets each page's HTML shipped): then ``html_as`` gives None
    load: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)

    def html_as(self, kind: str) -> str | None:
        """The page's HTML of ``kind`` (``"source"`` or ``"rendered"``): ``html`` when that is the kind read,
        else the other one from the archive, None when the archive did not keep it or cannot be read here.

        An analyzer comparing both (structured data only in the rendered page) reads the other one this way;
        its cached results are keyed by the HTML it reads (``reads``), so read the one that changes first."""
        if kind == self.html_kind:
            return self.html
        sha = self.metadata.get("source_sha256" if kind == "source" else "html_sha256")
        if not sha or self.load is None:
            return None
        return self.load(str(sha))

    @cached_property
    def document(self) -> Any:
        """The HTML parsed once with lxml (``lxml.html.HtmlElement``); shared by every analyzer."""
        import lxml.html

        if not self.html.strip():
            return lxml.html.fromstring("<html></html>")
        # XHTML served as text/html (PostgreSQL's docs) starts with an XML declaration, which an HTML parser
        # reads as a comment but lxml refuses in a str: blanked out, so every later line:col stays where it was
        html = _XML_DECLARATION.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), self.html, count=1)
        return lxml.html.document_fromstring(html)


class Analyzer:
    """Base class for analyzers registered through ``register_analyzers``.

    Subclasses set ``name`` (unique, used by ``--plugin``), ``label``, ``columns`` and ``concurrency``
    (worker processes for ``each_page``; ``None`` means one per CPU) and implement ``each_page`` (runs
    in a long-lived worker process) and/or ``each_url`` (runs in the main process). ``setup`` and
    ``teardown`` run once per worker. ``version`` is recorded with the results so a later diff can tell
    "the site changed" from "the analyzer changed"; results are cached by (the HTML read, which HTML it is,
    name, version, settings), so bump ``version`` whenever the findings for the same HTML and settings change.

    ``timeout`` bounds one ``each_page`` call in seconds (``nitpicker analyze --timeout`` overrides it):
    a worker that does not answer in time is killed with whatever it started and replaced, and the page
    gets the error "timed out after N s". ``pages_per_worker`` recycles a worker after that many pages
    (``None``: never), which bounds what a leaking analyzer can hold.

    ``check(settings)`` validates the analyzer's settings and raises ``UsageError`` (one line, no absolute
    paths) when they cannot work. The engine calls it in the main process, only for the analyzers a run
    uses, before anything is written, so a bad setting fails the run once instead of on every page, and a
    bad ``[plugins.<name>]`` value in the config file does not stop commands that do not analyze (do not
    validate in ``configure``, which every command runs).

    ``reads`` says which HTML ``each_page`` gets as ``page.html``: ``"rendered"`` (the default: the DOM
    serialised after the page's scripts ran, what a visitor sees) or ``"source"`` (the HTML the server
    sent, what an HTML validator judges). A page whose archive lacks the server's HTML gets the rendered
    HTML instead, and ``page.html_kind`` says so. An analyzer that declares a setting named ``reads`` lets
    users choose (``--markup-reads rendered``); ``reading(settings)`` is the choice a run uses.

    ``rules()`` lists the rules the analyzer can report (``Rule``: id, title, priority, description, help
    URL, defect key), so each becomes a check listed with its description even on a commit where it found
    nothing. Optional: a rule that is missing from the list still becomes a check when it is found.
    """

    name: str = ""
    label: str = ""
    version: str = "0"
    columns: tuple[Column, ...] = ()
    concurrency: int | None = None
    order: int = 100
    timeout: float = 60.0
    #: run when no analyzer is named; costly ones (lighthouse) say False and run only when asked for
    default: bool = True
    pages_per_worker: int | None = 1000
    reads: str = "rendered"

    def reading(self, settings: Mapping[str, Any]) -> str:
        """The HTML a run with ``settings`` reads: the ``reads`` setting when set, else ``reads``."""
        kind = settings.get("reads") or self.reads
        if kind not in HTML_KINDS:
            raise UsageError(f"{self.name}: reads must be one of {', '.join(HTML_KINDS)}, not {kind!r}")
        return str(kind)

    def check(self, settings: Mapping[str, Any]) -> None:
        """Raise ``UsageError`` when ``settings`` cannot work. Main process, before an analyze run.

        A ``check`` with a keyword parameter ``analyzers`` also gets every registered analyzer (the
        ``extract`` analyzer refuses an extractor named as another analyzer's column)."""

    def rules(self) -> list[Rule]:
        """The rule catalogue: every rule this analyzer can report (default: none declared)."""
        return []

    def setup(self, settings: Mapping[str, Any]) -> None:
        """Acquire per-worker resources (a browser, a parser). Called once per worker."""

    def teardown(self) -> None:
        """Release what ``setup`` acquired."""

    each_page: Callable[[PageInput], PageReport | None] | None = None
    each_url: Callable[[str, bool, Mapping[str, Any]], PageReport | None] | None = None


@dataclass(frozen=True)
class Query:
    """A named, parameterised read of one archive commit.

    ``params`` is a JSON Schema ``properties`` mapping (type, default, enum, description); names in
    ``required`` must be given. ``func(archive, commit, **params)`` returns JSON-serialisable data.
    """

    name: str
    description: str
    func: Callable[..., Any]
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    order: int = 100

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": dict(self.params), "required": list(self.required)}


@dataclass(frozen=True)
class Sheet:
    """A report sheet: a name, its columns and a row generator over one archive commit.

    ``rows(reader, commit)`` yields one list per row in column order; a value may be a ``Cell`` to carry
    a note. With ``uses_report`` the call is ``rows(reader, commit, report)``, where ``report`` runs
    registered queries (``report.query(name, **params)``, ``report.stream(name, **params)``) and holds
    the run's ``options``. ``extra_columns(reader, commit, report)`` returns columns appended at render
    time (analyzer columns). The rest is presentation, honoured by every destination that can:
    ``freeze`` (rows, columns kept in view), ``widths`` (column → pixels), ``links`` (columns whose
    values are URLs) and ``formats``: conditional formats as plain mappings
    ``{"columns": (...), "when": "eq|ne|lt|gt|lte|gte|between|not_between|blank", "values": (...)}`` or
    ``{"columns": (...), "when": "text", "starts": (...), "ends": (...), "contains": (...)}`` (case-insensitive,
    any of them); a matching cell is highlighted as an error. ``number_formats`` maps a column to how its
    numbers show: ``"percent"`` (a fraction, 0.8269, shown as 82.7%). ``row_style(row)``, when given, names
    the colour of a whole row from its values: one of ``ROW_STYLES`` (the priority scale: critical and high
    red, medium orange, low yellow), or None for a plain row.
    """

    name: str
    columns: tuple[str, ...]
    rows: Callable[..., Any]
    order: int = 100
    description: str = ""
    uses_report: bool = False
    extra_columns: Callable[..., Any] | None = None
    freeze: tuple[int, int] = (1, 0)
    widths: Mapping[str, int] = field(default_factory=dict)
    links: tuple[str, ...] = ()
    formats: tuple[Mapping[str, Any], ...] = ()
    number_formats: Mapping[str, str] = field(default_factory=dict)
    row_style: Callable[[list[Any]], str | None] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.number_formats.values()) - set(NUMBER_FORMATS)
        if unknown:
            raise ValueError(f"sheet {self.name!r}: unknown number format {sorted(unknown)[0]!r}")


#: The number formats a sheet column can ask for (``Sheet.number_formats``).
NUMBER_FORMATS = ("percent",)

#: The colours a whole row can take (``Sheet.row_style``), named after the one priority scale.
ROW_STYLES = ("critical", "high", "medium", "low")


#: What a destination option holds. The three path types are checked before any work starts: ``file`` is
#: read (it must exist), ``output-file`` is written (its directory must take files), ``output-dir`` gets
#: files written into it (made with its parents); ``nitpicker pipeline`` stores them as absolute paths.
DESTINATION_OPTION_TYPES: dict[str, type] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "file": str,
    "output-file": str,
    "output-dir": str,
}
OUTPUT_TYPES = ("output-file", "output-dir")


@dataclass(frozen=True)
class DestinationOption:
    """One option of a report destination, declared once: the CLI derives ``--<destination>-<key>`` from it.

    The value reaches ``write(sheets, options)`` as ``options[key]``; ``default`` fills it when not given.
    """

    key: str
    type: str = "str"
    help: str = ""
    required: bool = False
    default: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _OPTION_KEY.fullmatch(self.key):
            raise ValueError(f"destination option {self.key!r}: a key is lower-case letters, digits, - and _")
        if self.type not in DESTINATION_OPTION_TYPES:
            raise ValueError(
                f"destination option {self.key}: unknown type {self.type!r} "
                f"(types: {', '.join(DESTINATION_OPTION_TYPES)})"
            )


@dataclass(frozen=True)
class Destination:
    """A report destination (Google Sheets, XLSX, CSV, …) that receives rendered sheets.

    ``write(sheets, options)`` gets ``(sheet, rows)`` pairs and the options dict: the declared ``options``
    by key, plus the run's own (``silent``, ``interactive``, ``dedupe_resources``, ``batch``). ``check(options)``,
    when given, runs before any work and raises ``UsageError`` for a value it cannot use (a malformed URL);
    ``target(options)`` names where the report goes in a run summary (default: the output path's name).
    With ``uses_report`` the call is ``write(sheets, options, report)``: ``report`` is the run's
    ``ReportContext`` (queries over the commit, the registered report sections), for a destination that
    composes its own document (HTML, PDF) rather than writing the sheets.
    """

    name: str
    write: Callable[..., Any]
    description: str = ""
    order: int = 100
    options: tuple[DestinationOption, ...] = ()
    check: Callable[[dict[str, Any]], None] | None = None
    target: Callable[[Mapping[str, Any]], str] | None = None
    uses_report: bool = False

    def __post_init__(self) -> None:
        options = tuple(self.options)
        if not all(isinstance(o, DestinationOption) for o in options):
            raise ValueError(f"destination {self.name}: options must be DestinationOption objects")
        keys = [o.key for o in options]
        if len(set(keys)) != len(keys):
            raise ValueError(f"destination {self.name}: an option key is declared twice")
        object.__setattr__(self, "options", options)  # a list is accepted and kept as a tuple

    def flag(self, key: str) -> str:
        """The command-line flag of option ``key``: ``--xlsx-file``."""
        return f"--{self.name}-{key}".replace("_", "-")

    def dest(self, key: str) -> str:
        """The click parameter name of option ``key``: ``to_xlsx_file`` (never a command's own, ``csv_dir``)."""
        return f"to_{self.name}_{key}".replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class ReportSection:
    """A section of the HTML and PDF reports (``register_report_sections``).

    ``render(report, lang)`` returns the section's body as an HTML fragment (escape what you insert:
    ``html.escape``), or ``None`` to leave the section out; ``report`` is the run's ``ReportContext``
    (``report.query(name, **params)``, ``report.commit``, ``report.options``) and ``lang`` the report's
    language (``en``, ``ja``). The title is ``titles[lang]`` when given, else ``title``; sections are ordered
    by ``order`` (the built-in ones are 10 to 90, the appendix 1000).
    """

    name: str
    title: str
    render: Callable[..., str | None]
    order: int = 100
    titles: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SECTION_NAME.fullmatch(self.name):
            raise ValueError(f"report section {self.name!r}: a name is lower-case letters, digits and -")

    def title_in(self, lang: str) -> str:
        """The section's title in ``lang``, English where not translated."""
        return str(self.titles.get(lang) or self.title)


_SECTION_NAME = re.compile(r"[a-z][a-z0-9-]*")


@dataclass(frozen=True)
class MenuLink:
    """A link in the viewer's navigation menu."""

    href: str
    label: str
    order: int = 100
