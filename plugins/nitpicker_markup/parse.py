"""html5lib parse errors of a page's HTML, split into invalid nesting and other parse errors."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import html5lib
from html5lib._tokenizer import HTMLTokenizer  # private, but html5lib 1.x has not changed it since 2016
from html5lib.constants import E

# Tree-construction errors about where an element may (not) stand: misnested or stray tags, table
# "voodoo" (foster parenting), adoption-agency repairs. Tokenizer errors (characters, attributes,
# entities, comments, doctype, end of file) stay plain parse errors.
_TOKENIZER_TAG_ERRORS = frozenset(
    {
        "incorrectly-placed-solidus",
        "self-closing-flag-on-end-tag",
        "non-void-element-with-trailing-solidus",
        "attributes-in-end-tag",
        "deprecated-tag",
        "unexpected-EOF-after-solidus-in-tag",
        "unexpected-character-after-solidus-in-tag",
    }
)
NESTING_CODES = frozenset(
    code
    for code in E
    if not code.startswith(("expected-", "eof-"))
    and code not in _TOKENIZER_TAG_ERRORS
    and any(word in code for word in ("tag", "adoption", "table", "select", "frameset", "foreign", "head"))
) | {
    "expected-one-end-tag-but-got-another",
    "expected-eof-but-got-start-tag",
    "expected-eof-but-got-end-tag",
    "non-html-root",
}
SNIPPET_BEFORE, SNIPPET_AFTER = 60, 20
CHECK_EVERY = 64  # tokens between two looks at the clock: a slow token costs milliseconds, not seconds


class ParseTooSlow(Exception):
    """html5lib did not finish within the time budget (``tokens``: how far it got)."""

    def __init__(self, budget: float, tokens: int) -> None:
        super().__init__(f"html5lib did not finish within {budget:g} s")
        self.budget, self.tokens = budget, tokens


class _BudgetTokenizer(HTMLTokenizer):
    """html5lib's tokenizer, stopping the parse once its deadline has passed.

    The tree builder works on each token between two yields, so the clock read here also bounds the
    slow part: html5lib's tree construction is quadratic in the open formatting elements (measured: a
    43 KB page of 2,000 unclosed ``<b class=…>`` takes 31 s, while typical pages parse at about 1 MB/s).
    """

    deadline: float = math.inf
    budget: float = math.inf

    def __iter__(self) -> Iterator[Any]:
        for count, token in enumerate(super().__iter__(), 1):
            if count % CHECK_EVERY == 0 and time.monotonic() > self.deadline:
                raise ParseTooSlow(self.budget, count)
            yield token


class _BudgetParser(html5lib.HTMLParser):
    """An HTMLParser whose tokenizer is a ``_BudgetTokenizer`` (the parser builds its tokenizer itself)."""

    budget: float = math.inf

    def mainLoop(self) -> None:
        self.tokenizer.__class__ = _BudgetTokenizer
        self.tokenizer.budget = self.budget
        self.tokenizer.deadline = time.monotonic() + self.budget
        super().mainLoop()


@dataclass(frozen=True)
class ParseError:
    line: int
    column: int
    code: str
    message: str
    snippet: str

    @property
    def nesting(self) -> bool:
        return self.code in NESTING_CODES


class ErrorCollector:
    """One html5lib parser per worker: building it is cheap, but there is no reason to repeat it."""

    def __init__(self, budget: float = math.inf) -> None:
        self._parser = _BudgetParser(tree=html5lib.getTreeBuilder("etree"), namespaceHTMLElements=False)
        self._parser.budget = budget

    def errors(self, html: str) -> Iterator[ParseError]:
        """Parse ``html`` (a str, so no encoding sniffing) and yield its errors in document order.

        Raises ``ParseTooSlow`` (before yielding anything) when the parse takes longer than the budget.

        html5lib reports where the tokenizer stood: line and column, both 1-based. For a misplaced tag
        that is the tag's last character (``3:9`` is the ``>`` of a stray ``</i>`` ending in column 9);
        tokenizer errors point where the problem was noticed (after a duplicate attribute's name).
        """
        self._parser.parse(html)
        found = self._parser.errors
        if not found:
            return
        lines = html.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for (line, column), code, datavars in found:
            try:
                message = E[code] % (datavars or {})
            except (KeyError, TypeError, ValueError):
                message = E.get(code, code)
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            snippet = text[max(0, column - SNIPPET_BEFORE) : column + SNIPPET_AFTER].strip()
            yield ParseError(line, column, code, message, snippet)
