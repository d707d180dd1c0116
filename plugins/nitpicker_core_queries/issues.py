"""The `issues` and `issue-urls` queries: every registered check's findings, new, fixed and persisting."""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    CHECK_TYPES,
    COUNT_DEFINITIONS,
    PRIORITIES,
    Check,
    CheckContext,
    Finding,
    Query,
    UsageError,
    check_commit,
    check_registry,
    config_of,
    count_totals,
    fingerprint,
    indexing,
    query_registry,
    url_share,
)
from nitpicker_core.archive import aggregates, findings_store, pagediff

from .common import PAGING, page_of
from .defects import DefectKey, key_of, lifecycle
from .element_rows import with_elements
from .link_rows import with_links

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, NitpickerPluginManager

STATES = ("new", "persisting", "fixed")
# fixed findings on a page gone since the base (an error now, or no longer crawled) are "gone", not fixed
GONE = "gone"
_ORDER = (*STATES, GONE)
MAX_GONE_SCAN = 1_000_000  # a check's fixed findings read whole to tell the gone ones from the fixed
# What issue-urls lists by default: the commit's findings (the number `issues` shows); fixed ones on request.
CURRENT = ("new", "persisting")


def _wanted(state: str | None) -> tuple[str, ...]:
    """The finding states a `state` parameter asks for: one, every one (``all``) or the commit's own."""
    if state == "all":
        return STATES
    return (state,) if state else CURRENT


BASE_NOTE = "new findings may come from the tool, not the site"


base_of = findings_store.base_of


# A long-lived process (viewer, MCP server) asks many times with one plugin manager: its check registry (400
# checks, analyzer catalogues included) is built once per set of plugins, not once per query.
_REGISTRIES: weakref.WeakKeyDictionary[Any, tuple[Any, Any, Any]] = weakref.WeakKeyDictionary()


def _registries(pm: NitpickerPluginManager) -> tuple[Any, Any]:
    """The check and query registries of ``pm``, rebuilt when its plugins changed."""
    key = (
        tuple(sorted(name for name, _ in pm.list_name_plugin())) if hasattr(pm, "list_name_plugin") else None
    )
    try:
        cached = _REGISTRIES.get(pm)
    except TypeError:  # not weakly referable: no cache
        return check_registry(pm), query_registry(pm)
    if cached is None or key is None or cached[0] != key:
        cached = (key, check_registry(pm), query_registry(pm))
        _REGISTRIES[pm] = cached
    return cached[1], cached[2]


@dataclass
class Outcome:
    """One check's findings on one commit: None when its analyzer never ran there; ``error`` when it failed."""

    found: set[Finding] | None  # a Finding hashes by (url, detail): within one check, its fingerprint
    error: str = ""


class Lifecycle:
    """Evaluates checks on a commit, its base and (for `regressed`) the commit before the base, once each."""

    def __init__(
        self, pm: NitpickerPluginManager, reader: ArchiveReader, commit: int, base: Any = None
    ) -> None:
        self.reader, self.commit = reader, commit
        self.checks, self._queries = _registries(pm)
        if base is None:
            self.base = base_of(reader, commit)
        else:
            try:
                wanted = check_commit(base)
            except UsageError:
                raise UsageError(f"parameter 'base' must be a commit id or \"HEAD\", got {base!r}") from None
            self.base = reader.resolve(wanted)
        self.prior = base_of(reader, self.base) if self.base is not None and self.base != commit else None
        self._config = config_of(pm)  # the settings checks read (Check.settings): the run's, else defaults
        self._contexts: dict[int, CheckContext] = {}
        self._outcomes: dict[tuple[str, int], Outcome] = {}
        self._gone: frozenset[str] | None = None
        # findings stored with the commits (when their tokens still match) are read, not recomputed
        self.stored = findings_store.Stored(reader)
        codes = indexing.code_versions(pm, self.checks) if self.stored.available else {}
        self._tokens = findings_store.Tokens(reader, codes) if self.stored.available else None

    def gone_urls(self) -> frozenset[str]:
        """The base's pages that are gone at the commit: an error status or a failed fetch now (a deleted
        page), or no longer in the crawl. Their vanished findings are "gone with the page", not "fixed"."""
        if self._gone is None:
            if self.base is None or self.base == self.commit:
                self._gone = frozenset()
            else:
                removed = self.reader.diff(self.base, self.commit)["removed"]
                self._gone = frozenset([*self.reader.gone(self.base, self.commit), *removed])
        return self._gone

    def gone_url(self, url: str) -> frozenset[str]:
        """``url`` alone when it is one of ``gone_urls`` (two page reads, not the whole diff)."""
        if self._gone is not None or self.base is None or self.base == self.commit:
            return self.gone_urls() & {url}
        before, now = self.reader.page(url, self.base), self.reader.page(url, self.commit)
        return (
            frozenset([url])
            if before is not None and (now is None or pagediff.is_gone(before, now))
            else frozenset()
        )

    def token(self, check: Check, commit: int) -> str | None:
        return None if self._tokens is None else self._tokens.of(check, commit)

    def stored_row(self, check: Check, commit: int) -> tuple[str, int, int, str | None] | None:
        """The check's stored (token, findings, urls, error) on the commit, when still valid."""
        if not self.stored.available:
            return None
        return self.stored.valid(commit, check.id, self.token(check, commit))

    def counts(self, check: Check) -> dict[str, Any] | None:
        """One check's counts from what is stored (no finding loaded); None when something is not stored."""
        now = self.stored_row(check, self.commit)
        if now is None or now[3] is not None:
            return None
        result: dict[str, Any] = {"findings": now[1], "urls": now[2]}
        if self.base is None:
            return {**result, "new": now[1], "persisting": 0, "fixed": 0, "regressed": 0}
        if self.base == self.commit:
            return {**result, "new": 0, "persisting": now[1], "fixed": 0, "regressed": 0}
        if check.analyzer and not self.context(self.base).analysed(check.analyzer):
            return {**result, "new": None, "persisting": None, "fixed": None, "regressed": None}
        then = self.stored_row(check, self.base)
        if then is None or then[3] is not None:
            return None
        delta = self.stored.delta(self.commit, self.base, check.id, f"{now[0]}\n{then[0]}")
        if delta is not None:
            return {**result, **delta}
        both = self.stored.persisting(self.commit, self.base, check.id)
        regressed = 0
        if self.prior is not None and now[1] > both:
            if self.stored_row(check, self.prior) is None:
                return None
            regressed = self.stored.regressed(self.commit, self.base, self.prior, check.id)
        return {
            **result,
            "new": now[1] - both,
            "persisting": both,
            "fixed": then[1] - both,
            "regressed": regressed,
        }

    def context(self, commit: int) -> CheckContext:
        if commit not in self._contexts:
            self._contexts[commit] = CheckContext(self.reader, commit, self._queries, self._config)
        return self._contexts[commit]

    def outcome(self, check: Check, commit: int) -> Outcome:
        key = (check.id, commit)
        if key not in self._outcomes:
            self._outcomes[key] = self._evaluate(check, commit)
        return self._outcomes[key]

    def _evaluate(self, check: Check, commit: int) -> Outcome:
        ctx = self.context(commit)
        if check.analyzer and not ctx.analysed(check.analyzer):
            return Outcome(None)
        if check.findings is None:
            return Outcome(set())
        stored = self.stored_row(check, commit)
        if stored is not None and stored[3] is None:
            return Outcome(self.stored.findings(commit, check.id))
        try:  # one check's failure is that check's row, never the whole answer
            found = set(check.findings(ctx))
            wrong = next((f for f in found if not isinstance(f, Finding)), None)
            if wrong is not None:
                raise TypeError(f"findings gave a {type(wrong).__name__}, not a nitpicker_core.Finding")
            return Outcome(found)
        except Exception as exc:  # noqa: BLE001 - plugin code
            return Outcome(None, f"{type(exc).__name__}: {exc}".splitlines()[0])

    def tool_changes(self, analyzers: Iterable[str]) -> dict[str, str]:
        """Analyzers that ran on both commits with another version or settings: name → what changed."""
        if self.base is None or self.base == self.commit:
            return {}
        now, then = self.context(self.commit).runs(), self.context(self.base).runs()
        changed = {}
        for name in sorted(set(analyzers)):
            a, b = then.get(name), now.get(name)
            if a and b and (a["version"], a["settings_hash"]) != (b["version"], b["settings_hash"]):
                what = (
                    f"{a['version']} → {b['version']}" if a["version"] != b["version"] else "other settings"
                )
                changed[name] = what
        return changed

    def missing_on_base(self, analyzers: Iterable[str]) -> list[str]:
        """Analyzers that ran on the commit but not on the base: their checks have no new/fixed counts."""
        if self.base is None or self.base == self.commit:
            return []
        now, then = self.context(self.commit), self.context(self.base)
        return [name for name in sorted(set(analyzers)) if now.analysed(name) and not then.analysed(name)]

    def states(self, check: Check) -> dict[str, Any]:
        """new / persisting / fixed findings (and the regressed subset of new) of one check."""
        now = self.outcome(check, self.commit)
        result: dict[str, Any] = {"now": now, "before": None, "sets": None, "regressed": set()}
        if now.found is None:
            return result
        if self.base is None:  # a first crawl: everything is new
            result["sets"] = {"new": now.found, "persisting": set(), "fixed": set()}
            return result
        before = self.outcome(check, self.base)
        result["before"] = before
        if before.found is None:
            return result
        a, b = before.found, now.found
        result["sets"] = {"new": b - a, "persisting": a & b, "fixed": a - b}
        if self.prior is not None and result["sets"]["new"]:
            prior = self.outcome(check, self.prior).found or set()
            result["regressed"] = result["sets"]["new"] & prior
        return result

    def groups(self) -> list[list[Check]]:
        """Checks grouped by their defect key (a check without one is its own group), in registry order."""
        grouped: dict[str, list[Check]] = {}
        for check in self.checks:
            # a check whose id is another's defect key joins that row: the key names the row
            grouped.setdefault(check.defect or check.id, []).append(check)
        # the crawl's own check first: it is there whatever analyzers ran
        return [sorted(g, key=lambda c: (bool(c.analyzer), c.id)) for g in grouped.values()]

    def find(self, check_id: str) -> list[Check]:
        """The checks behind a row id (a check id or a shared defect key); UsageError naming the closest."""
        group = next((g for g in self.groups() if len(g) > 1 and (g[0].defect or g[0].id) == check_id), None)
        if group is not None:  # a shared defect key names its row, even where a source has the same id
            return group
        if check_id in self.checks:  # one source of a shared defect lists only its own findings
            return [self.checks[check_id]]
        known = sorted(set(self.checks.names()) | {c.defect for c in self.checks if c.defect})
        close = difflib.get_close_matches(check_id, known, n=3, cutoff=0.5) or known[:3]
        raise UsageError(f"no check {check_id!r}" + (f"; closest: {', '.join(close)}" if close else ""))


def _count(sets: dict[str, set[Any]] | None, state: str) -> int | None:
    return None if sets is None else len(sets[state])


def _urls(findings: Iterable[Finding]) -> set[str]:
    return {f.url for f in findings}


def _merged(life: Lifecycle, group: list[Check]) -> dict[str, Any]:
    """Counts of a group of checks; a merged group (shared defect key) counts defects, each found by any source."""
    if len(group) > 1:
        key = key_of(group)
        fast = _merged_stored(life, group) if key.of is None else _plain_stored(life, group, key)
        if fast is not None:
            return fast
        counts = lifecycle(life, group, lambda check, commit: life.outcome(check, commit).found).counts()
        return {**counts, "sources": {c.id: _merged(life, [c]) for c in group}}
    fast = life.counts(group[0])
    if fast is not None:
        return {"state": "ok", "error": None, **fast}
    s = life.states(group[0])
    now = s["now"]
    return {
        "state": "error" if now.error else "not_analysed" if now.found is None else "ok",
        "error": now.error or None,
        "findings": None if now.found is None else len(now.found),
        "urls": None if now.found is None else len(_urls(now.found)),
        **{state: _count(s["sets"], state) for state in STATES},
        "regressed": None if s["sets"] is None else len(s["regressed"]),
    }


def _plain_stored(life: Lifecycle, group: list[Check], key: DefectKey) -> dict[str, Any] | None:
    """A merged row's counts when its one analysed source is a crawl check whose details are the defect keys."""
    analysed = [c for c in group if not c.analyzer or life.context(life.commit).analysed(c.analyzer)]
    if not key.plain or len(analysed) != 1 or analysed[0].analyzer:
        return None
    counts = life.counts(analysed[0])
    if counts is None:
        return None
    return {"state": "ok", "error": None, **counts, "sources": {c.id: _merged(life, [c]) for c in group}}


def _merged_stored(life: Lifecycle, group: list[Check]) -> dict[str, Any] | None:
    """A merged per-page group's URL counts by SQL on the stored findings; None unless every source is stored.

    Like ``defects.lifecycle``: the sources analysed now find the defects, those also analysed on the base
    tell which were there before.
    """
    now_ids: list[str] = []
    compared: list[str] = []
    for check in group:
        if check.analyzer and not life.context(life.commit).analysed(check.analyzer):
            continue
        row = life.stored_row(check, life.commit)
        if row is None or row[3] is not None:
            return None
        now_ids.append(check.id)
        if life.base is None or life.base == life.commit:
            compared.append(check.id)
        elif not check.analyzer or life.context(life.base).analysed(check.analyzer):
            then = life.stored_row(check, life.base)
            if then is None or then[3] is not None:
                return None
            compared.append(check.id)
    if not now_ids:
        return {
            "state": "not_analysed",
            "error": None,
            "findings": None,
            "urls": None,
            **dict.fromkeys(STATES),
            "regressed": None,
            "sources": {c.id: _merged(life, [c]) for c in group},
        }
    store = life.stored
    if compared == now_ids and len(now_ids) == 1:  # one source analysed: its own URL counts, stored
        single = _single_source(life, life.checks[now_ids[0]])
        if single is not None:
            return {**single, "sources": {c.id: _merged(life, [c]) for c in group}}
    urls = store.urls(life.commit, now_ids)
    counts: dict[str, Any] = dict.fromkeys([*STATES, "regressed"])
    if compared:
        if life.base is None:
            counts = {"new": urls, "persisting": 0, "fixed": 0, "regressed": 0}
        elif life.base == life.commit:
            counts = {"new": 0, "persisting": urls, "fixed": 0, "regressed": 0}
        else:
            before = store.urls(life.base, compared)
            both = store.shared_urls(life.commit, life.base, now_ids, compared)
            regressed = 0
            if life.prior is not None and urls > both:
                for check in group:
                    if (
                        check.id in now_ids
                        and life.stored_row(check, life.prior) is None
                        and (not check.analyzer or life.context(life.prior).analysed(check.analyzer))
                    ):
                        return None  # the commit before the base is not stored: computed in memory
                regressed = store.regressed_urls(life.commit, life.base, life.prior, now_ids, compared)
            counts = {"new": urls - both, "persisting": both, "fixed": before - both, "regressed": regressed}
    return {
        "state": "ok",
        "error": None,
        "findings": urls,
        "urls": urls,
        **counts,
        "sources": {c.id: _merged(life, [c]) for c in group},
    }


def _single_source(life: Lifecycle, check: Check) -> dict[str, Any] | None:
    """A merged row's counts when one source alone was analysed: its stored URL counts (None if not stored)."""
    now = life.stored_row(check, life.commit)
    if now is None:
        return None
    counts: dict[str, Any] = {"new": now[2], "persisting": 0, "fixed": 0, "regressed": 0}
    if life.base == life.commit:
        counts = {"new": 0, "persisting": now[2], "fixed": 0, "regressed": 0}
    elif life.base is not None:
        then = life.stored_row(check, life.base)
        delta = (
            None
            if then is None
            else life.stored.delta(life.commit, life.base, check.id, f"{now[0]}\n{then[0]}", by_url=True)
        )
        if delta is None:
            return None
        counts = delta
    return {"state": "ok", "error": None, "findings": now[2], "urls": now[2], **counts}


def _row(
    life: Lifecycle, group: list[Check], changed: dict[str, str], missing: list[str], lang: str = "en"
) -> dict[str, Any]:
    lead = group[0]
    counts = _merged(life, group)
    gone = _gone(life, group, counts)
    counts = {**counts, "gone": gone}
    if gone:
        counts["fixed"] -= gone
    notes = [f"{c.analyzer} {changed[c.analyzer]}: {BASE_NOTE}" for c in group if c.analyzer in changed]
    # a merged row still compares what its other sources found: a defect only this analyzer finds is new
    absent = "what only it finds counts as new" if len(group) > 1 else "nothing to compare"
    notes += [f"{c.analyzer} did not run on the base: {absent}" for c in group if c.analyzer in missing]
    notes = list(dict.fromkeys(notes))  # an analyzer with several sources in the row is named once
    return {
        "id": (lead.defect or lead.id) if len(group) > 1 else lead.id,
        "title": lead.text("title", lang),
        "category": lead.category,
        "priority": _priority(group, counts.get("sources")),
        "type": min(
            (c.type for c in group), key=CHECK_TYPES.index
        ),  # a merged defect: its sources' most serious
        "sources": [c.id for c in group],
        "found_by": _found_by(group, counts),
        "link": all(c.link_target for c in group),
        "located": not all(c.link_target for c in group) and _locator(group) is not None,
        **{k: v for k, v in counts.items() if k != "sources"},
        "source_counts": counts.get("sources"),
        "base_note": "; ".join(notes) if notes else None,
        "help": {
            "description": lead.text("description", lang),
            "fix": lead.text("fix", lang),
            "help_url": lead.help_url,
        },
    }


def _gone(life: Lifecycle, group: list[Check], counts: dict[str, Any]) -> int | None:
    """Of the row's fixed findings (a merged row: URLs), those on pages gone since the base (``gone_urls``):
    they vanished with their page, nothing was fixed."""
    if counts.get("fixed") is None:
        return None
    urls = life.gone_urls() if counts["fixed"] else frozenset()
    if not urls:
        return 0
    then: set[Finding] = set()
    now: set[Finding] = set()
    for check in group:
        before = life.outcome(check, life.base).found if life.base is not None else None
        if before is None:
            continue
        then |= before
        now |= life.outcome(check, life.commit).found or set()
    if len(group) == 1:
        return sum(1 for f in then - now if f.url in urls)
    still = {f.url for f in now}
    return len({f.url for f in then if f.url in urls and f.url not in still})


def _found_by(group: list[Check], counts: dict[str, Any]) -> list[str]:
    """The sources with findings on the commit (a merged row's other sources ran and found nothing, or never ran)."""
    if len(group) == 1:
        return [group[0].id] if counts.get("findings") else []
    sources = counts.get("sources") or {}
    return [c.id for c in group if (sources.get(c.id) or {}).get("findings")]


def _priority(group: list[Check], sources: dict[str, dict[str, Any]] | None) -> str:
    """A row's priority: its most severe source that found something, else that ran, else of them all.

    A merged row takes no priority from an analyzer that never ran on the commit (nor, when another source
    found the defect, from one that ran and found nothing).
    """
    if sources:
        for wanted in (lambda c: c["state"] == "ok" and c["findings"], lambda c: c["state"] == "ok"):
            chosen = [c.priority for c in group if c.id in sources and wanted(sources[c.id])]
            if chosen:
                return min(chosen, key=PRIORITIES.index)
    return min((c.priority for c in group), key=PRIORITIES.index)


def share_of(archive: ArchiveReader, commit: int) -> dict[str, Any]:
    """The denominator of every "% of URLs": the commit's internal URLs, from the summary digest."""
    total = count_totals(aggregates.value(archive, commit, "summary"))["internal_urls"]
    return {"count": "internal_urls", "urls": total, "definition": COUNT_DEFINITIONS["internal_urls"]}


def _issues(
    archive: ArchiveReader,
    commit: int,
    pm: NitpickerPluginManager,
    base: str | None = None,
    priority: str | None = None,
    category: str | None = None,
    state: str | None = None,
    lang: str | None = None,
) -> dict[str, Any]:
    life = Lifecycle(pm, archive, commit, base)
    groups = life.groups()
    if priority:  # the most severe a group can be; its row's own priority is checked once counted
        worst = PRIORITIES.index(priority)
        groups = [g for g in groups if min(PRIORITIES.index(c.priority) for c in g) <= worst]
    if category:
        groups = [g for g in groups if g[0].category == category]
    analyzers = {c.analyzer for g in groups for c in g if c.analyzer}
    changed, missing = life.tool_changes(analyzers), life.missing_on_base(analyzers)
    rows = [_row(life, g, changed, missing, lang or "en") for g in groups]
    if priority:
        rows = [r for r in rows if PRIORITIES.index(r["priority"]) <= PRIORITIES.index(priority)]
    denominator = share_of(archive, commit)
    for row in rows:  # "% of URLs": the check's URLs among the internal URLs
        row["share"] = url_share(row["urls"], denominator["urls"])
    if state:
        rows = [r for r in rows if r[state]]
    rows.sort(key=lambda r: (PRIORITIES.index(r["priority"]), -(r["findings"] or 0), r["id"]))
    notes = []
    if life.base is None:
        notes.append("no earlier commit: every finding is new")
    if changed:
        tools = ", ".join(f"{name} ({what})" for name, what in changed.items())
        notes.append(f"analyzers ran with other versions or settings on the base: {tools}; {BASE_NOTE}")
    if missing:
        notes.append(f"not analysed on the base, so without new/fixed: {', '.join(missing)}")
    note = "; ".join(notes) or None
    return {
        "commit": commit,
        "base": life.base,
        "base_note": note,
        "share_of": denominator,
        "total": len(rows),
        "items": rows,
    }


def _issue_urls(
    archive: ArchiveReader,
    commit: int,
    pm: NitpickerPluginManager,
    check: str,
    base: str | None = None,
    state: str | None = None,
    url: str | None = None,
    limit: int = 100,
    offset: int = 0,
    lines: bool = True,
) -> dict[str, Any]:
    life = Lifecycle(pm, archive, commit, base)
    sources = life.find(check)
    # only the lists with fixed findings tell the gone ones apart; one page's list asks about that page alone
    if state not in ("fixed", GONE, "all"):
        gone: frozenset[str] = frozenset()
    else:
        gone = life.gone_urls() if url is None else life.gone_url(url)

    def listed(state: str | None, limit: int, offset: int) -> dict[str, Any]:
        if len(sources) > 1:
            return _merged_urls(life, sources, state, url, limit, offset)
        return _source_urls(life, sources[0], state, url, limit, offset)

    if gone and state in ("fixed", "gone", "all"):
        # the fixed findings on pages gone since the base are "gone": every one read, then paged here
        whole = listed(state if state == "all" else "fixed", MAX_GONE_SCAN, 0)
        for item in whole["items"]:
            if item["state"] == "fixed" and item["url"] in gone:
                item["state"] = "gone"
        items = [item for item in whole["items"] if state == "all" or item["state"] == state]
        items.sort(key=lambda r: (_ORDER.index(r["state"]), r["url"], r["detail"]))
        result = {
            "check_state": whole["check_state"],
            **page_of(items[offset : offset + limit], len(items), limit, offset),
        }
    elif state == "gone":
        result = listed("fixed", 0, 0)
        result.update(page_of([], 0, limit, offset))
    else:
        result = listed(state, limit, offset)
    then = None if life.base is None or life.base == life.commit else life.base
    commits = {"new": commit, "persisting": commit, "fixed": then, "gone": then}
    locate = _locator(sources)
    if all(c.link_target for c in sources):
        with_links(archive, commits, result["items"])
    elif locate is not None and lines:
        with_elements(archive, commits, result["items"], locate)
    return {"check": check, "commit": commit, "base": life.base, **result}


def _locator(group: list[Check]) -> Any:
    """How to find the element of a row's findings: its first source's that says (``Check.element``)."""
    return next((c.element for c in group if c.element is not None), None)


def _merged_urls(
    life: Lifecycle, group: list[Check], state: str | None, url: str | None, limit: int, offset: int
) -> dict[str, Any]:
    """A shared defect's rows: one per defect (page, image, id…), the sources that found it listed on it."""
    key, row_id = key_of(group), group[0].defect or group[0].id
    analysed = [c for c in group if not c.analyzer or life.context(life.commit).analysed(c.analyzer)]
    if url is None and key.plain and len(analysed) == 1 and not analysed[0].analyzer:
        # the crawl's check alone ran: its findings are the defects, paged through the stored key
        paged = _stored_page(life, analysed[0], state, limit, offset)
        if paged is not None:
            for item in paged["items"]:
                item.update(
                    check=row_id,
                    fingerprint=fingerprint(row_id, Finding(item["url"], key(item["url"], item["detail"]))),
                )
            return {"check_state": "ok", **paged}
    found = _on_url(life, url) if url is not None else (lambda c, commit: life.outcome(c, commit).found)
    cycle = lifecycle(life, group, found)
    items = [
        item
        for item in cycle.items(row_id, group, None if state == "all" else state)
        if item["state"] in _wanted(state)
    ]
    items.sort(key=lambda r: (STATES.index(r["state"]), r["url"], r["detail"]))
    return {
        "check_state": "ok" if cycle.analysed else "not_analysed",
        **page_of(items[offset : offset + limit], len(items), limit, offset),
    }


def _on_url(life: Lifecycle, url: str) -> Any:
    """``found(check, commit)`` on one page: stored findings read by key, else the check's own, filtered."""

    def found(check: Check, commit: int) -> set[Finding] | None:
        if check.analyzer and not life.context(commit).analysed(check.analyzer):
            return None
        stored = life.stored_row(check, commit)
        if stored is not None and stored[3] is None:
            details = life.stored.details_on(commit, check.id, url) or set()
            return {Finding(url, detail) for detail in details}
        every = life.outcome(check, commit).found
        return None if every is None else {f for f in every if f.url == url}

    return found


def _source_urls(
    life: Lifecycle, source: Check, state: str | None, url: str | None, limit: int, offset: int
) -> dict[str, Any]:
    """One check's findings, each its own row."""
    if url is None:
        paged = _stored_page(life, source, state, limit, offset)
        if paged is not None:
            return {"check_state": "ok", **paged}
    items: list[dict[str, Any]] = []
    on_url = _stored_url(life, source, url) if url is not None else None
    if on_url is not None:  # one page's findings through the stored key: no check evaluated
        items = [item for item in on_url if item["state"] in _wanted(state)]
        analysed = True
    else:
        s = life.states(source)
        analysed = s["now"].found is not None
        sets = s["sets"] or {"new": set(), "persisting": set(s["now"].found or ()), "fixed": set()}
        for name in _wanted(state):
            items += [
                _item(source, f, name, f in s["regressed"]) for f in sets[name] if url is None or f.url == url
            ]
    items.sort(key=lambda r: (STATES.index(r["state"]), r["url"], r["detail"]))
    return {
        "check_state": "ok" if analysed else "not_analysed",
        **page_of(items[offset : offset + limit], len(items), limit, offset),
    }


def _item(source: Check, finding: Finding, state: str, regressed: bool) -> dict[str, Any]:
    return {
        "url": finding.url,
        "state": state,
        "detail": finding.detail,
        "check": source.id,
        "sources": [source.id],
        "regressed": regressed,
        "fingerprint": fingerprint(source.id, finding),
    }


def _stored_page(
    life: Lifecycle, source: Check, state: str | None, limit: int, offset: int
) -> dict[str, Any] | None:
    """One page of a check's findings read through the stored key, state by state; None unless all stored."""
    counts = life.counts(source)
    if counts is None or counts["new"] is None:
        return None
    base = None if life.base is None or life.base == life.commit else life.base
    if base is None:  # a first crawl (all new) or the commit against itself (all persisting)
        counts = {
            **counts,
            "new": counts["findings"] if life.base is None else 0,
            "persisting": 0 if life.base is None else counts["findings"],
            "fixed": 0,
        }
    wanted = _wanted(state)
    total = sum(counts[name] for name in wanted)
    items: list[dict[str, Any]] = []
    skip = offset
    for name in wanted:
        if len(items) >= limit:
            break
        if skip >= counts[name]:
            skip -= counts[name]
            continue
        if base is None:
            rows = life.stored.rows(life.commit, None, source.id, "new", limit - len(items), skip)
        else:
            rows = life.stored.rows(life.commit, base, source.id, name, limit - len(items), skip)
        skip = 0
        regressed = _regressed(life, source, rows) if name == "new" and counts["regressed"] else set()
        items += [
            _item(source, Finding(url, detail), name, (url, detail) in regressed) for url, detail in rows
        ]
    return page_of(items, total, limit, offset)


def _stored_url(life: Lifecycle, source: Check, url: str) -> list[dict[str, Any]] | None:
    """The check's findings on ``url`` in every state, by seeks in the stored sets; None unless all stored."""
    counts = life.counts(source)
    if counts is None or counts["new"] is None:
        return None

    def details(commit: int | None) -> set[str] | None:
        return None if commit is None else life.stored.details_on(commit, source.id, url)

    now = details(life.commit)
    if now is None:
        return None
    base = None if life.base is None or life.base == life.commit else life.base
    if base is None:  # a first crawl (all new) or the commit against itself (all persisting)
        states = {"new" if life.base is None else "persisting": now}
        prior: set[str] = set()
    else:
        then = details(base)
        earlier = details(life.prior) if life.prior is not None and counts["regressed"] else set()
        if then is None or earlier is None:
            return None
        states, prior = {"new": now - then, "persisting": now & then, "fixed": then - now}, earlier
    return [
        _item(source, Finding(url, detail), name, name == "new" and detail in prior)
        for name, found in states.items()
        for detail in sorted(found)
    ]


def _regressed(life: Lifecycle, source: Check, rows: list[tuple[str, str]]) -> set[tuple[str, str]]:
    if life.prior is None or not rows:
        return set()
    prior = {(f.url, f.detail) for f in life.outcome(source, life.prior).found or set()}
    return {row for row in rows if row in prior}


_BASE = {
    "base": {
        "type": "string",
        "description": "commit to compare with (default: the previous complete commit); "
        "the commit itself makes every finding persisting",
    }
}

QUERIES = [
    Query(
        "issues",
        "Every registered check with its findings on the commit, most severe first: priority, type (issue, "
        "warning, opportunity), category, affected URLs and their `share` (% of URLs: of the internal URLs "
        "counted in `share_of`), and how many findings are new, fixed, persisting, gone (vanished with their "
        "page: an error status now, or no longer crawled) and regressed (fixed before the base, back now) "
        "against the base; checks finding the same defect are one row with their sources; `link` and "
        "`located` say whether issue-urls gives its findings a line:col (a link's anchor, the element). "
        "An analyzer check on a commit that analyzer never ran on is not_analysed (findings null), not 0.",
        _issues,
        {
            **_BASE,
            "priority": {
                "type": "string",
                "enum": list(PRIORITIES),
                "description": "only checks of this priority or more severe",
            },
            "category": {"type": "string", "description": "only this category (links, metadata, …)"},
            "state": {
                "type": "string",
                "enum": [*STATES, GONE, "regressed"],
                "description": "only checks with findings in this state (gone: vanished with their page)",
            },
            "lang": {
                "type": "string",
                "description": "language of each check's title, description and fix "
                "(e.g. ja); English where a check has no translation",
            },
        },
        order=20,
    ),
    Query(
        "issue-urls",
        "The findings of one check (or of one shared defect) on the commit with their URL, detail and state "
        "against the base (new or persisting: as many as `issues` counts), new first; `state` fixed lists the "
        "base's findings fixed since, gone those that vanished with their page, `all` every state. A shared defect is one row per defect (an image, an "
        "id, a page) with the checks that found it in `sources`; a link check's rows add the target, the "
        "anchor's text and line:col, and the target's status (or error kind); the rows of a check about an "
        "element of the page (`located` in `issues`: title, description, H1, canonical, meta robots, "
        "hreflang, pagination, images…) add that element's `line`/`col` in the stored HTML the finding was "
        "made from (`html`: rendered or sent), every such element's line:col in `position`, and the tag "
        "(`element`; where a missing one belongs, e.g. head, for a finding about its absence).",
        _issue_urls,
        {
            "check": {"type": "string", "description": "check id (e.g. broken-link, axe/image-alt)"},
            **_BASE,
            "state": {
                "type": "string",
                "enum": [*STATES, GONE, "all"],
                "description": "only findings in this state (default: new and persisting, the commit's own; "
                "gone: the base's findings on pages that are gone since, an error now or no longer crawled)",
            },
            "url": {"type": "string", "description": "only the findings on this exact URL"},
            "lines": {
                "type": "boolean",
                "default": True,
                "description": "an element check's rows with their element's line:col (each row's page read "
                "and scanned); false leaves them out, for lists that show no line",
            },
            **PAGING,
        },
        required=("check",),
        order=21,
    ),
]
