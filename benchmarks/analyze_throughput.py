"""Analyze throughput and memory: markup, text, search and main-contents over 2,000 and 10,000 pages.

For each size: writes a synthetic archive of rendered HTML (30–80 KB a page, varied structure, English and
Japanese text, a few malformed bits) through the archive API in a child process, then runs ``analyze`` in
another child process while this process samples the RSS of that child's whole process tree (main process,
forkserver, analyzer workers) from /proc. Prints pages/s per analyzer and the peak tree RSS, then runs again
on the same commit (the done-set and results cache: nothing is recomputed) and on a new commit with the
same pages (results copied from the cache by HTML hash).

    python benchmarks/analyze_throughput.py                 # 2000 and 10000 pages
    python benchmarks/analyze_throughput.py --sizes 500     # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))

WANTED = ("markup", "text", "search", "main-contents")
SITE = "https://bench.example"
SECTIONS = ("news", "products", "support", "blog", "company", "docs", "events", "careers")
BATCH = 500
WORDS = (
    "audit",
    "website",
    "quality",
    "content",
    "search",
    "engine",
    "page",
    "link",
    "image",
    "reader",
    "accessible",
    "mobile",
    "performance",
    "layout",
    "customer",
    "service",
    "product",
    "release",
    "update",
    "team",
    "design",
    "structure",
    "heading",
    "paragraph",
    "navigation",
    "footer",
    "article",
    "section",
)
JA = (
    "本サービスはウェブサイトの品質を自動で点検します。",
    "ページの見出し構造を確認してください。",
    "画像には代替テキストを設定する必要があります。",
    "お問い合わせはフォームからお願いします。",
    "新製品の発売日は来月の予定である。",
    "詳しくはサポートページをご覧ください。",
    "ﾒﾝﾃﾅﾝｽのお知らせ：サーバーの停止を予定しています。",
    "私はは毎日サイトを確認しています。",
    "ＡＢＣ株式会社とABC株式会社の表記が混在しています。",
    "検索エンジンからの流入が増加しました。",
    "このページでは、利用規約とプライバシーポリシーについて説明します。",
    "会員登録は無料です。",
)


# --- synthetic rendered pages ---------------------------------------------------------------------------


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, japanese: bool) -> str:
    if japanese and rng.random() < 0.6:
        return "".join(rng.choice(JA) for _ in range(rng.randint(3, 8)))
    return " ".join(sentence(rng, rng.randint(8, 22)) for _ in range(rng.randint(3, 7)))


def page_html(i: int, variant: int = 0) -> str:
    """One rendered page; the same (i, variant) always gives the same HTML, different i different HTML."""
    rng = random.Random(i * 7919 + variant)
    japanese = i % 3 == 0
    section = SECTIONS[i % len(SECTIONS)]
    parts = [
        f'<!DOCTYPE html><html lang="{"ja" if japanese else "en"}"><head><meta charset="utf-8">',
        f"<title>Page {i} | {section.title()} | Bench</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="description" content="{sentence(rng, 14)}">',
        *(f'<link rel="stylesheet" href="/static/css/site-{k}.css">' for k in range(rng.randint(2, 6))),
        "<style>"
        + "".join(
            f".c{k}{{margin:{k}px;padding:{k % 7}px;color:#{k * 4097 % 0xFFFFFF:06x}}}"
            for k in range(rng.randint(250, 700))
        )
        + "</style>",
        '<script type="application/ld+json">'
        + json.dumps(
            {
                "@context": "https://schema.org",
                "@type": "Article",
                "headline": f"Page {i}",
                "author": {"@type": "Person", "name": "Bench"},
            }
        )
        + "</script>",
        "<script>window.__STATE__="
        + json.dumps({"items": [{"id": k, "label": sentence(rng, 5)} for k in range(rng.randint(20, 120))]})
        + "</script>",
        "</head><body>",
    ]
    nav = "".join(
        f'<li class="nav-item"><a class="nav-link c{k}" href="/{SECTIONS[k % 8]}/page-{(i + k) % 997}">'
        f"{rng.choice(WORDS).title()}</a></li>"
        for k in range(rng.randint(30, 80))
    )
    parts.append(
        f'<header id="top"><div class="logo"><img src="/logo.svg" alt="Bench"></div>'
        f"<nav><ul>{nav}</ul></nav></header>"
    )
    main_tag = ("main", 'div role="main"', "article", 'div class="content"')[i % 4]
    parts.append(f"<{main_tag}><h1>Page {i}: {sentence(rng, 6)}</h1>")
    for s in range(rng.randint(5, 10)):
        level = 3 if (i % 23 == 0 and s == 1) else 2  # a skipped heading level on some pages
        parts.append(f'<section id="s{s}"><h{level}>{sentence(rng, 5)}</h{level}>')
        for _ in range(rng.randint(2, 5)):
            text = paragraph(rng, japanese)
            if i % 17 == 0 and rng.random() < 0.2:
                text = f"<b>{text}"  # an unclosed formatting element (html5lib reports it)
            parts.append(f'<p class="c{rng.randint(0, 99)}">{text}</p>')
        if rng.random() < 0.5:
            parts.append(
                "<ul>"
                + "".join(f"<li>{sentence(rng, rng.randint(4, 10))}</li>" for _ in range(rng.randint(3, 10)))
                + "</ul>"
            )
        if rng.random() < 0.3:
            rows = "".join(
                "<tr>" + "".join(f"<td>{rng.randint(0, 9999)}</td>" for _ in range(5)) + "</tr>"
                for _ in range(rng.randint(3, 12))
            )
            parts.append(
                f"<table><thead><tr><th>A</th><th>B</th><th>C</th><th>D</th><th>E</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>"
            )
        if rng.random() < 0.6:
            alt = "" if rng.random() < 0.2 else f' alt="{sentence(rng, 3)}"'
            parts.append(
                f'<figure><img src="/media/{i}-{s}.jpg" width="640" height="360"{alt}>'
                f"<figcaption>{sentence(rng, 6)}</figcaption></figure>"
            )
        parts.append("</section>")
    if i % 29 == 0:
        parts.append('<div id="s1">duplicate id</div><a href="/x"></a>')
    parts.append(f"</{main_tag.split()[0]}>")
    parts.append(
        "<aside>"
        + "".join(
            f'<div class="card c{k}"><a href="/{section}/related-{k}">'
            f"{sentence(rng, 4)}</a><p>{sentence(rng, 12)}</p></div>"
            for k in range(rng.randint(3, 10))
        )
        + "</aside>"
    )
    parts.append(
        "<footer>"
        + "".join(f'<a href="/footer/{k}">{rng.choice(WORDS)}</a> ' for k in range(40))
        + '<form><label for="q">Search</label><input id="q" name="q"><button>Go</button></form>'
        + "</footer></body></html>"
    )
    return "".join(parts)


def build(target: Path, pages: int, variant: int = 0) -> dict[str, Any]:
    """Write one crawl commit of ``pages`` HTML pages through the archive API; returns size figures."""
    from nitpicker_core.archive import ArchiveWriter
    from nitpicker_core.records import ScrapeResult

    writer = ArchiveWriter.open(target)
    commit = writer.begin_commit()
    total = 0
    for start in range(0, pages, BATCH):
        batch = []
        for i in range(start, min(pages, start + BATCH)):
            html = page_html(i, variant)
            total += len(html.encode())
            url = f"{SITE}/" if i == 0 else f"{SITE}/{SECTIONS[i % 8]}/page-{i}"
            batch.append(
                ScrapeResult(
                    url=url,
                    status=200,
                    status_text="OK",
                    content_type="text/html",
                    content_length=len(html),
                    metadata={"title": f"Page {i}"},
                    html=html,
                )
            )
        writer.put_pages(commit, batch)
    writer.finish_commit(commit, "complete")
    writer.write()
    writer.close(remove_stub=True)
    return {
        "pages": pages,
        "html_mb": round(total / 1e6, 1),
        "archive_mb": round(target.stat().st_size / 1e6, 1),
    }


# --- the analyze child ----------------------------------------------------------------------------------


def run_analyze(archive: Path, names: list[str]) -> dict[str, Any]:
    from nitpicker_core.analyze import analyze
    from nitpicker_core.config import load_config
    from nitpicker_core.plugins import make_plugin_manager

    pm = make_plugin_manager()
    config = load_config(pm, data={"plugins": {"search": {"keywords": ["quality", "/品質|検索/", "page"]}}})
    pm.configure_plugins(config)
    marks: dict[str, list[float]] = {}

    def progress(name: str, done: int, total: int, violations: int) -> None:
        now = time.perf_counter()
        marks.setdefault(name, [now, now])[1] = now

    started = time.perf_counter()
    run = analyze(pm, config, archive, names, progress=progress)
    elapsed = time.perf_counter() - started
    seconds, previous = {}, started
    for name in names:  # analyzers run one after another: each one's span ends at its last page
        end = marks.get(name, [previous, previous])[1]
        seconds[name] = end - previous
        previous = end
    return {"seconds": elapsed, "per_analyzer": seconds, "summary": run.summary()}


# --- measuring ------------------------------------------------------------------------------------------


def _tree_rss(pid: int) -> int:
    """RSS in bytes of ``pid`` and all its descendants (from /proc)."""
    from nitpicker_core.analyze.pool import descendants

    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
    return total


def measured(args: list[str]) -> tuple[dict[str, Any], int]:
    """Run this script with ``args`` in a child; returns its JSON output and the peak RSS of its tree."""
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"child {' '.join(args[:2])} failed with exit code {proc.returncode}")
    return json.loads(out), peak


def available() -> tuple[list[str], list[str]]:
    from nitpicker_core.analyze import analyzer_registry
    from nitpicker_core.plugins import make_plugin_manager

    registered = set(analyzer_registry(make_plugin_manager()).names())
    return [n for n in WANTED if n in registered], [n for n in WANTED if n not in registered]


def bench(size: int, workdir: Path, names: list[str]) -> dict[str, Any]:
    archive = workdir / f"bench-{size}.nitpicker"
    archive.unlink(missing_ok=True)
    started = time.perf_counter()
    built, _ = measured(["--build", str(archive), "--pages", str(size)])
    print(
        f"\n== {size} pages: {built['html_mb']} MB of HTML ({built['html_mb'] * 1000 / size:.0f} KB a page), "
        f"archive {built['archive_mb']} MB, written in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    first, peak1 = measured(["--analyze", str(archive), *names])
    print(f"first run:  {first['seconds']:7.1f} s, peak RSS of the process tree {peak1 / 2**20:,.0f} MiB")
    for name in names:
        s = first["summary"]["analyzers"][name]
        secs = first["per_analyzer"][name]
        print(
            f"  {name:<14} {size / secs if secs else 0:7.1f} pages/s  ({secs:6.1f} s, {s['violations']} violations, "
            f"{s['errors']} errors, {s['timeouts']} timeouts)"
        )
    second, peak2 = measured(["--analyze", str(archive), *names])
    cached = sum(second["summary"]["analyzers"][n]["cached"] for n in names)
    print(
        f"second run, same commit: {second['seconds']:6.1f} s ({first['seconds'] / second['seconds']:.0f}× faster, "
        f"{cached}/{size * len(names)} page results reused), peak RSS {peak2 / 2**20:,.0f} MiB"
    )
    measured(["--build", str(archive), "--pages", str(size)])  # a new commit with the very same pages
    third, peak3 = measured(["--analyze", str(archive), *names])
    cached = sum(third["summary"]["analyzers"][n]["cached"] for n in names)
    print(
        f"new commit, same pages:  {third['seconds']:6.1f} s ({first['seconds'] / third['seconds']:.0f}× faster, "
        f"{cached}/{size * len(names)} copied from the cache), peak RSS {peak3 / 2**20:,.0f} MiB",
        flush=True,
    )
    return {
        "size": size,
        "first": first["seconds"],
        "peak": peak1,
        "second": second["seconds"],
        "third": third["seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="2000,10000", help="comma-separated page counts (default: 2000,10000)"
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the archives go (default: a temp dir)"
    )
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--pages", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--analyze", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print(json.dumps(build(args.build, args.pages)))
        return
    if args.analyze:
        print(json.dumps(run_analyze(args.analyze, args.names)))
        return
    names, missing = available()
    print(
        f"analyzers: {', '.join(names) or 'none'}" + (f"; missing: {', '.join(missing)}" if missing else "")
    )
    if not names:
        raise SystemExit("none of the benchmarked analyzers is registered")
    print(f"{os.cpu_count()} CPUs; workers per analyzer: min(concurrency, CPUs)")
    with tempfile.TemporaryDirectory(prefix="nitpicker-analyze-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        results = [bench(int(size), workdir, names) for size in args.sizes.split(",")]
    if len(results) >= 2:
        small, big = results[0], results[-1]
        growth = (big["peak"] - small["peak"]) / small["peak"] * 100
        print(
            f"\npeak RSS {small['size']} → {big['size']} pages: {small['peak'] / 2**20:,.0f} → "
            f"{big['peak'] / 2**20:,.0f} MiB ({growth:+.0f} %; target within ±20 % and < 1.5 GB)"
        )
    for r in results:
        print(
            f"{r['size']} pages: second run {r['first'] / r['second']:.0f}× faster than the first (target ≥ 10×)"
        )


if __name__ == "__main__":
    main()
