"""`issues --format junit|sarif|github`, `pipeline --junit/--sarif` and exit 3 for a failed gate, through the CLI.

The JUnit XML is validated against two JUnit XSDs and the SARIF against the official SARIF 2.1.0 JSON schema,
all vendored in tests/data (sources in tests/data/README.md).
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from archives import SITE, build_archive, page_html
from lxml import etree
from support import run_cli

from nitpicker_cli import ci_findings, ci_formats
from nitpicker_core import Anchor, Finding, ScrapeResult, fingerprint

DATA = Path(__file__).parent.parent / "data"
XSDS = ("junit-windyroad.xsd", "junit-jenkins-xunit-10.xsd")


def pages(extra: list[str]) -> list[ScrapeResult]:
    """/ links to /about, /missing (404) and ``extra``; each anchor at line 3, columns 10, 30, 50…"""
    out = []
    for path, links, status in (
        ("/", ["/about", "/missing", *extra], 200),
        ("/about", ["/"], 200),
        ("/missing", [], 404),
        ("/gone", [], 404),
    ):
        out.append(
            ScrapeResult(
                url=SITE + path,
                status=status,
                status_text="OK",
                content_type="text/html",
                content_length=100,
                metadata={"title": path, "lang": "en"},
                html=page_html(path, "text", links),
                anchors=[
                    Anchor(SITE + href, href, raw_href=href, line=3, col=10 + 20 * i)
                    for i, href in enumerate(links)
                ],
            )
        )
    return out


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """Commit 1: / links to the 404 /missing; commit 2: / links to the 404 /gone too (a new broken link)."""
    target = tmp_path_factory.mktemp("ci") / "site.nitpicker"
    build_archive(target, pages([]))
    build_archive(target, pages(["/gone"]))
    return target


def issues(archive: Path, *args: str):
    return run_cli("issues", archive.name, *args, cwd=archive.parent)


def validate_junit(text: str) -> etree._Element:
    doc = etree.fromstring(text.encode("utf-8"))
    for name in XSDS:
        schema = etree.XMLSchema(etree.parse(str(DATA / name)))
        assert schema.validate(doc), (name, schema.error_log)
    return doc


def validate_sarif(text: str) -> dict:
    log = json.loads(text)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, errors[0]
    return log


def case(doc: etree._Element, suite: str, name: str) -> etree._Element:
    (found,) = doc.xpath(f"testsuite[@name='{suite}']/testcase[@name='{name}']")
    return found


def test_junit_with_a_gate_fails_the_gated_checks_and_names_the_gate(archive):
    result = issues(archive, "--format", "junit", "--fail-on", "new:high")
    assert result.returncode == 3, result.stderr  # the gate failed
    assert result.stderr == "nitpicker: --fail-on new:high: 1 findings (broken-link)\n"
    doc = validate_junit(result.stdout)
    assert doc.xpath("testsuite/@name")[0] == "quality-gate"  # the gate first, then one suite per category
    assert (
        case(doc, "quality-gate", "new:high").find("failure").get("message")
        == "--fail-on new:high: 1 (broken-link)"
    )
    failure = case(doc, "links", "broken-link").find("failure")
    assert failure.get("type") == "high"
    # only the new broken link is gated: /missing persists since commit 1
    assert failure.get("message") == (
        "1 finding of Internal links to pages that answer 4xx (high): "
        "http://site.test/:3:50 http://site.test/gone"
    )
    assert failure.text.splitlines()[0] == "http://site.test/:3:50  http://site.test/gone [new]"
    assert "fix: Point each link at the page's current URL" in failure.text
    # a check with findings that the gate does not count passes, and says so in the suite's output
    assert len(case(doc, "metadata", "description-missing")) == 0
    (out,) = doc.xpath("testsuite[@name='metadata']/system-out")
    assert "description-missing (medium): 2 findings, none gated" in out.text
    skipped = doc.xpath("testsuite/testcase[skipped]/@name")
    assert "axe/area-alt" in skipped  # analyzers never run on the commit: skipped, never passed
    for suite in doc.xpath("testsuite"):
        counted = {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}
        assert counted == {
            "tests": len(suite.xpath("testcase")),
            "failures": len(suite.xpath("testcase[failure]")),
            "errors": len(suite.xpath("testcase[error]")),
            "skipped": len(suite.xpath("testcase[skipped]")),
        }


def test_junit_without_a_gate_fails_findings_of_priority_high_or_worse(archive):
    result = issues(archive, "--format", "junit")
    assert result.returncode == 0, result.stderr  # no gate: the report, not the exit code, says what failed
    doc = validate_junit(result.stdout)
    assert not doc.xpath("testsuite[@name='quality-gate']")
    failed = doc.xpath("testsuite/testcase[failure]/@name")
    assert failed == ["broken-link"]  # the only check of priority high or worse with findings
    body = case(doc, "links", "broken-link").find("failure").text.splitlines()
    assert body[:2] == [
        "http://site.test/:3:50  http://site.test/gone [new]",
        "http://site.test/:3:30  http://site.test/missing [persisting]",
    ]


def test_sarif_validates_and_carries_rules_levels_locations_and_fingerprints(archive):
    result = issues(archive, "--format", "sarif")
    assert result.returncode == 0, result.stderr
    log = validate_sarif(result.stdout)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    answer = json.loads(issues(archive, "--format", "json").stdout)
    assert ids == [r["id"] for r in answer["items"] if r["findings"]]  # rows with findings, most severe first
    broken = rules[ids.index("broken-link")]
    assert broken["defaultConfiguration"] == {"level": "error"}
    assert broken["shortDescription"] == {"text": "Internal links to pages that answer 4xx"}
    assert (
        broken["helpUri"] == "https://developers.google.com/search/docs/crawling-indexing/http-network-errors"
    )
    assert broken["help"]["text"].startswith("Point each link at the page's current URL")
    assert {k: broken["properties"][k] for k in ("priority", "category", "type")} == {
        "priority": "high",
        "category": "links",
        "type": "issue",
    }
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in rules}
    assert levels["description-missing"] == "warning" and levels["missing-referrer-policy"] == "note"
    results = {(r["ruleId"], r["properties"]["detail"]): r for r in run["results"]}
    assert all(
        r["level"] == levels[r["ruleId"]] and r["ruleIndex"] == ids.index(r["ruleId"]) for r in run["results"]
    )
    gone = results[("broken-link", "http://site.test/gone")]
    assert gone["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "http://site.test/"},
                "region": {"startLine": 3, "startColumn": 50},
            }
        }
    ]
    assert (gone["baselineState"], gone["properties"]["state"]) == ("new", "new")
    missing = results[("broken-link", "http://site.test/missing")]
    assert missing["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 30}
    assert (missing["baselineState"], missing["properties"]["state"]) == ("unchanged", "persisting")
    expected = hashlib.sha256(
        "\0".join(("broken-link", "http://site.test/", "http://site.test/missing")).encode()
    ).hexdigest()
    assert missing["partialFingerprints"] == {ci_formats.FINGERPRINT: expected}
    assert expected == fingerprint("broken-link", Finding("http://site.test/", "http://site.test/missing"))
    page = next(r for (rule, _), r in results.items() if rule == "description-missing")
    # an element check: where the missing description belongs, the <head>, in the HTML it was read from
    assert page["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "startColumn": 32}
    assert page["properties"]["html"] == "rendered"
    policy = next(r for (rule, _), r in results.items() if rule == "missing-referrer-policy")
    assert (
        "region" not in policy["locations"][0]["physicalLocation"]
    )  # a header: the page itself, no position
    assert "html" not in policy["properties"]
    # the same finding on the first commit has the same fingerprint, and no state without a base
    first = validate_sarif(issues(archive, "--format", "sarif", "--commit", "1").stdout)["runs"][0]["results"]
    same = next(r for r in first if r["properties"]["detail"] == "http://site.test/missing")
    assert same["partialFingerprints"] == missing["partialFingerprints"]
    assert "baselineState" not in same and "state" not in same["properties"]


def test_github_annotations_one_per_finding_most_severe_first(archive):
    result = issues(archive, "--format", "github")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "::error title=broken-link (high)::new: http://site.test/:3:50: Internal links to pages that answer 4xx: "
        "http://site.test/gone",
        "::error title=broken-link (high)::persisting: http://site.test/:3:30: Internal links to pages that answer "
        "4xx: http://site.test/missing",
    ]
    sarif = json.loads(issues(archive, "--format", "sarif").stdout)["runs"][0]["results"]
    assert len(lines) == len(sarif)
    commands = [line.split(" ", 1)[0] for line in lines]
    assert commands == sorted(commands, key=["::error", "::warning", "::notice"].index)


def test_github_escaping_and_the_cap():
    """Properties escape `%`, CR, LF, `:` and `,`; messages `%`, CR and LF (GitHub's toolkit rules)."""
    row = {
        "id": "odd-check",
        "title": "Odd",
        "priority": "medium",
        "category": "x",
        "sources": ["odd-check"],
        "state": "ok",
        "findings": 3,
    }
    items = [
        ci_findings.Item("odd-check", f"http://site.test/{n}", "50% off,\r\nnow: yes", "new", "f")
        for n in range(3)
    ]
    found = ci_findings.Findings({"commit": 2, "base": None, "items": [row]}, {"odd-check": items}, {})
    lines = ci_formats.github(found, limit=2).splitlines()
    assert lines[0] == "::warning title=odd-check (medium)::http://site.test/0: Odd: 50%25 off,%0D%0Anow: yes"
    assert ci_formats._escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert (
        lines[2]
        == "::notice title=nitpicker::1 more findings not annotated (nitpicker issues --format sarif "
        "lists all 3)"
    )
    assert len(lines) == 3


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--format", "junit", "--fail-on", "new:high"], 3, "nitpicker: --fail-on new:high: 1 findings"),
        (["--format", "sarif", "--fail-on", "new:critical"], 0, ""),
        (["--format", "junit", "--fail-on", "High"], 1, "nitpicker: error: --fail-on must be"),
        (["--format", "xml"], 1, "nitpicker: error: Invalid value for '--format'"),
        (
            ["--json", "--format", "sarif"],
            1,
            "nitpicker: error: --json is --format json: give one of --json and --format sarif",
        ),
        (["--table", "--format", "github"], 1, "nitpicker: error: --table is --format text"),
    ],
)
def test_exit_codes_tell_a_failed_gate_from_an_error(archive, args, code, said):
    result = issues(archive, *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.startswith(said) and len(result.stderr.splitlines()) == (1 if said else 0)
    if code == 1:
        assert result.stdout == ""


def test_json_and_table_are_aliases_of_format(archive):
    assert issues(archive, "--json").stdout == issues(archive, "--format", "json").stdout
    assert issues(archive, "--table").stdout == issues(archive, "--format", "text").stdout
    assert issues(archive, "--format", "text").stdout.startswith("commit 2 against base 1\n")


@pytest.mark.parametrize("command", [(), ("issues",), ("pipeline",)])
def test_help_has_the_exit_code_table(command):
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    table = result.stdout.split("Exit codes:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in table[:5]] == ["0", "1", "2", "3", "130"]
    assert (
        table[3].split(None, 1)[1] == "the quality gate failed: a --fail-on of `issues` or `pipeline` holds"
    )


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.sarif"
    ci_formats.write_atomic(target, "old\n")
    with pytest.raises(UnicodeEncodeError):
        ci_formats.write_atomic(target, "new " + "\ud800")  # not encodable: fails half-way through the write
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]


def test_pipeline_refuses_an_unwritable_report_path_before_crawling(site, tmp_path):
    result = run_cli(
        "pipeline",
        f"{site}/pipeline-site/",
        "-o",
        "site.nitpicker",
        "--no-analyze",
        "--junit",
        "nowhere/junit.xml",
        cwd=tmp_path,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == "nitpicker: error: cannot write junit.xml: its directory does not exist\n"
    assert not (tmp_path / "site.nitpicker").exists()


@pytest.mark.browser
def test_pipeline_writes_junit_and_sarif_after_a_run_whose_gate_failed(site, tmp_path):
    (tmp_path / "out").mkdir()
    result = run_cli(
        "pipeline",
        f"{site}/pipeline-site/",
        "-o",
        "site.nitpicker",
        "--no-image",
        "--parallels",
        "3",
        "--no-analyze",
        "--fail-on",
        "new:broken-link",
        "--junit",
        "out/junit.xml",
        "--sarif",
        "out/site.sarif",
        "--json",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 3, result.stderr  # the gate stopped the run; the reports were still written
    assert json.loads(result.stdout)["verdict"]["passed"] is False
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "junit.xml",
        "site.sarif",
    ]  # no temporaries
    doc = validate_junit((tmp_path / "out" / "junit.xml").read_text(encoding="utf-8"))
    failure = case(doc, "links", "broken-link").find("failure")
    html = urllib.request.urlopen(f"{site}/pipeline-site/").read().decode()
    line_no, line = next((n, text) for n, text in enumerate(html.splitlines(), 1) if 'href="missing"' in text)
    col = line.index('<a href="missing"') + 1
    assert (
        failure.text.splitlines()[0] == f"{site}/pipeline-site/:{line_no}:{col}  {site}/pipeline-site/missing"
    )  # no base: no state
    assert case(doc, "quality-gate", "new:broken-link").find("failure") is not None
    log = validate_sarif((tmp_path / "out" / "site.sarif").read_text(encoding="utf-8"))
    (broken,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "broken-link"]
    assert broken["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": f"{site}/pipeline-site/"},
        "region": {"startLine": line_no, "startColumn": col},
    }
