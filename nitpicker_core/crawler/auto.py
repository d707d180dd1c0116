"""``--render auto``: a page is rendered only when its template's rendered sample showed what JavaScript changes.

Pages are grouped by a structural signature of the HTML as sent (``template_key``): the body's skeleton (the
elements down to ``SKELETON_DEPTH``, tag, id and class tokens, digits dropped, a run of alike siblings kept
once) and the scripts (each external one's path, each inline one's code with its strings and numbers
dropped). The first page of a group is its sample: it is rendered, and its two versions are compared as the
JavaScript-dependence checks compare them (``html_facts.js_dependence``). The group's other pages wait for
that verdict: rendered when the sample differed, read from the HTML as sent (as ``--render never`` reads
them) when it did not. A group whose sample could not be compared is rendered.

Sites where pages share no template degrade, bounded: once more than ``MIN_GROUPS`` groups exist and they
are more than ``GROUP_SHARE`` of the pages seen, every page from then on is rendered (samples would cost as
much as rendering everything).

Each page's decision (``Decision.as_fact``: mode, template, rendered, reason) is stored with the commit's row
of the page (``ScrapeResult.render_decision``, commit_page.render_decision), not with its content-addressed
state: another crawl reaching the same state took its own decision, or none.

A continued commit (``--resume`` and the other modes that go on with one) keeps its groups: each stored
sample's decision holds its group's verdict (``verdict``), read back by ``restore`` before anything is
fetched, so a template settled before the interruption is never sampled again, and a degraded crawl stays
degraded.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import lxml.etree
import lxml.html

SKELETON_DEPTH = 3  # elements below <body> read for the signature (body's children are depth 1)
MIN_GROUPS = 50  # templates any site may have before the degradation rule applies
GROUP_SHARE = 0.5  # more groups than this share of the pages seen: render every page from then on
TEXT_SHARE = 90  # a sample whose HTML as sent has under this percent of its rendered main text differs
_DIGITS = re.compile(r"\d+")
_LITERALS = re.compile(r"""(["'`])(?:\\.|(?!\1).)*\1|\d+""", re.S)
_EXECUTED = {"", "text/javascript", "application/javascript", "module", "text/ecmascript"}
SAMPLE = "sample of its template"  # how a sample's own reason starts
DEGRADED = "degraded: "  # how the reason of a page rendered by the degradation rule starts


def template_key(body: bytes) -> str | None:
    """A short hash of the structure of the HTML as sent; None when it cannot be parsed as HTML."""
    try:
        doc = lxml.html.document_fromstring(body)
    except (ValueError, lxml.etree.ParserError):
        return None
    return template_key_of(doc)


def template_key_of(doc: Any) -> str | None:
    """``template_key`` of a page already parsed: ``doc`` is the document element lxml made of the HTML as sent
    (``lxml.html`` or ``lxml.etree``'s HTML parser, before anything was taken out of it); None without a body.

    A reader of pages that parses them anyway sets ``ScrapeResult.template`` with it, and ``--render auto``
    then parses no page a second time for its template.
    """
    root = doc.find("body")
    if root is None:
        return None
    parts: list[str] = []

    def walk(element: Any, depth: int) -> None:
        last = None
        for child in element:
            if not isinstance(child.tag, str) or child.tag == "script":
                continue  # a comment, a processing instruction; scripts are read below
            token = "{}{}#{}.{}".format(
                depth,
                child.tag,
                _DIGITS.sub("", child.get("id") or ""),
                " ".join(sorted({_DIGITS.sub("", c) for c in (child.get("class") or "").split()})),
            )
            if token != last:  # a run of alike siblings (list items, paragraphs) once
                parts.append(token)
            last = token
            if depth < SKELETON_DEPTH:
                walk(child, depth + 1)

    walk(root, 1)
    for script in doc.iter("script"):
        src = script.get("src")
        if src:
            parts.append("src:" + urlsplit(src.strip()).path)
        elif (script.get("type") or "").strip().lower() in _EXECUTED:
            parts.append("inline:" + _LITERALS.sub("", script.text or "").strip())
    return hashlib.sha1("\n".join(parts).encode("utf-8", "replace")).hexdigest()[:10]  # noqa: S324 - a signature


def differences(js: dict[str, Any] | None) -> list[str]:
    """What a sample's comparison (``js_dependence``) found JavaScript changing, in words ("links +3", "title")."""
    if not js:
        return []
    found = []
    if js.get("link_count"):
        found.append(f"links +{js['link_count']}")
    share = js.get("text_share")
    if share is not None and share < TEXT_SHARE:
        found.append(f"main text {share}% as sent")
    found.extend(sorted(js.get("changed") or {}))
    if js.get("noindex") and "robots" not in found:
        found.append("robots")
    return found


@dataclass
class Group:
    sample: str
    verdict: asyncio.Future[tuple[bool, str]]


@dataclass
class Decision:
    render: bool
    template: str | None
    reason: str
    sample: bool = False
    verdict: tuple[bool, str] | None = None  # a sample's: what its comparison settled for its group

    def as_fact(self) -> dict[str, Any]:
        fact: dict[str, Any] = {
            "mode": "auto",
            "template": self.template,
            "rendered": self.render,
            "reason": self.reason,
        }
        if self.verdict is not None:  # what a resumed crawl reads back (AutoRender.restore)
            fact["verdict"] = {"render": self.verdict[0], "reason": self.verdict[1]}
        return fact

    def as_json(self) -> str:
        """The decision as stored with the commit's row of the page (commit_page.render_decision)."""
        return json.dumps(self.as_fact(), separators=(",", ":"), ensure_ascii=False)


def stored_verdict(url: str, fact: Mapping[str, Any]) -> tuple[bool, str] | None:
    """The verdict a stored sample's fact settled for its group; None for a page that was no sample.

    A fact stored before samples kept their verdict is read from the sample's own reason (a group whose
    sample was the same loses only the console-error note of its pages' reasons).
    """
    verdict = fact.get("verdict")
    if isinstance(verdict, Mapping) and isinstance(verdict.get("reason"), str):
        return bool(verdict.get("render")), verdict["reason"]
    reason = fact.get("reason")
    if not isinstance(reason, str) or not reason.startswith(SAMPLE + ": "):
        return None
    said = reason[len(SAMPLE) + 2 :]
    if said == "same":
        return False, f"sample {url} same"
    if said.startswith(("differs: ", "failed to render")):
        return True, f"sample {url} {said}"
    return True, f"sample {url}: {said}"


@dataclass
class AutoRender:
    """The groups of one crawl and the decisions taken, per URL, until the page is stored."""

    groups: dict[str, Group] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    seen: int = 0
    degraded: str = ""  # why every page is rendered from some point on
    samples: int = 0

    async def decide(self, url: str, key: str | None, unreadable: str = "") -> Decision:
        """Whether ``url`` (of template ``key``) is rendered; waits for its group's sample when one is out."""
        self.seen += 1
        if key is None:
            return self._keep(url, Decision(True, None, unreadable or "the HTML as sent could not be parsed"))
        if self.degraded:
            return self._keep(url, Decision(True, key, self.degraded))
        group = self.groups.get(key)
        if group is None:
            if len(self.groups) >= MIN_GROUPS and len(self.groups) + 1 > GROUP_SHARE * self.seen:
                self.degraded = (
                    f"{DEGRADED}too many templates ({len(self.groups) + 1} in {self.seen} pages), "
                    "every page rendered from here on"
                )
                return self._keep(url, Decision(True, key, self.degraded))
            self.groups[key] = Group(url, asyncio.get_running_loop().create_future())
            self.samples += 1
            return self._keep(url, Decision(True, key, SAMPLE, sample=True))
        render, why = await asyncio.shield(group.verdict)
        return self._keep(url, Decision(render, key, why))

    def waits(self, key: str | None) -> bool:
        """Whether a page of template ``key`` would wait in ``decide``: its group's sample is still out."""
        group = self.groups.get(key) if key is not None and not self.degraded else None
        return group is not None and not group.verdict.done()

    def _keep(self, url: str, decision: Decision) -> Decision:
        self.decisions[url] = decision
        return decision

    def rendered(self, url: str, html_facts: str | None, console: int = 0) -> str | None:
        """A rendered page's decision (JSON, None when it had none); a sample's comparison (its ``html_facts``'
        ``js``) settles its group.

        ``console``: the page's console errors. They are not what the comparison reads (a page read as sent
        shows the same thing without them), but the pages a sample speaks for are told that theirs were not
        looked for.
        """
        decision = self.decisions.pop(url, None)
        if decision is None:
            return None
        if decision.sample and decision.template is not None:
            js = (json.loads(html_facts) if html_facts else {}).get("js")
            if js is None:
                why = "its HTML as sent and rendered could not be compared"
                verdict = (True, f"sample {url}: {why}")
                decision.reason = f"{SAMPLE}: {why}"
            else:
                found = differences(js)
                said = f"differs: {', '.join(found)}" if found else "same"
                unseen = (
                    f"; its {console} console error{'' if console == 1 else 's'} not looked for here"
                    if console and not found
                    else ""
                )
                verdict = (bool(found), f"sample {url} {said}{unseen}")
                decision.reason = f"{SAMPLE}: {said}"
            decision.verdict = verdict
            self.settle(decision.template, *verdict)
        return decision.as_json()

    def parsed(self, url: str) -> str | None:
        """A page read without a browser: its decision (JSON, None when it had none)."""
        decision = self.decisions.pop(url, None)
        return None if decision is None else decision.as_json()

    def settle(self, key: str, render: bool, why: str) -> None:
        group = self.groups.get(key)
        if group is not None and not group.verdict.done():
            group.verdict.set_result((render, why))

    def failed(self, url: str, kind: str) -> str | None:
        """The browser could not render ``url`` (the error's kind): a sample's template is rendered.

        Returns the decision for the page's record (JSON, with a sample's verdict), so that the failure is
        stored with its decision and a resumed crawl does not sample that template again.
        """
        decision = self.decisions.pop(url, None)
        if decision is None:
            return None
        if decision.sample and decision.template is not None:
            verdict = (True, f"sample {url} failed to render ({kind})")
            decision.verdict, decision.reason = verdict, f"{SAMPLE}: failed to render ({kind})"
            self.settle(decision.template, *verdict)
        return decision.as_json()

    def done(self, url: str, decision: Decision) -> None:
        """The page is finished: a sample that never reached ``rendered`` (it failed) renders its group."""
        self.decisions.pop(url, None)
        if decision.sample and decision.template is not None:
            self.settle(decision.template, True, f"sample {url} was not rendered")

    def restore(self, stored: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Take over the decisions a continued commit already stored (URL, its decision), in crawl order.

        Each stored sample's template keeps the verdict it settled, so no page of it is a sample again;
        the pages count towards the degradation rule, and a crawl that had degraded stays so. A template
        whose sample was never stored (the crawl stopped while it rendered) is sampled again.
        """
        loop = asyncio.get_running_loop()
        for url, fact in stored:
            if fact.get("mode") != "auto":
                continue
            self.seen += 1
            reason = fact.get("reason")
            if not self.degraded and isinstance(reason, str) and reason.startswith(DEGRADED):
                self.degraded = reason
            template = fact.get("template")
            verdict = stored_verdict(url, fact)
            if not isinstance(template, str) or verdict is None or template in self.groups:
                continue
            settled: asyncio.Future[tuple[bool, str]] = loop.create_future()
            settled.set_result(verdict)
            self.groups[template] = Group(url, settled)
            self.samples += 1

    def as_dict(self) -> dict[str, Any]:
        verdicts = [g.verdict.result() for g in self.groups.values() if g.verdict.done()]
        return {
            "templates": len(self.groups),
            "samples": self.samples,
            "rendered_templates": sum(1 for render, _ in verdicts if render),
            "degraded": self.degraded,
        }
