"""Every analyzer rule as a check `<analyzer>/<rule>`, its findings read from the commit's violations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from nitpicker_core import Analyzer, Check, CheckContext, Finding, Rule

#: the category of each built-in analyzer's checks; another analyzer's checks take its name
CATEGORIES = {
    "axe": "accessibility",
    "markup": "markup",
    "text": "text",
    "lighthouse": "performance",
    "main-contents": "content",
    "search": "content",
    "custom-search": "content",
    "extract": "content",
    "extract-source": "content",
}
OTHER = "other"  # the catch-all rule: rules found in the violations but missing from the catalogue
SKIPPED = "skipped"  # the engine's rule for checks an analyzer could not make on a page
DETAIL_LIMIT = 300
# What shifts between two crawls of an unchanged page: positions, nonces, generated ids.
_POSITIONS = re.compile(r"\s*\((?:sentence|line|column) \d+\)|\b\d+:\d+\b")
_NONCE = re.compile(r'\s+(?:nonce|data-reactid|data-v-[0-9a-f]+)(?:="[^"]*")?', re.IGNORECASE)
_GENERATED_ID = re.compile(
    r'(\s(?:id|for|aria-labelledby|aria-describedby|aria-controls)=")'
    r'([^"]*(?:\d{3,}|[0-9a-f]{8,}|:r[0-9a-z]+:)[^"]*)(")',
    re.IGNORECASE,
)
_MEASURED = re.compile(r"\s*\([^()]*\d[^()]*\)\s*$")  # lighthouse's displayValue ("(1.2 s)") on a message
_SPACE = re.compile(r"\s+")


def normalise(violation: dict[str, Any]) -> str:
    """A violation's detail that survives a re-crawl: its markup (or message) without positions or ids."""
    text = violation.get("snippet") or ""
    if text:
        text = _GENERATED_ID.sub(r"\1…\3", _NONCE.sub("", text))
    else:
        text = _MEASURED.sub("", _POSITIONS.sub("", violation.get("message") or ""))
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


def _findings(analyzer: str, rule: str | None, known: frozenset[str]) -> Any:
    """The findings function of one rule's check; ``rule`` None lists the rules missing from ``known``."""

    def findings(ctx: CheckContext) -> Iterator[Finding]:
        params = {"analyzer": analyzer, **({"rule": rule} if rule else {})}
        for row in ctx.query("violations", **params):
            if rule is None:
                if row["rule"] in known:
                    continue
                yield Finding(row["url"], f"{row['rule']}: {normalise(row)}")
            else:
                yield Finding(row["url"], normalise(row))

    return findings


def _i18n(rule: Rule) -> dict[str, dict[str, str]]:
    """The rule's translations, its Japanese fix the generic one where the rule has none of its own."""
    texts = {language: dict(fields) for language, fields in rule.i18n.items()}
    generic = (
        f"各指摘で示された要素について、ルールのヘルプページ（{rule.help_url}）に従って修正してください。"
        if rule.help_url
        else "各指摘で示されたページ上の要素またはテキストを修正してください。"
    )
    texts.setdefault("ja", {}).setdefault("fix", generic)
    return texts


def _check(analyzer: Analyzer, rule: Rule, findings: Any) -> Check:
    help_url = rule.help_url
    fix = rule.fix or (
        f"Follow the rule's help page ({help_url}) for the element named in each finding."
        if help_url
        else "Fix the element or text named in each finding on its page."
    )
    return Check(
        id=f"{analyzer.name}/{rule.id}",
        title=rule.title,
        category=CATEGORIES.get(analyzer.name, analyzer.name),
        priority=rule.priority,
        description=rule.description or rule.title,
        fix=fix,
        help_url=help_url,
        findings=findings,
        defect=rule.defect,
        analyzer=analyzer.name,
        type=rule.type,
        i18n=_i18n(rule),
    )


def analyzer_checks(analyzers: Iterable[Analyzer]) -> list[Check]:
    """One check per catalogued rule of each analyzer, plus its ``skipped`` and ``other`` checks."""
    checks: list[Check] = []
    for analyzer in analyzers:
        catalogue = [rule for rule in analyzer.rules() if rule.id not in (OTHER, SKIPPED)]
        known = frozenset(rule.id for rule in catalogue) | {SKIPPED}
        for rule in catalogue:
            checks.append(_check(analyzer, rule, _findings(analyzer.name, rule.id, known)))
        label = analyzer.label or analyzer.name
        checks.append(
            _check(
                analyzer,
                Rule(
                    SKIPPED,
                    f"{label}: pages not checked",
                    "info",
                    "Checks the analyzer could not make on a page (too large, too slow to parse): not a clean result.",
                    type="warning",
                    fix="Read why in each finding's detail; raise the analyzer's limits in its settings "
                    "if the pages should be checked, then analyze again.",
                    i18n={
                        "ja": {
                            "title": f"{analyzer.name}: チェックできなかったページ",
                            "description": "アナライザーがページをチェックできなかった箇所です（サイズが大きすぎる、"
                            "解析に時間がかかりすぎるなど）。問題がないという結果ではありません。",
                            "fix": "各指摘の詳細で理由を確認してください。チェックが必要なページであれば、アナライザーの"
                            "設定で上限を引き上げてから、もう一度解析してください。",
                        }
                    },
                ),
                _findings(analyzer.name, SKIPPED, known),
            )
        )
        checks.append(
            _check(
                analyzer,
                Rule(
                    OTHER,
                    f"{label}: other rules",
                    "medium",
                    "Findings of rules the analyzer did not list in its catalogue; each detail starts with the rule id.",
                    type="issue",
                    i18n={
                        "ja": {
                            "title": f"{analyzer.name}: その他のルール",
                            "description": "アナライザーのカタログに載っていないルールによる指摘です。各詳細はルール ID で始まります。",
                        }
                    },
                ),
                _findings(analyzer.name, None, known),
            )
        )
    return checks
