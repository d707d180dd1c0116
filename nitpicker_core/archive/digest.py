"""Whole-commit digests (summary, tag counts, duplicate groups, list totals) stored when a commit completes.

Each function here is the one definition of its digest: the queries call it on demand for a commit without
stored digests, and the build stores its JSON in ``agg_value`` under the function's name. ``run`` is any
``(sql, params) -> rows`` callable (a reader's ``execute`` or a connection's).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from nitpicker_core.content_types import CATEGORIES
from nitpicker_core.content_types import sql_case as content_type_sql_case

Run = Callable[[str, Sequence[Any]], Sequence[Any]]

# A URL of the crawl's own host outside its scope (``extra.outside_scope``) is internal but was only checked,
# never crawled: it is no page. ``instr`` spares the JSON parse on the rows that lack the key (almost all).
OUTSIDE_SCOPE = "(ps.outside_scope IS NOT NULL AND ps.outside_scope = 1)"
IN_SCOPE = f"NOT {OUTSIDE_SCOPE}"
STRICT = f"(ps.content_type = 'text/html' AND {IN_SCOPE})"
LOOSE = (
    "((ps.content_type = 'text/html' OR ((ps.content_type IS NULL OR ps.content_type = '') "
    f"AND ps.redirect_dest_url_id IS NULL)) AND {IN_SCOPE})"
)
PAGES_OF_COMMIT = "commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id"
CATEGORY = content_type_sql_case("ps.content_type")
# Error kind of a failed fetch: the state's own record first, else the commit's crawl_error row.
# ``|| ''`` keeps SQLite from answering MIN through the (commit_id, kind) index, a scan per row.
ERROR_KIND = (
    "COALESCE(ps.error_kind, (SELECT MIN(ce.kind || '') FROM crawl_error ce "
    "WHERE ce.commit_id = cp.commit_id AND ce.url_id = cp.url_id))"
)
# What became of a URL row: answered (a status), blocked (a status by which the server refused the crawler:
# 401, 403, 429, 999 or a bot challenge page, ``extra.blocked``), redirect (a hop without one), skipped by a
# rule, failed (an error was recorded) or not_checked (never requested: --no-fetch-external, a crawl cut short).
OUTCOMES = ("answered", "blocked", "redirect", "skipped", "failed", "not_checked")
BLOCKED = "(ps.blocked IS NOT NULL AND ps.blocked = 1)"


def outcome_sql(error_kind: str = ERROR_KIND) -> str:
    """The outcome of the state ``ps`` whose error kind is the SQL expression ``error_kind``."""
    return (
        f"(CASE WHEN ps.is_skipped THEN 'skipped' WHEN ps.status IS NOT NULL AND {BLOCKED} THEN 'blocked' "
        "WHEN ps.status IS NOT NULL THEN 'answered' "
        f"WHEN ps.redirect_dest_url_id IS NOT NULL THEN 'redirect' WHEN {error_kind} IS NOT NULL THEN 'failed' "
        "ELSE 'not_checked' END)"
    )


OUTCOME = outcome_sql()
# For whole-commit passes: every URL's error kind grouped once (commit bound as a parameter).
ERRORS_OF_COMMIT = "(SELECT url_id, MIN(kind) AS kind FROM crawl_error WHERE commit_id = ? GROUP BY url_id)"
FILL_FIELDS = (
    "title",
    "description",
    "keywords",
    "lang",
    "charset",
    "viewport",
    "canonical",
    "robots",
    "og_type",
    "og_title",
    "og_description",
    "og_url",
    "og_image",
    "twitter_card",
)
# Internal HTML pages (strict) of the commit bound as the first parameter.
HTML_PAGES = f"FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND ps.is_external = 0 AND {STRICT}"

# The headers an auditor looks for, by the key the `headers` query answers them under (the crawl checks
# `missing-*` report each one too).
SECURITY_HEADERS = {
    "csp": "content-security-policy",
    "x_frame_options": "x-frame-options",
    "x_content_type_options": "x-content-type-options",
    "hsts": "strict-transport-security",
    "referrer_policy": "referrer-policy",
    "permissions_policy": "permissions-policy",
}


def _sent(header: str) -> str:
    # An empty value is no header at all to a browser (and to the checks).
    return f"(trim(coalesce(json_extract(ps.headers, '$.\"{header}\"'), '')) != '')"


HAS_HEADER = {key: _sent(header) for key, header in SECURITY_HEADERS.items()}
# CSP frame-ancestors supersedes X-Frame-Options in every current browser, as the missing-x-frame-options
# check counts it.
HAS_HEADER["x_frame_options"] = (
    f"({_sent('x-frame-options')} OR instr(lower(coalesce(json_extract(ps.headers, "
    "'$.\"content-security-policy\"'), '')), 'frame-ancestors') > 0)"
)

# One row per mismatch kind: the page's own value next to the one its metadata declares, where the declared
# value is present and differs. Driven by the URL index (commit bound once), so URL-sorted pages stream.
_MISMATCH_SPECS = (
    ("canonical", "u.url", "ps.canonical"),
    ("og_title", "ps.title", "ps.og_title"),
    ("og_description", "ps.description", "ps.og_description"),
)
MISMATCH_KINDS = tuple(kind for kind, _, _ in _MISMATCH_SPECS)
_OWN = "CASE k.kind " + " ".join(f"WHEN '{k}' THEN {own}" for k, own, _ in _MISMATCH_SPECS) + " END"
_DECLARED = "CASE k.kind " + " ".join(f"WHEN '{k}' THEN {d}" for k, _, d in _MISMATCH_SPECS) + " END"
MISMATCHES = (
    f"SELECT u.url, k.kind, {_OWN} AS page_value, {_DECLARED} AS declared_value "
    "FROM url u CROSS JOIN commit_page cp ON cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id "
    "CROSS JOIN (" + " UNION ALL ".join(f"SELECT '{k}' AS kind" for k in MISMATCH_KINDS) + ") k "
    f"WHERE cp.commit_id = ? AND ps.is_external = 0 AND {STRICT} AND trim(coalesce({_DECLARED}, '')) != '' "
    f"AND trim({_DECLARED}) != trim(coalesce({_OWN}, ''))"
)
IMAGES_OF_COMMIT = (
    "FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id JOIN image i "
    "ON i.state_id = cp.state_id WHERE cp.commit_id = ? AND ps.is_external = 0"
)


def anchor_columns(run: Run) -> frozenset[str]:
    """The anchor table's columns: archives written before ``raw_href``/``line``/``col`` lack them."""
    return frozenset(r[0] for r in run("SELECT name FROM pragma_table_info('anchor')", []))


def written_href(columns: frozenset[str], anchor: str = "a", target: str = "tu") -> str:
    """SQL: the href exactly as written in the page, else (older archives) the absolute target + fragment."""
    fallback = (
        f"({target}.url || CASE WHEN {anchor}.fragment != '' THEN '#' || {anchor}.fragment ELSE '' END)"
    )
    return f"COALESCE({anchor}.raw_href, {fallback})" if "raw_href" in columns else fallback


def position(columns: frozenset[str], anchor: str = "a") -> str:
    """SQL: ``line, col`` of the anchor's start tag in the server's HTML (NULLs where not recorded)."""
    return f"{anchor}.line AS line, {anchor}.col AS col" if "line" in columns else "NULL AS line, NULL AS col"


# What became of a URL without a status, counted per side in the summary.
SIDE_BUCKETS = ("redirect_hops", "skipped", "failed", "not_checked")


def summary(run: Run, commit: int) -> dict[str, Any]:
    """Counts, status distribution (failures by kind, URLs never requested), content types and metadata fill."""
    base = f"FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ?"
    # internal URLs include those of the crawl's own host outside its scope (checked, never pages); a
    # summary stored before they were counted lacks ``outside_scope``
    counts: dict[str, dict[str, int]] = {
        "internal": {"urls": 0, "pages": 0, "pages_loose": 0, "outside_scope": 0},
        "external": {"urls": 0, "pages": 0, "pages_loose": 0},
    }
    for r in run(
        f"SELECT ps.is_external, COUNT(*), SUM({STRICT}), SUM({LOOSE}), SUM({OUTSIDE_SCOPE}) {base} "
        "GROUP BY ps.is_external",
        [commit],
    ):
        side = "external" if r[0] else "internal"
        counts[side] = {"urls": r[1], "pages": r[2], "pages_loose": r[3]}
        if side == "internal":
            counts[side]["outside_scope"] = r[4] or 0
    status: dict[str, Any] = {
        "total": 0,
        "by_code": [],
        "redirect_hops": 0,
        "skipped": 0,
        "failed": 0,
        "failed_by_kind": [],
        "not_checked": 0,
        # answered, but by refusing the crawler (401, 403, 429, 999, a bot challenge): counted in by_code too
        "blocked": 0,
        "blocked_by_status": [],
    }
    # A row without a status is a failure only when an error was recorded for it; otherwise it was never
    # requested (--no-fetch-external, a crawl cut short, a link target outside every rule): not checked.
    kind = "COALESCE(ps.error_kind, ce.kind)"
    bucket = (
        "CASE WHEN ps.is_skipped THEN 'skipped' WHEN ps.status IS NOT NULL THEN 'code' "
        f"WHEN ps.redirect_dest_url_id IS NOT NULL THEN 'redirect_hops' WHEN {kind} IS NOT NULL THEN 'failed' "
        "ELSE 'not_checked' END"
    )
    sql = (
        f"SELECT {bucket} AS bucket, ps.status, {kind} AS kind, ps.is_external, COUNT(*) AS n, "
        f"SUM(ps.status IS NOT NULL AND {BLOCKED}) AS blocked "
        f"FROM {PAGES_OF_COMMIT} LEFT JOIN {ERRORS_OF_COMMIT} ce ON ce.url_id = cp.url_id "
        "WHERE cp.commit_id = ? GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
    )
    # every count also split by side, so a list of internal URLs only has its own number to agree with
    by_code: dict[int, dict[str, int]] = {}
    kinds: dict[str, int] = {}
    sides = {side: dict.fromkeys((*SIDE_BUCKETS, "blocked"), 0) for side in ("internal", "external")}
    blocked: dict[int, dict[str, int]] = {}
    for bucket_name, code, kind, external, n, refused in run(sql, [commit, commit]):
        side = "external" if external else "internal"
        status["total"] += n
        if bucket_name == "code":
            row = by_code.setdefault(code, {"count": 0, "internal": 0, "external": 0})
            row["count"] += n
            row[side] += n
            if refused:
                status["blocked"] += refused
                sides[side]["blocked"] += refused
                by = blocked.setdefault(code, {"count": 0, "internal": 0, "external": 0})
                by["count"] += refused
                by[side] += refused
        else:
            status[bucket_name] += n
            sides[side][bucket_name] += n
            if bucket_name == "failed":
                kinds[kind] = kinds.get(kind, 0) + n
    status["failed_by_kind"] = [{"kind": kind, "count": n} for kind, n in sorted(kinds.items())]
    status["by_code"] = [{"status": code, **row} for code, row in sorted(by_code.items())]
    status["blocked_by_status"] = [{"status": code, **row} for code, row in sorted(blocked.items())]
    status.update(sides)
    categories = {c: {"category": c, "count": 0, "internal": 0, "external": 0} for c in CATEGORIES}
    for r in run(
        f"SELECT {CATEGORY} AS c, COUNT(*), SUM(ps.is_external = 0), SUM(ps.is_external) {base} GROUP BY 1",
        [commit],
    ):
        categories[r[0]].update(count=r[1], internal=r[2], external=r[3])
    sums = ", ".join(f"SUM(ps.{f} IS NOT NULL AND ps.{f} != '')" for f in FILL_FIELDS)
    row = run(f"SELECT COUNT(*), {sums} {base} AND ps.is_external = 0 AND {STRICT}", [commit])[0]
    total = row[0]
    fill = [
        {
            "field": f,
            "filled": row[i + 1] or 0,
            "total": total,
            "rate": round((row[i + 1] or 0) / total, 4) if total else None,
        }
        for i, f in enumerate(FILL_FIELDS)
    ]
    return {
        "commit": commit,
        "counts": counts,
        "status": status,
        "content_types": list(categories.values()),
        "metadata_fill": fill,
    }


def tag_counts(run: Run, commit: int) -> dict[str, Any]:
    """Pages per tag provider and category, and per provider, category and external id (with versions)."""
    source = "FROM commit_page cp JOIN tag t ON t.state_id = cp.state_id WHERE cp.commit_id = ?"
    providers = [
        {"provider": r[0], "category": r[1], "pages": r[2]}
        for r in run(
            f"SELECT t.provider, t.category, COUNT(DISTINCT cp.url_id) AS pages {source} "
            "GROUP BY t.provider, t.category ORDER BY pages DESC, t.provider, t.category",
            [commit],
        )
    ]
    items = [
        {
            "provider": r[0],
            "category": r[1],
            "external_id": r[2],
            "pages": r[3],
            "versions": sorted(r[4].split(",")) if r[4] else [],
        }
        for r in run(
            "SELECT t.provider, t.category, t.external_id, COUNT(DISTINCT cp.url_id) AS pages, "
            f"group_concat(DISTINCT nullif(t.version, '')) AS versions {source} "
            "GROUP BY t.provider, t.category, t.external_id ORDER BY pages DESC, t.provider, t.external_id, t.category",
            [commit],
        )
    ]
    return {"providers": providers, "items": items}


def tag_rows(run: Run, commit: int) -> list[list[Any]]:
    """(provider, external_id, rows): page-and-tag rows of the commit, so `pages-by-tag` totals need no scan."""
    return [
        list(r)
        for r in run(
            "SELECT t.provider, t.external_id, COUNT(*) FROM commit_page cp JOIN tag t ON t.state_id = cp.state_id "
            "WHERE cp.commit_id = ? GROUP BY t.provider, t.external_id ORDER BY t.provider, t.external_id",
            [commit],
        )
    ]


def jsonld_counts(run: Run, commit: int) -> dict[str, Any]:
    """Scripts and pages per normalised @type and per kind, and how many scripts failed to parse."""
    types = run(
        "SELECT je.value AS type, COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages "
        "FROM commit_page cp JOIN jsonld j ON j.state_id = cp.state_id JOIN json_each(j.types) je "
        "WHERE cp.commit_id = ? AND j.types != '[]' GROUP BY je.value ORDER BY pages DESC, type",
        [commit],
    )
    kinds = run(
        "SELECT j.kind, COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages, "
        "SUM(j.error != '') AS errors FROM commit_page cp JOIN jsonld j ON j.state_id = cp.state_id "
        "WHERE cp.commit_id = ? GROUP BY j.kind ORDER BY j.kind",
        [commit],
    )
    errors = run(
        "SELECT COUNT(*) AS scripts, COUNT(DISTINCT cp.url_id) AS pages FROM commit_page cp "
        "JOIN jsonld j ON j.state_id = cp.state_id WHERE cp.commit_id = ? AND j.error != ''",
        [commit],
    )[0]
    return {
        "types": [{"type": r[0], "scripts": r[1], "pages": r[2]} for r in types],
        "kinds": [{"kind": r[0], "scripts": r[1], "pages": r[2], "errors": r[3]} for r in kinds],
        "parse_errors": errors[0],
        "pages_with_parse_errors": errors[1],
    }


def duplicates(run: Run, commit: int) -> dict[str, list[dict[str, Any]]]:
    """Per field (title, description): groups of internal 200 HTML pages sharing a non-empty value."""
    found = {}
    for field in ("title", "description"):
        column = f"ps.{field}"
        rows = run(
            f"SELECT {column} AS value, COUNT(*) AS count, json_group_array(u.url) AS urls {HTML_PAGES} "
            f"AND ps.is_target = 1 AND ps.status = 200 AND trim(coalesce({column}, '')) != '' "
            f"GROUP BY {column} HAVING COUNT(*) > 1 ORDER BY count DESC, value",
            [commit],
        )
        found[field] = [{"value": r[0], "count": r[1], "urls": sorted(json.loads(r[2]))} for r in rows]
    return found


# Failed URLs by kind: crawl_error events of the commit plus pages whose current state is a failure.
_ERRORS = (
    "WITH e(url_id, kind, message) AS ("
    " SELECT url_id, kind, message FROM crawl_error WHERE commit_id = ?1"
    " UNION SELECT cp.url_id, ps.error_kind, NULL FROM commit_page cp"
    " JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ?1"
    " AND ps.error_kind IS NOT NULL), "
    "f(url_id, kind, message) AS (SELECT url_id, kind, MAX(message) FROM e GROUP BY url_id, kind) "
)
ERROR_EXAMPLES = 100


def error_kinds(run: Run, commit: int) -> dict[str, Any]:
    """Failed URLs by error kind (internal, external, recorded events) with up to 100 example URLs each."""
    rows = run(
        _ERRORS + "SELECT f.kind, COUNT(*) AS count, "
        "SUM(coalesce(ps.is_external, 0) = 0) AS internal, SUM(coalesce(ps.is_external, 0) = 1) AS external, "
        "(SELECT COUNT(*) FROM crawl_error c WHERE c.commit_id = ?1 AND c.kind = f.kind) AS events "
        "FROM f LEFT JOIN commit_page cp ON cp.commit_id = ?1 AND cp.url_id = f.url_id "
        "LEFT JOIN page_state ps ON ps.id = cp.state_id GROUP BY f.kind ORDER BY count DESC, f.kind",
        [commit],
    )
    samples = run(
        _ERRORS + "SELECT kind, url, message FROM (SELECT f.kind, u.url, f.message, "
        "ROW_NUMBER() OVER (PARTITION BY f.kind ORDER BY u.url) AS n FROM f JOIN url u ON u.id = f.url_id) "
        "WHERE n <= ?2 ORDER BY kind, url",
        [commit, ERROR_EXAMPLES],
    )
    items = [
        {
            "kind": r[0],
            "count": r[1],
            "internal": r[2],
            "external": r[3],
            "events": r[4],
            "examples": [{"url": s[1], "message": s[2]} for s in samples if s[0] == r[0]],
        }
        for r in rows
    ]
    return {"total": sum(i["count"] for i in items), "items": items}


def list_totals(run: Run, commit: int) -> dict[str, Any]:
    """Totals of the unfiltered page-level lists, so their first pages need no counting pass."""
    sums = ", ".join(f"coalesce(SUM({has}), 0) AS {key}" for key, has in HAS_HEADER.items())
    headers = run(f"SELECT COUNT(*) AS pages, {sums} {HTML_PAGES}", [commit])[0]
    return {
        "pages": run(f"SELECT COUNT(*) FROM {PAGES_OF_COMMIT} WHERE cp.commit_id = ? AND {LOOSE}", [commit])[
            0
        ][0],
        "images": run(f"SELECT COUNT(*) {IMAGES_OF_COMMIT}", [commit])[0][0],
        "mismatches": run(f"SELECT COUNT(*) FROM ({MISMATCHES})", [commit])[0][0],
        "headers": dict(zip(("pages", *HAS_HEADER), headers, strict=True)),
    }


def diff_urls(run: Run, base: int, commit: int) -> dict[str, list[str]]:
    """Page URLs added, removed and modified from ``base`` to ``commit`` (set arithmetic on state ids)."""

    def urls(sql: str, params: list[int]) -> list[str]:
        return [r[0] for r in run(f"SELECT u.url FROM url u WHERE u.id IN ({sql}) ORDER BY u.url", params)]

    members = "SELECT url_id FROM commit_page WHERE commit_id = ?"
    return {
        "added": urls(f"{members} EXCEPT {members}", [commit, base]),
        "removed": urls(f"{members} EXCEPT {members}", [base, commit]),
        "modified": urls(
            "SELECT x.url_id FROM commit_page x JOIN commit_page y ON y.url_id = x.url_id "
            "AND y.commit_id = ? WHERE x.commit_id = ? AND x.state_id <> y.state_id",
            [commit, base],
        ),
    }


def diff_parent(run: Run, commit: int) -> dict[str, Any]:
    """``diff_urls`` against the commit's parent (``base`` None when it has none)."""
    parent = run("SELECT parent_id FROM commits WHERE id = ?", [commit])
    base = parent[0][0] if parent else None
    return {"base": base, **(diff_urls(run, base, commit) if base is not None else {})}


DIGESTS: dict[str, Callable[[Run, int], Any]] = {
    "summary": summary,
    "tag_counts": tag_counts,
    "tag_rows": tag_rows,
    "jsonld_counts": jsonld_counts,
    "duplicates": duplicates,
    "list_totals": list_totals,
    "diff_parent": diff_parent,
    "error_kinds": error_kinds,
}
