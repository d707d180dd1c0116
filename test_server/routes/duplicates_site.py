"""/duplicates-site/: pages with the same main content, nearly the same at known similarities, and thin ones.

Each article is ``WORDS`` distinct words (``article(seed)``), so the Jaccard similarity of two pages' 3-word
shingles is exact arithmetic: changing the last k words of an article of n keeps n - k - 2 of its n - 2
shingles and adds k new ones, a similarity of (n - k - 2) / (n + k - 2).

- /a and /a-copy: the same article in different chrome (nav, footer, title): exact duplicates.
- /a-near: /a with its last 5 words changed: 193 / 203 = 95.07 % like /a and /a-copy.
- /a-far: /a with its last 50 words changed: 148 / 248 = 59.7 %, no near duplicate at 90 %.
- /b: an article of its own; /thin: 12 words; the home page: its list of links, 9 words.
"""

from __future__ import annotations

from flask import Blueprint, abort

from test_server.routes._html import links, page

bp = Blueprint("duplicates_site", __name__, url_prefix="/duplicates-site")

WORDS = 200
PAGES = ("a", "a-copy", "a-near", "a-far", "b", "thin")


def article(seed: int, changed: int = 0, n: int = WORDS) -> str:
    """``n`` distinct words (``w<seed>x<i>``), the last ``changed`` of them replaced by others."""
    words = [f"w{seed}x{i}" for i in range(n - changed)] + [f"changed{seed}x{i}" for i in range(changed)]
    return " ".join(words)


def similarity(changed: int, n: int = WORDS) -> float:
    """The exact 3-word-shingle Jaccard similarity of an article and itself with ``changed`` words replaced."""
    return (n - changed - 2) / (n + changed - 2)


_BODIES = {
    "a": article(1),
    "a-copy": article(1),
    "a-near": article(1, changed=5),
    "a-far": article(1, changed=50),
    "b": article(2),
    "thin": "Opening hours: Monday to Friday, nine to five. Closed on public holidays.",
}


@bp.get("/")
def home():  # type: ignore[no-untyped-def]
    return page("Duplicates", "<main>" + links(*((f"/duplicates-site/{p}", p) for p in PAGES)) + "</main>")


@bp.get("/<name>")
def article_page(name: str):  # type: ignore[no-untyped-def]
    if name not in _BODIES:
        abort(404)
    chrome = "<nav><a href='/duplicates-site/'>Home</a></nav>"
    return page(
        f"Duplicates {name}",
        f"{chrome}<main><p>{_BODIES[name]}</p></main><footer>{name} footer</footer>",
    )
