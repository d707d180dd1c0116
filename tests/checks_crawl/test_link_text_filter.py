"""anchor-text-non-descriptive reads only the links whose text may be short: it never leaves out one that is.

The check skips ``_words`` for a long, plain ASCII text; these texts show it skips only those whose words
are longer than the limit (so its findings are those of comparing every text).
"""

from __future__ import annotations

import random

from nitpicker_checks.directives import _may_be_short
from nitpicker_checks.settings import NON_DESCRIPTIVE
from nitpicker_checks.settings import words as _words

PIECES = ["read", "more", "Click", "HERE", "詳しくは", "こちら", "ß", "K", "_", "-", "!", "»", "→", "1"]
SPACES = [" ", "  ", " " * 14, "\t", "\n" * 9, "\u00a0", "\u3000", "\x1c", ""]


WORDS = ["read", "more", "Click", "here", "the", "prices", "of", "2024", "a-b", "x.y"]


def _texts(rng: random.Random, count: int) -> list[str]:
    found = []
    for _ in range(count):
        parts = [rng.choice(PIECES) + rng.choice(SPACES) for _ in range(rng.randrange(1, 6))]
        found.append(rng.choice(SPACES + ["...", "«"]) + "".join(parts) + rng.choice(SPACES + ["?", "_"]))
        # plain ASCII words, one space apart: the texts the check leaves unread when long enough
        found.append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8))))
    return found


def test_a_text_left_unread_is_never_as_short_as_a_phrase() -> None:
    longest = max(len(_words(text)) for texts in NON_DESCRIPTIVE.values() for text in texts)
    texts = _texts(random.Random(29), 20_000) + [
        "read more",
        "Read more about our prices",
        "  read   more  ",
        "read more!",
        "_read more_",
        "click\there",
        "read" + " " * 20 + "more",
        "read\n\t\r\x0b\x0c\x1c\x1d\x1e\x1f\n\t\r\n more",
        "Straße here and there",
    ]
    skipped = 0
    for text in texts:
        if not _may_be_short(text, longest):
            skipped += 1
            assert len(_words(text)) > longest, text
    assert skipped > 1000  # most long plain texts are left unread
    assert _may_be_short("  read   more  ", longest) and not _may_be_short(
        "Read more about our prices", longest
    )
