"""Finding a page's main content: a user selector, then `main`, `[role=main]`, `article`, densest block.

The `main-contents` analyzer counts what is in it (rendered DOM); the duplicate-content checks compare its
text (``main_text``, from the stored HTML).
"""

from __future__ import annotations

import re
from typing import Any

import lxml.etree
import lxml.html
from lxml.cssselect import CSSSelector

# Subtrees that never count as content: page chrome and non-rendered text.
BOILERPLATE = frozenset({"nav", "header", "footer", "aside", "script", "style", "template", "noscript"})
NON_TEXT = frozenset({"script", "style", "template", "noscript"})
BLOCKS = frozenset({"body", "div", "section", "td"})
SHARE = 0.6  # the densest block is the smallest block holding at least this share of the page's text

# Words of a text, the rule the duplicate-content checks and the `main-contents` analyzer count by
# (docs/duplicates.md): Japanese and Chinese are written without spaces between words, so each Han, Hiragana
# or Katakana character is one word (as Screaming Frog and Sitebulb count them), the marks among them
# (々, ー, ゝ) included; every other run of word characters is one word (Latin, Cyrillic, digits, and Hangul:
# Korean puts spaces between its words).
_CJK = (
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b"  # 々〆〇, Suzhou numerals, kana repeat marks, 〻
    "\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # Hiragana, Katakana (full and half width)
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # Han: CJK ideographs and extensions
)
_WORD = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")

_MAIN = CSSSelector("main")
_ROLE_MAIN = CSSSelector('[role="main"]')
_ARTICLE = CSSSelector("article")


def compile_selector(selector: str | None) -> CSSSelector | None:
    """The user's selector compiled once; a broken one raises ``ValueError`` with the reason."""
    if not selector:
        return None
    try:
        return CSSSelector(selector)
    except Exception as exc:  # cssselect raises several unrelated error types for bad input
        raise ValueError(f"invalid CSS selector {selector!r}: {exc}") from None


def visible_text_length(element: Any) -> int:
    """Non-whitespace characters of the text under ``element``, outside script, style and templates."""
    return sum(len("".join(text.split())) for text in visible_texts(element))


def visible_texts(element: Any, skip: frozenset[str] = NON_TEXT) -> list[str]:
    """Text pieces under ``element`` in document order, leaving out the subtrees whose tag is in ``skip``."""
    texts: list[str] = []
    stack: list[tuple[Any, bool]] = [(element, False)]
    while stack:
        node, tail_only = stack.pop()
        if tail_only:
            if node.tail:
                texts.append(node.tail)
            continue
        if node is not element:
            stack.append((node, True))  # the tail comes after the subtree
        if not isinstance(node.tag, str) or node.tag in skip:
            continue
        if node.text:
            texts.append(node.text)
        stack.extend((child, False) for child in reversed(node))
    return texts


def locate(document: Any, custom: CSSSelector | None) -> tuple[Any, str]:
    """The main content element and the method that found it (``selector``, ``main``, ``role=main``,
    ``article``, ``densest-block``)."""
    if custom is not None:
        found = custom(document)
        if found:
            return found[0], "selector"
    for selector, method in ((_MAIN, "main"), (_ROLE_MAIN, "role=main")):
        found = selector(document)
        if found:
            return found[0], method
    articles = _ARTICLE(document)
    if articles:
        # several articles (a listing page): the one with the most text, the first on a tie
        best = max(enumerate(articles), key=lambda item: (visible_text_length(item[1]), -item[0]))
        return best[1], "article"
    return densest_block(document), "densest-block"


def densest_block(document: Any) -> Any:
    """The deepest body/div/section/td holding at least 60% of the page's non-link text.

    Text in nav, header, footer, aside, script, style, noscript and template, and link text, does not
    count. A page without such text gives its body.
    """
    body = document.find("body")
    if body is None:
        return document
    order: list[Any] = []
    own: dict[Any, int] = {}
    stack: list[tuple[Any, bool]] = [(body, False)]
    while stack:  # pre-order walk, keeping the subtrees that count
        node, in_link = stack.pop()
        if not isinstance(node.tag, str) or node.tag in BOILERPLATE:
            continue
        in_link = in_link or node.tag == "a"
        order.append(node)
        count = 0 if in_link else len("".join((node.text or "").split()))
        for child in node:
            if child.tail and not in_link:
                count += len("".join(child.tail.split()))
        own[node] = count
        stack.extend((child, in_link) for child in reversed(node))
    total = dict(own)
    for node in reversed(order):  # children come after their parent in pre-order: sum bottom-up
        parent = node.getparent()
        if node is not body and parent in total:
            total[parent] += total[node]
    threshold = SHARE * total[body]
    if total[body] == 0:
        return body
    best, best_depth = body, 0
    depth: dict[Any, int] = {body: 0}
    for node in order[1:]:
        depth[node] = depth[node.getparent()] + 1
        if node.tag in BLOCKS and total[node] >= threshold and depth[node] > best_depth:
            best, best_depth = node, depth[node]
    return best


def main_text(html: str | None, custom: CSSSelector | None = None) -> str | None:
    """The visible text of an HTML document's main content, pieces joined by spaces; None when unparseable."""
    if not html or not html.strip():
        return None
    try:
        document = lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return None
    main, _ = locate(document, custom)
    return " ".join(visible_texts(main))


def words(text: str) -> list[str]:
    """The words of ``text`` by the rule above: each CJK character one word, other word-character runs one."""
    return _WORD.findall(text)
