"""Checks: named, prioritised questions about a commit ("which internal links are broken?") and their findings."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core.errors import RegistrationError
from nitpicker_core.records import Finding

if TYPE_CHECKING:
    from nitpicker_core.check_context import CheckContext
    from nitpicker_core.elements import Where

__all__ = [
    "CHECK_TYPES",
    "PRIORITIES",
    "SEVERITY_PRIORITY",
    "Check",
    "Finding",
    "Rule",
    "fingerprint",
    "load_translations",
    "priority_of",
    "validate_check",
]

#: one scale for the whole product, most severe first
PRIORITIES = ("critical", "high", "medium", "low", "info")
#: what kind of finding a check reports: a defect to fix, something to look at, a possible improvement
CHECK_TYPES = ("issue", "warning", "opportunity")
#: the fields of a check a translation may give (``Check.i18n``)
TRANSLATED_FIELDS = ("title", "description", "fix")
#: analyzers' own severities on the one priority scale: axe's impacts, then markup/text/lighthouse's levels
SEVERITY_PRIORITY = {
    "critical": "critical",
    "serious": "high",
    "moderate": "medium",
    "minor": "low",
    "error": "high",
    "warning": "medium",
    "info": "low",
}
#: a check id: kebab-case, with one optional "/" for analyzer rules ("axe/image-alt")
CHECK_ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*(/[a-z0-9]+(-[a-z0-9]+)*)?$")


def priority_of(severity: str | None) -> str:
    """A violation's severity on the one priority scale (unknown severities count as medium)."""
    return SEVERITY_PRIORITY.get((severity or "").lower(), "medium")


@dataclass(frozen=True)
class Check:
    """A registered check: what it looks for, how bad it is, how to fix it, and how to list its findings.

    ``findings(ctx)`` yields the commit's ``Finding``s. Checks sharing a non-empty ``defect`` key find the
    same defect from different sources (crawl images without alt, ``axe/image-alt``) and are shown once.
    ``analyzer`` names the analyzer whose run the findings depend on: on a commit that analyzer never
    ran on, the check is "not analysed", never 0. ``type`` is one of ``CHECK_TYPES``. ``i18n`` holds
    translations by language code (``{"ja": {"title": …, "description": …, "fix": …}}``); a field a
    translation leaves out falls back to the English one (``text()``). ``link_target``: each finding is
    a link, its URL the page the link is on and its detail the target written there (or "TEXT → TARGET":
    the link to TARGET written with TEXT); issue lists then show each link's anchor text, position and the
    target's status. ``settings``: the keys of its plugin's
    settings (``register_settings``) its findings depend on, read with ``ctx.settings_for(plugin)``; a
    change of one makes the findings stored with a commit stale for this check only. ``page_facts(ctx)``
    (a crawl check's, optional): per-URL values of the pages list's content columns
    (``nitpicker_core.archive.page_facts.COLUMNS``) the check computed with its findings, URL → {column:
    value}; stored with the commit beside its findings, so the columns and the findings agree.
    ``element(finding)`` (optional): where on its page the element a finding is about stands, a
    ``nitpicker_core.Where`` (which stored HTML, and how to pick the element there) or None when that finding
    is about no element; issue lists then give each finding the line:col of that element, looked up when a
    page of findings is asked for.
    """

    id: str
    title: str
    category: str
    priority: str
    description: str
    fix: str
    help_url: str = ""
    findings: Callable[[CheckContext], Iterable[Finding]] | None = None
    defect: str = ""
    analyzer: str = ""
    order: int = 100
    type: str = "issue"
    i18n: Mapping[str, Mapping[str, str]] = field(default_factory=dict, hash=False, compare=False)
    link_target: bool = False
    settings: tuple[str, ...] = ()
    page_facts: Callable[[CheckContext], Mapping[str, Mapping[str, Any]]] | None = None
    element: Callable[[Finding], Where | None] | None = field(default=None, hash=False, compare=False)

    def text(self, name: str, language: str = "en") -> str:
        """The check's ``title``, ``description`` or ``fix`` in ``language``, English where not translated."""
        translated = self.i18n.get(language, {}).get(name) if language != "en" else None
        return translated or str(getattr(self, name))


@dataclass(frozen=True)
class Rule:
    """One rule of an analyzer's catalogue (``Analyzer.rules()``); becomes the check ``<analyzer>/<id>``."""

    id: str
    title: str
    priority: str
    description: str = ""
    help_url: str = ""
    defect: str = ""
    type: str = "issue"
    fix: str = ""
    i18n: Mapping[str, Mapping[str, str]] = field(default_factory=dict, hash=False, compare=False)


def load_translations(folder: str | Path) -> dict[str, dict[str, dict[str, str]]]:
    """A plugin's check translations: ``folder/<lang>.json`` files of ``{check id: {field: text}}``.

    Returns ``{check id: {lang: {field: text}}}``, ready for ``Check(i18n=…)`` / ``Rule(i18n=…)``; a
    missing folder gives ``{}``. Ids are as the plugin names them (a rule's own id, a crawl check's id).
    """
    found: dict[str, dict[str, dict[str, str]]] = {}
    path = Path(folder)
    if not path.is_dir():
        return found
    for file in sorted(path.glob("*.json")):
        for check_id, fields in json.loads(file.read_text(encoding="utf-8")).items():
            texts = {k: str(v) for k, v in fields.items() if k in TRANSLATED_FIELDS and v}
            found.setdefault(check_id, {})[file.stem] = texts
    return found


def validate_check(check: Any, plugin: str) -> None:
    """RegistrationError unless ``check`` is a well-formed ``Check`` (id, priority, category, findings)."""
    if not isinstance(check, Check):
        return  # the registry names the wrong type
    if check.priority not in PRIORITIES:
        raise RegistrationError(
            f"plugin {plugin!r} registered check {check.id!r} with priority {check.priority!r} "
            f"(one of {', '.join(PRIORITIES)})"
        )
    if check.type not in CHECK_TYPES:
        raise RegistrationError(
            f"plugin {plugin!r} registered check {check.id!r} with type {check.type!r} "
            f"(one of {', '.join(CHECK_TYPES)})"
        )
    if not isinstance(check.category, str) or not re.match(r"^[a-z0-9]+(-[a-z0-9]+)*$", check.category):
        raise RegistrationError(
            f"plugin {plugin!r} registered check {check.id!r} with an invalid category {check.category!r}"
        )
    if check.findings is not None and not callable(check.findings):
        raise RegistrationError(
            f"plugin {plugin!r} registered check {check.id!r} whose findings is not callable"
        )


def fingerprint(check_id: str, finding: Finding) -> str:
    """The identity of a finding across commits: sha256 hex of the check id, URL and detail."""
    text = "\0".join((check_id, finding.url, finding.detail))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
