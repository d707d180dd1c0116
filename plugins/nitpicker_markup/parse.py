"""html5lib parse errors of the rendered HTML, split into invalid nesting and other parse errors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import html5lib
from html5lib.constants import E

# Tree-construction errors about where an element may (not) stand: misnested or stray tags, table
# "voodoo" (foster parenting), adoption-agency repairs. Tokenizer errors (characters, attributes,
# entities, comments, doctype, end of file) stay plain parse errors.
_TOKENIZER_TAG_ERRORS = frozenset({
    "incorrectly-placed-solidus", "self-closing-flag-on-end-tag", "non-void-element-with-trailing-solidus",
    "attributes-in-end-tag", "deprecated-tag", "unexpected-EOF-after-solidus-in-tag",
    "unexpected-character-after-solidus-in-tag",
})
NESTING_CODES = frozenset(
    code for code in E
    if not code.startswith(("expected-", "eof-")) and code not in _TOKENIZER_TAG_ERRORS
    and any(word in code for word in ("tag", "adoption", "table", "select", "frameset", "foreign", "head"))
) | {"expected-one-end-tag-but-got-another", "expected-eof-but-got-start-tag", "expected-eof-but-got-end-tag",
     "non-html-root"}
SNIPPET_BEFORE, SNIPPET_AFTER = 60, 20


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

    def __init__(self) -> None:
        self._parser = html5lib.HTMLParser(tree=html5lib.getTreeBuilder("etree"), namespaceHTMLElements=False)

    def errors(self, html: str) -> Iterator[ParseError]:
        """Parse ``html`` (a str, so no encoding sniffing) and yield its errors in document order.

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
            snippet = text[max(0, column - SNIPPET_BEFORE):column + SNIPPET_AFTER].strip()
            yield ParseError(line, column, code, message, snippet)
