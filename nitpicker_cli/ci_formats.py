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
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from nitpicker_cli.ci_findings import DEFAULT_GATE, Findings, Item, collect, gate, gated
from nitpicker_core import NitpickerError, UsageError, __version__, run_query
from nitpicker_core.pipeline import verdict

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, NitpickerPluginManager

FORMATS = ("text", "json", "junit", "sarif", "github")
CI_FORMATS = ("junit", "sarif", "github")
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
GITHUB_COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}
GITHUB_LIMIT = 1000  # annotations printed; the rest are counted in one notice
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT = "nitpickerFinding/v1"  # sha256 of check id, URL and detail: nitpicker_core.fingerprint
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


def _line(item: Item, compared: bool) -> str:
    state = f" [{item.state}]" if compared else ""
    return f"{item.where()}  {item.detail}{state}".rstrip()


def _xml(text: Any) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


@dataclass
class _Case:
    """One JUnit test case: ``outcome`` is "", "failure", "error" or "skipped"."""

    name: str
    classname: str
    outcome: str = ""
    attrs: dict[str, str] | None = None
    body: str = ""


def _check_case(
    found: Findings, specs: list[verdict.IssueSpec], row: dict[str, Any], quiet: list[str]
) -> _Case:
    """A check's test case: failed by its gated findings; its findings nobody gated are counted in ``quiet``."""
    name, classname = row["id"], f"nitpicker.{row['category'] or 'other'}"
    if row["state"] == "error":
        return _Case(name, classname, "error", {"type": "check-error", "message": row["error"] or ""})
    if row["state"] == "not_analysed":
        return _Case(name, classname, "skipped", {"message": "not analysed on this commit"})
    items = found.items.get(row["id"], [])
    hits = [item for item in items if gated(specs, row, item)]
    if not hits:
        if items:
            quiet.append(f"{row['id']} ({row['priority']}): {len(items)} findings, none gated")
        return _Case(name, classname)
    help_ = row.get("help") or {}
    body = [_line(item, found.compared) for item in hits]
    body += [""] + [f"{key}: {help_[key]}" for key in ("description", "fix", "help_url") if help_.get(key)]
    first = hits[0]
    message = (
        f"{len(hits)} {'finding' if len(hits) == 1 else 'findings'} of {row['title']} ({row['priority']}): "
        f"{first.where()} {first.detail}".rstrip()
    )
    return _Case(name, classname, "failure", {"type": row["priority"], "message": message}, "\n".join(body))


def _gate_case(check: dict[str, Any]) -> _Case:
    """One --fail-on spec of the verdict as a test case of the `quality-gate` suite."""
    if not check["failed"]:
        return _Case(check["check"], "nitpicker.gate")
    failing = f" ({', '.join(check['failing'])})" if check.get("failing") else ""
    return _Case(
        check["check"],
        "nitpicker.gate",
        "failure",
        {"type": "fail-on", "message": f"--fail-on {check['check']}: {check['value']}{failing}"},
    )


def junit(
    found: Findings, fail_on: list[str] | tuple[str, ...] = (), result: dict[str, Any] | None = None
) -> str:
    """JUnit XML: one test suite per category, one test case per check; a check with gated findings fails.

    Checks of analyzers that never ran on the commit are skipped, a check that failed is an error.
    ``result`` (the verdict) adds a first `quality-gate` suite with one test case per --fail-on spec.
    """
    specs = gate(fail_on)
    answer = found.answer
    suites: list[tuple[str, list[_Case], list[str]]] = []
    if result is not None:
        suites.append(("quality-gate", [_gate_case(check) for check in result["checks"]], []))
    categories: dict[str, list[dict[str, Any]]] = {}
    for row in answer["items"]:
        categories.setdefault(row["category"] or "other", []).append(row)
    for category in sorted(categories):
        quiet: list[str] = []
        suites.append(
            (category, [_check_case(found, specs, row, quiet) for row in categories[category]], quiet)
        )
    properties = {
        "commit": answer["commit"],
        "base": answer["base"],
        "gate": ", ".join(fail_on) or f"{DEFAULT_GATE} (no --fail-on: findings of priority high or worse)",
    }
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname() or "localhost"
    root = ElementTree.Element("testsuites")
    for index, (name, cases, quiet) in enumerate(suites):
        counts = {
            kind: sum(1 for case in cases if case.outcome == kind) for kind in ("failure", "error", "skipped")
        }
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            {
                "name": name,
                "package": "nitpicker",
                "id": str(index),
                "tests": str(len(cases)),
                "failures": str(counts["failure"]),
                "errors": str(counts["error"]),
                "skipped": str(counts["skipped"]),
                "time": "0",
                "timestamp": stamp,
                "hostname": host,
            },
        )
        props = ElementTree.SubElement(suite, "properties")
        for key, value in properties.items():
            ElementTree.SubElement(
                props, "property", {"name": key, "value": "" if value is None else str(value)}
            )
        for case in cases:
            element = ElementTree.SubElement(
                suite, "testcase", {"name": case.name, "classname": case.classname, "time": "0"}
            )
            if case.outcome:
                outcome = ElementTree.SubElement(
                    element, case.outcome, {k: _xml(v) for k, v in (case.attrs or {}).items()}
                )
                outcome.text = _xml(case.body) if case.body else None
        ElementTree.SubElement(suite, "system-out").text = _xml("\n".join(quiet))
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
        "properties": {
            "priority": row["priority"],
            "category": row["category"],
            "type": found.type_of(row),
            "sources": row["sources"],
            "tags": [row["category"], found.type_of(row)],
        },
    }
    if (help_.get("help_url") or "").startswith(("http://", "https://")):
        rule["helpUri"] = help_["help_url"]
    return rule


def _result(found: Findings, row: dict[str, Any], rule_index: int, item: Item) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": item.url}}
    if item.line:
        location["region"] = {"startLine": item.line, **({"startColumn": item.col} if item.col else {})}
    properties = {
        "priority": row["priority"],
        "category": row["category"],
        "type": found.type_of(row),
        "check": item.check,
        "detail": item.detail,
    }
    if item.line and item.html:  # an element's line: in the rendered HTML, or in the HTML as sent
        properties["html"] = item.html
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
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "nitpicker", "version": __version__, "rules": rules}},
                "results": results,
                "properties": {"commit": found.answer["commit"], "base": found.answer["base"]},
            }
        ],
    }
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does (`escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """A workflow command's property value (`escapeProperty`): `:` and `,` end a property otherwise."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(found: Findings, limit: int = GITHUB_LIMIT) -> str:
    """GitHub Actions annotations: one `::error`, `::warning` or `::notice` per finding, most severe first."""
    lines: list[str] = []
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
        lines.append(
            f"::notice title=nitpicker::{_escape_data(f'{total - limit} more findings not annotated')} "
            f"(nitpicker issues --format sarif lists all {total})"
        )
    elif not total:
        lines.append(f"::notice title=nitpicker::no findings on commit {found.answer['commit']}")
    return "\n".join(lines) + "\n"


def render(
    fmt: str,
    pm: NitpickerPluginManager,
    reader: ArchiveReader,
    queries: Any,
    answer: dict[str, Any],
    base: str | None = None,
    fail_on: list[str] | tuple[str, ...] = (),
    result: dict[str, Any] | None = None,
) -> str:
    """The issues ``answer`` in one of ``CI_FORMATS``, its findings read while ``reader`` is open."""
    return _formatted(fmt, collect(pm, reader, queries, answer, base), fail_on, result)


def _formatted(
    fmt: str, found: Findings, fail_on: list[str] | tuple[str, ...], result: dict[str, Any] | None
) -> str:
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


def write_reports(
    pm: NitpickerPluginManager,
    archive: Path,
    commit: int,
    files: dict[str, Path],
    fail_on: list[str],
    result: dict[str, Any] | None,
) -> None:
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
