"""Built-in plugins read archives through nitpicker_core.read: none runs SQL of its own on the core's tables.

The schema is the archive's business (docs/plugins.md, "The read model"); a plugin that names a table
breaks when a format moves a field (format 5 moved the core's keys out of ``extra`` into columns).
"""

from __future__ import annotations

import re
from pathlib import Path

from nitpicker_core.archive.models import MODELS

ROOT = Path(__file__).resolve().parent.parent
TABLES = sorted(
    {model._meta.table_name for model in MODELS} | {"sitemap", "sitemap_entry", "commits", "info"}
)
NAMES_A_TABLE = re.compile(rf"\b(?:FROM|JOIN|INTO|UPDATE)\s+({'|'.join(TABLES)})\b", re.I)
RUNS_SQL = re.compile(r"\.(?:execute|executemany)\(|\bread\.stream\(")


def offences(text: str) -> list[str]:
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: runs SQL" for m in RUNS_SQL.finditer(text)]
    found += [
        f"line {text.count(chr(10), 0, m.start()) + 1}: names table {m.group(1)}"
        for m in NAMES_A_TABLE.finditer(text)
    ]
    found += [
        f"line {text.count(chr(10), 0, m.start()) + 1}: json_extract"
        for m in re.finditer("json_extract", text)
    ]
    return found


def test_the_guard_sees_what_it_forbids() -> None:
    assert offences('rows = reader.execute("SELECT url FROM commit_page cp JOIN page_state ps")') == [
        "line 1: runs SQL",
        "line 1: names table commit_page",
        "line 1: names table page_state",
    ]
    assert offences("json_extract(ps.extra, '$.outside_scope')") == ["line 1: json_extract"]
    assert offences("read.page_rows(reader, commit, ('url',))") == []


def test_no_built_in_plugin_reads_the_archive_with_sql() -> None:
    bad = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "plugins").rglob("*.py"))
        if (found := offences(path.read_text()))
    }
    assert bad == {}, "read through nitpicker_core.read (add a read function there) instead"
