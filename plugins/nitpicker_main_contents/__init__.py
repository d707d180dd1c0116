"""The `main-contents` analyzer: finds each page's main content and counts what is in it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    PageInput,
    PageReport,
    Register,
    RegisterSetting,
    Rule,
    UsageError,
    Violation,
    compile_main_content_selector,
    content_words,
    hookimpl,
    load_translations,
    locate_main_content,
    visible_texts,
)

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
NOTE_LINES = 50
# rule id -> {language: {title, description, fix}}, from messages/<lang>.json
TRANSLATIONS = load_translations(Path(__file__).with_name("messages"))


class MainContents(Analyzer):
    name = "main-contents"
    label = "Main content: size, headings, images, links and tables"
    version = "1.1.0"  # 1.1: words of Japanese and Chinese text counted per character
    columns = (
        Column("method", "Main content found by"),
        Column("characters", "Main content characters"),
        Column("words", "Main content words"),
        Column("headings", "Headings"),
        Column("images", "Images"),
        Column("images_without_alt", "Images without alt"),
        Column("links", "Links"),
        Column("tables", "Tables"),
    )
    order = 50
    # The rendered DOM: the main content a visitor sees, with the headings, images and links scripts add.
    reads = "rendered"

    def rules(self) -> list[Rule]:
        # a warning about the setup, not the site: low
        return [
            Rule(
                "selector-not-found",
                "Main content selector not found",
                "low",
                "No element matches the selector setting; the main content was found another way.",
                type="warning",
                fix="Make the selector setting (--main-content-selector) match the site's "
                "main content element (main, article, #content, …), or leave it empty to find it "
                "automatically.",
                i18n=TRANSLATIONS.get("selector-not-found", {}),
            )
        ]

    def check(self, settings: Mapping[str, Any]) -> None:
        try:  # a broken selector fails once, in the main process, instead of on every page
            compile_main_content_selector(settings.get("selector") or None)
        except ValueError as exc:
            raise UsageError(f"--main-content-selector: {exc}") from None

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.selector_text: str = settings.get("selector") or ""
        self.selector = compile_main_content_selector(self.selector_text or None)

    def each_page(self, page: PageInput) -> PageReport:
        main, method = locate_main_content(page.document, self.selector)
        violations = []
        if self.selector is not None and method != "selector":
            violations.append(
                Violation(
                    "selector-not-found",
                    f"no element matches {self.selector_text!r}; the main content was found by {method}",
                    "warning",
                    self.selector_text,
                )
            )
        texts = " ".join(visible_texts(main))
        headings = [el for el in main.iter(*HEADINGS)]
        images = [
            el
            for el in main.iter("img", "input")
            if el.tag == "img" or (el.get("type") or "").lower() == "image"
        ]
        without_alt = [el for el in images if el.get("alt") is None]
        tables = list(main.iter("table"))
        cells = {
            "method": Cell(method, describe(main)),
            "characters": len("".join(texts.split())),
            "words": len(content_words(texts)),
            "headings": Cell(
                len(headings), _lines(f"{h.tag} {' '.join(''.join(h.itertext()).split())}" for h in headings)
            ),
            "images": len(images),
            "images_without_alt": Cell(len(without_alt), _lines(el.get("src") or "" for el in without_alt)),
            "links": len([a for a in main.iter("a") if a.get("href") is not None]),
            "tables": Cell(len(tables), table_note(tables)),
        }
        return PageReport(cells=cells, violations=violations)


def describe(element: Any) -> str:
    """``tag#id.class1.class2`` of the element, as a reader would recognise it."""
    text = element.tag
    if element.get("id"):
        text += f"#{element.get('id')}"
    for name in (element.get("class") or "").split():
        text += f".{name}"
    return text


def _lines(items: Any) -> str:
    lines = [line[:80] for line in items]
    extra = len(lines) - NOTE_LINES
    return "\n".join(lines[:NOTE_LINES] + ([f"… {extra} more"] if extra > 0 else []))


def table_note(tables: list[Any]) -> str:
    """The original's table summary: rows, columns of the first row, thead, tfoot, merged cells (o/x)."""
    if not tables:
        return ""
    lines = ["| r | c | h | f | m |"]
    for table in tables:
        rows = list(table.iter("tr"))
        first = rows[0] if rows else None
        cols = sum(1 for cell in first if cell.tag in ("td", "th")) if first is not None else 0
        merged = any(
            cell.get("rowspan") not in (None, "1") or cell.get("colspan") not in (None, "1")
            for cell in table.iter("td", "th")
        )
        flags = ["o" if table.find(tag) is not None else "x" for tag in ("thead", "tfoot")]
        lines.append(f"| {len(rows)} | {cols} | {flags[0]} | {flags[1]} | {'o' if merged else 'x'} |")
    return _lines(lines)


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "selector",
        type="str",
        default=None,
        help="CSS selector of the main content; when it matches nothing: main, [role=main], article, "
        "then the densest text block",
    )


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(MainContents())
