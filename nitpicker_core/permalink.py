"""A heading's text as its readers see it: without the permalink anchor a site generator puts inside it.

Sphinx writes ``<h1>Title<a class="headerlink" href="#title">¶</a></h1>``, MkDocs and Hugo a "¶" or "#",
Docusaurus a zero-width space, GitHub an icon: a link to the heading itself, shown on hover. Its symbol is
no word of the heading; counted in, every H1 of a Sphinx site reads "Title¶" in the pages list, the
duplicate and multiple-H1 findings and the comparison of the HTML as sent with the rendered one. Every path
that reads headings (the rendered page's extract, the HTML as sent without a browser, the HTML facts) gives
this function the heading's whole text and the texts of its fragment links, so they all leave out the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["heading_text", "is_permalink"]

# Nothing but symbols, punctuation, marks and spaces (¶ # § 🔗 ∞, a zero-width space): no word.
_NO_WORD = re.compile(r"[\W_]*")


def is_permalink(text: str) -> bool:
    """Whether a fragment link's text (``<a href="#…">``) inside a heading makes it a permalink anchor."""
    return bool(_NO_WORD.fullmatch(text))


def heading_text(text: str, fragment_links: Iterable[str] = ()) -> str:
    """``text``, a heading's whole text (white space collapsed), less its permalink anchors' text.

    ``fragment_links``: the texts of the heading's ``<a href="#…">`` descendants; those of symbols only are
    permalinks, taken off where they stand, at the end or the start of the heading. A heading that is
    nothing but such a link keeps its text (it has no other).
    """
    found = text
    for link in fragment_links:
        mark = " ".join(str(link).split())
        if not mark or not is_permalink(mark):
            continue
        if found.endswith(mark):
            found = found[: -len(mark)].rstrip()
        elif found.startswith(mark):
            found = found[len(mark) :].lstrip()
    return found if found else text
