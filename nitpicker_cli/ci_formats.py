"""What CI systems read from `nitpicker issues` and `pipeline`: JUnit XML, SARIF 2.1.0, GitHub Actions annotations."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from nitpicker_core import PRIORITIES, NitpickerError, UsageError, __version__, check_registry, run_query
from nitpicker_core.pipeline import verdict

FORMATS = ("text", "json", "junit", "sarif", "github")
CI_FORMATS = ("junit", "sarif", "github")
# What fails in JUnit without --fail-on: what SARIF calls an error, findings of priority high or worse.
DEFAULT_GATE = "high"
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
GITHUB_COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}
GITHUB_LIMIT = 1000  # annotations printed; the rest are counted in one notice
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT = "nitpickerFinding/v1"  # sha256 of check id, URL and detail: nitpicker_core.fingerprint
_PAGE = 10000  # issue-urls' largest page
# Characters XML 1.0 cannot hold at all: a finding's detail copied from a page may contain them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def choose_format(fmt: str | None, as_json: bool, as_table: bool) -> str | None:
    """The --format asked for, --json and --table being its aliases; None leaves it to the terminal."""
    for flag, given, same in (("--json", as_json, "json"), ("--table", as_table, "text")):
        if given and fmt not in (None, same):
            raise UsageError(f"{flag} is --format {same}: give one of {flag} and --format {fmt}")
        if given:
            fmt = same
    return fmt


@dataclass
class Item:
    """One current finding of an issues row, as the CI formats show it."""

    check: str  # the check that found it: the row's id, or one source of a merged defect
    url: str
    detail: str
    state: str  # new, persisting or regressed
    fingerprint: str
    line: int | None = None
    col: int | None = None

    def where(self) -> str:
        return f"{self.url}:{self.line}:{self.col}" if self.line else self.url


@dataclass
class Findings:
    """The issues answer, the current findings of each row with findings, and each check's type."""

    answer: dict[str, Any]
    items: dict[str, list[Item]]
    types: dict[str, str]

    @property
    def compared(self) -> bool:
        """Whether there was a base: only then are new, persisting and regressed told apart."""
        return self.answer["base"] is not None

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [row for row in self.answer["items"] if self.items.get(row["id"])]

    def type_of(self, row: dict[str, Any]) -> str:
        return str(row.get("type") or self.types.get(row["id"]) or self.types.get(row["sources"][0]) or "issue")


class _Positions:
    """line:col of a link in its source page's HTML, read from the page-detail query's anchors."""

    def __init__(self, reader: Any, queries: Any, commit: int) -> None:
        self.reader, self.queries, self.commit = reader, queries, commit
        self.pages: dict[str, dict[str, tuple[int, int]]] = {}

    def of(self, url: str, detail: str) -> tuple[int | None, int | None]:
        if not detail.startswith(("http://", "https://")):  # link checks' detail is the target URL
            return None, None
        if url not in self.pages:
            try:
                page = run_query(self.queries, self.reader, "page-detail",
                                 {"url": url, "inbound_limit": 1, "resource_limit": 1}, self.commit)
            except NitpickerError:  # not a page of the commit: no position
                page = {"outbound": []}
            first: dict[str, tuple[int, int]] = {}
            for anchor in page["outbound"]:
                if anchor.get("line"):
                    first.setdefault(anchor["href"], (anchor["line"], anchor["col"]))
            self.pages[url] = first
        return self.pages[url].get(detail, (None, None))


def collect(pm: Any, reader: Any, queries: Any, answer: dict[str, Any], base: str | None = None) -> Findings:
    """Every current finding of the rows of ``answer`` (the issues query's), read through issue-urls."""
    commit = answer["commit"]
    positions = _Positions(reader, queries, commit)
    items: dict[str, list[Item]] = {}
    for row in answer["items"]:
        if row["state"] != "ok" or not row["findings"]:
            continue
        found: list[Item] = []
        offset: int | None = 0
        while offset is not None:
            page = run_query(queries, reader, "issue-urls",
                             {"check": row["id"], "base": base, "limit": _PAGE, "offset": offset}, commit)
            for entry in page["items"]:
                if entry["state"] == "fixed":  # gone from the site: nothing to report
                    continue
                line, col = entry.get("line"), entry.get("col")
                if line is None:
                    line, col = positions.of(entry["url"], entry["detail"])
                found.append(Item(entry["check"], entry["url"], entry["detail"],
                                  "regressed" if entry.get("regressed") else entry["state"], entry["fingerprint"],
                                  line, col))
            offset = page.get("next_offset")
        items[row["id"]] = found
    return Findings(answer, items, {check.id: check.type for check in check_registry(pm)})


def gate(fail_on: list[str] | tuple[str, ...]) -> list[verdict.IssueSpec]:
    """The issue specs deciding which findings fail: those of --fail-on, else ``DEFAULT_GATE``."""
    specs = [verdict.parse(text) for text in fail_on] or [verdict.parse(DEFAULT_GATE)]
    return [spec for spec in specs if isinstance(spec, verdict.IssueSpec)]


def gated(specs: list[verdict.IssueSpec], row: dict[str, Any], item: Item) -> bool:
    """Whether a finding is one a spec counts (as `verdict.issue_failures` counts its row)."""
    for spec in specs:
        if spec.new and item.state == "persisting":
            continue
        if spec.check and spec.check not in (row["id"], item.check):
            continue
        if spec.priority and PRIORITIES.index(row["priority"]) > PRIORITIES.index(spec.priority):
            continue
        return True
    return False


def _line(item: Item, compared: bool) -> str:
    state = f" [{item.state}]" if compared else ""
    return f"{item.where()}  {item.detail}{state}".rstrip()


def _xml(text: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def junit(found: Findings, fail_on: list[str] | tuple[str, ...] = (), result: dict[str, Any] | None = None) -> str:
    """JUnit XML: one test suite per category, one test case per check; a check with gated findings fails.

    Checks of analyzers that never ran on the commit are skipped, a check that failed is an error.
    ``result`` (the verdict) adds a `quality-gate` suite with one test case per --fail-on spec.
    """
    specs = gate(fail_on)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname() or "localhost"
    answer = found.answer
    properties = {"commit": answer["commit"], "base": answer["base"],
                  "gate": ", ".join(fail_on) or f"{DEFAULT_GATE} (no --fail-on: findings of priority high or worse)"}
    root = ElementTree.Element("testsuites")
    suites: list[tuple[str, list[tuple[str, str, dict[str, str], str]]]] = []
    if result is not None:
        suites.append(("quality-gate", [
            (check["check"], "gate", {"type": "fail-on", "message": f"--fail-on {check['check']}: {check['value']}"
                                      + (f" ({', '.join(check['failing'])})" if check.get("failing") else "")}
             if check["failed"] else {}, "failure" if check["failed"] else "")
            for check in result["checks"]]))
    categories: dict[str, list[dict[str, Any]]] = {}
    for row in answer["items"]:
        categories.setdefault(row["category"] or "other", []).append(row)
    quiet: dict[str, list[str]] = {}
    for category in sorted(categories):
        cases = []
        for row in categories[category]:
            if row["state"] == "error":
                cases.append((row["id"], category, {"type": "check-error", "message": row["error"] or ""}, "error"))
                continue
            if row["state"] == "not_analysed":
                cases.append((row["id"], category, {"message": "not analysed on this commit"}, "skipped"))
                continue
            items = found.items.get(row["id"], [])
            hits = [item for item in items if gated(specs, row, item)]
            if not hits:
                if items:
                    quiet.setdefault(category, []).append(f"{row['id']} ({row['priority']}): {len(items)} findings, "
                                                          "none gated")
                cases.append((row["id"], category, {}, ""))
                continue
            body = [_line(item, found.compared) for item in hits]
            help_ = row.get("help") or {}
            body += [""] + [f"{k}: {help_[k]}" for k in ("description", "fix", "help_url") if help_.get(k)]
            first = hits[0]
            cases.append((row["id"], category, {
                "type": row["priority"],
                "message": f"{len(hits)} {'finding' if len(hits) == 1 else 'findings'} of {row['title']} "
                           f"({row['priority']}): {first.where()} {first.detail}".rstrip(),
                "body": "\n".join(body)}, "failure"))
        suites.append((category, cases))
    for index, (name, cases) in enumerate(suites):
        counts = {kind: sum(1 for case in cases if case[3] == kind) for kind in ("failure", "error", "skipped")}
        suite = ElementTree.SubElement(root, "testsuite", {
            "name": name, "package": "nitpicker", "id": str(index), "tests": str(len(cases)),
            "failures": str(counts["failure"]), "errors": str(counts["error"]), "skipped": str(counts["skipped"]),
            "time": "0", "timestamp": stamp, "hostname": host})
        props = ElementTree.SubElement(suite, "properties")
        for key, value in properties.items():
            ElementTree.SubElement(props, "property", {"name": key, "value": "" if value is None else str(value)})
        for case_name, group, attrs, kind in cases:
            case = ElementTree.SubElement(suite, "testcase",
                                          {"name": case_name, "classname": f"nitpicker.{group}", "time": "0"})
            if kind:
                attrs = dict(attrs)
                body = attrs.pop("body", "")
                outcome = ElementTree.SubElement(case, kind, {k: _xml(v) for k, v in attrs.items()})
                outcome.text = _xml(body) if body else None
        ElementTree.SubElement(suite, "system-out").text = _xml("\n".join(quiet.get(name, [])))
        ElementTree.SubElement(suite, "system-err").text = ""
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _rule(found: Findings, row: dict[str, Any]) -> dict[str, Any]:
    help_ = row.get("help") or {}
    rule: dict[str, Any] = {
        "id": row["id"],
        "shortDescription": {"text": row["title"]},
        "fullDescription": {"text": help_.get("description") or row["title"]},
        "help": {"text": "\n".join(filter(None, (help_.get("fix"), help_.get("help_url")))) or row["title"]},
        "defaultConfiguration": {"level": LEVELS[row["priority"]]},
        "properties": {"priority": row["priority"], "category": row["category"], "type": found.type_of(row),
                       "sources": row["sources"], "tags": [row["category"], found.type_of(row)]},
    }
    if (help_.get("help_url") or "").startswith(("http://", "https://")):
        rule["helpUri"] = help_["help_url"]
    return rule


def _result(found: Findings, row: dict[str, Any], rule_index: int, item: Item) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": item.url}}
    if item.line:
        location["region"] = {"startLine": item.line, **({"startColumn": item.col} if item.col else {})}
    properties = {"priority": row["priority"], "category": row["category"], "type": found.type_of(row),
                  "check": item.check, "detail": item.detail}
    result: dict[str, Any] = {
        "ruleId": row["id"],
        "ruleIndex": rule_index,
        "level": LEVELS[row["priority"]],
        "kind": "fail",
        "message": {"text": f"{row['title']}: {item.detail}" if item.detail else row["title"]},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {FINGERPRINT: item.fingerprint},
        "properties": properties,
    }
    if found.compared:
        properties["state"] = item.state
        result["baselineState"] = "unchanged" if item.state == "persisting" else "new"
    return result


def sarif(found: Findings) -> str:
    """SARIF 2.1.0: one rule per check with findings (its help text), one result per finding."""
    rules, results = [], []
    for row in found.rows:
        rules.append(_rule(found, row))
        results += [_result(found, row, len(rules) - 1, item) for item in found.items[row["id"]]]
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "nitpicker", "version": __version__, "rules": rules}},
        "results": results,
        "properties": {"commit": found.answer["commit"], "base": found.answer["base"]},
    }]}
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (`escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """A workflow command's property value (`escapeProperty`): `:` and `,` end a property otherwise."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(found: Findings, limit: int = GITHUB_LIMIT) -> str:
    """GitHub Actions annotations: one `::error`, `::warning` or `::notice` per finding, most severe first."""
    lines = []
    total = sum(len(found.items[row["id"]]) for row in found.rows)
    for row in found.rows:
        command = GITHUB_COMMANDS[LEVELS[row["priority"]]]
        title = _escape_property(f"{row['id']} ({row['priority']})")
        for item in found.items[row["id"]]:
            if len(lines) == limit:
                break
            state = f"{item.state}: " if found.compared else ""
            text = f"{state}{item.where()}: {row['title']}" + (f": {item.detail}" if item.detail else "")
            lines.append(f"::{command} title={title}::{_escape_data(text)}")
    if total > limit:
        lines.append(f"::notice title=nitpicker::{_escape_data(f'{total - limit} more findings not annotated')} "
                     f"(nitpicker issues --format sarif lists all {total})")
    elif not total:
        lines.append(f"::notice title=nitpicker::no findings on commit {found.answer['commit']}")
    return "\n".join(lines) + "\n"


def render(fmt: str, pm: Any, reader: Any, queries: Any, answer: dict[str, Any], base: str | None = None,
           fail_on: list[str] | tuple[str, ...] = (), result: dict[str, Any] | None = None) -> str:
    """The issues ``answer`` in one of ``CI_FORMATS``, its findings read while ``reader`` is open."""
    return _formatted(fmt, collect(pm, reader, queries, answer, base), fail_on, result)


def _formatted(fmt: str, found: Findings, fail_on: list[str] | tuple[str, ...], result: dict[str, Any] | None) -> str:
    if fmt == "junit":
        return junit(found, fail_on, result)
    if fmt == "sarif":
        return sarif(found)
    return github(found)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it: never a half-written file."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_reports(pm: Any, archive: Path, commit: int, files: dict[str, Path], fail_on: list[str],
                  result: dict[str, Any] | None) -> None:
    """`pipeline --junit FILE --sarif FILE`: the issues of the run's commit, each file written atomically."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.query import query_registry

    queries = query_registry(pm)
    with open_archive(archive) as reader:
        answer = run_query(queries, reader, "issues", {}, commit)
        found = collect(pm, reader, queries, answer)
    texts = {fmt: _formatted(fmt, found, fail_on, result) for fmt in files}
    for fmt, path in files.items():
        try:
            write_atomic(path, texts[fmt])
        except OSError as exc:  # checked before the run, but a disk can fill up since
            raise NitpickerError(f"cannot write {path.name}: {(exc.strerror or str(exc)).lower()}") from None
