"""The CPU of reading one page without a browser (`crawl_parse`, `--render never`), against lxml's parse alone.

Each HTML file of a folder (Python's docs by default: ``apt-get install -y python3.11-doc``) is read as the
crawler reads a page it does not render: the default ``crawl_parse`` hookimpl of the scrape plugin on a
ScrapeResult as the fetch builds it (a URL on 127.0.0.1, the headers Python's ``http.server`` sends), one
thread, one page after the other. The floor, measured in the same process and alternated with it round by
round so machine load hits both alike, is ``lxml.html.document_fromstring`` of the same text: no reader of
the page can cost less. The figure is CPU (``time.process_time``) per page, the median of the rounds.

A last round runs with a timer around each step (decoding, the parse, the document's lookups, metadata,
anchors and their places, headings, tags, words, resources, images, JSON-LD, the html facts), each step's
own time without the steps it calls; "other" is what the steps leave over. The timers cost a little, so
that round's total is shown apart from the figure.

``--contention`` measures the reader under threads instead: one thread reads the pages over and over while
the main thread sleeps 0.5 ms 2,000 times, as a thread waiting on I/O does; shown, how late the main thread
gets the GIL back (the median and the 90th percentile) and how many pages the reading thread read meanwhile.

``--save FILE`` pickles every page's output (every ScrapeResult field, html_facts among them) and
``--compare FILE`` exits 1 when any page's output differs from the saved one, listing the first
differences: save before a change, compare after, and the change is shown to read every page the same.

    .venv/bin/python benchmarks/parse_cpu.py --rounds 5
    .venv/bin/python benchmarks/parse_cpu.py --save /tmp/before.pickle   # then, after the change:
    .venv/bin/python benchmarks/parse_cpu.py --compare /tmp/before.pickle
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import pickle
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html

from nitpicker_core import CrawlContext, ScrapeResult

SOURCE = Path("/usr/share/doc/python3.11/html")
ORIGIN = "http://127.0.0.1:8766/"
HEADERS = {"server": "SimpleHTTP/0.6 Python/3.11.2", "content-type": "text/html"}


def pages(folder: Path, limit: int | None) -> list[tuple[str, bytes]]:
    """(URL, body) of each HTML file under ``folder``, in a stable order."""
    found = sorted(p for p in folder.rglob("*.html") if p.is_file())
    return [(ORIGIN + p.relative_to(folder).as_posix(), p.read_bytes()) for p in found[:limit]]


def fresh(url: str, body: bytes) -> ScrapeResult:
    """The ScrapeResult the crawler hands ``crawl_parse``: the answer's record, before the page is read."""
    headers = {**HEADERS, "content-length": str(len(body))}
    return ScrapeResult(
        url=url,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(body),
        headers=headers,
        response_ms=1,
        http_version="http/1.1",
    )


def output(result: ScrapeResult) -> dict[str, Any]:
    return dataclasses.asdict(result)


def run_parse(crawl_parse: Callable[..., ScrapeResult], docs: list[tuple[str, bytes]], crawl: Any) -> float:
    """CPU seconds of ``crawl_parse`` over every page."""
    started = time.process_time()
    for url, body in docs:
        crawl_parse(result=fresh(url, body), body=body, crawl=crawl)
    return time.process_time() - started


def run_floor(texts: list[str]) -> float:
    """CPU seconds of lxml's parse alone over every page's text."""
    started = time.process_time()
    for text in texts:
        try:
            lxml.html.document_fromstring(text)
        except (ValueError, lxml.etree.ParserError):  # as crawl_parse: a page it records as unparsable
            pass
    return time.process_time() - started


class Steps:
    """Timers around named functions: each one's own CPU time, the time of the timed functions it calls left
    out (a stack of the running timers)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list[float]] = []  # [started, time of timed callees] per running timer

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [time.process_time(), 0.0]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.process_time() - frame[0]
                self._stack.pop()
                self.seconds[name] = self.seconds.get(name, 0.0) + spent - frame[1]
                if self._stack:
                    self._stack[-1][1] += spent

        return timed


# (step, module, attribute): what is timed, where the reader looks it up; a name a version of the reader
# does not have is left out
STEPS = (
    ("decode", "parse", "encoding_of"),
    ("decode", "source", "decode_sent"),
    ("parse", "lxml.html", "document_fromstring"),  # the page's before, the canonical reader's head always
    ("parse", "parse", "_fromstring"),
    ("document", "parse", "_Document"),
    ("metadata", "parse", "_metadata"),
    ("anchors: places", "parse", "_Places"),
    ("anchors", "parse", "_anchors"),
    ("anchors", "parse", "anchors_from"),
    ("headings", "parse", "_headings"),
    ("headings", "parse", "headings_from"),
    ("json-ld", "parse", "_scripts"),
    ("json-ld", "parse", "jsonld_from"),
    ("tags", "parse", "_probe"),
    ("tags", "tags", "detect"),
    ("images", "parse", "_images"),
    ("resources", "parse", "_resources"),
    ("words", "parse", "_words"),
    ("html facts", "plugin", "derive_html_facts"),
)


@contextmanager
def timed_steps(steps: Steps) -> Iterator[None]:
    import nitpicker_scrape as plugin
    from nitpicker_scrape import parse, source, tags

    modules = {"parse": parse, "source": source, "tags": tags, "plugin": plugin, "lxml.html": lxml.html}
    saved = []
    for name, module_name, attribute in STEPS:
        module = modules[module_name]
        if hasattr(module, attribute):
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, steps.wrap(name, getattr(module, attribute)))
    try:
        yield
    finally:
        for module, attribute, original in reversed(saved):
            setattr(module, attribute, original)


def contention(crawl_parse: Callable[..., ScrapeResult], docs: list[tuple[str, bytes]], crawl: Any) -> None:
    """The main thread's wake-ups while another thread reads pages: how late, and how many pages read."""
    stop = threading.Event()
    done = [0]

    def reader() -> None:
        while not stop.is_set():
            for url, body in docs:
                if stop.is_set():
                    break
                crawl_parse(result=fresh(url, body), body=body, crawl=crawl)
                done[0] += 1

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.5)
    late = []
    started, counted = time.perf_counter(), done[0]
    for _ in range(2000):
        asleep = time.perf_counter()
        time.sleep(0.0005)
        late.append(time.perf_counter() - asleep - 0.0005)
    wall, pages = time.perf_counter() - started, done[0] - counted
    stop.set()
    thread.join()
    late.sort()
    print(
        f"2000 wake-ups of the main thread in {wall:.2f} s: late by {statistics.median(late) * 1000:.2f} ms "
        f"(median), {late[1800] * 1000:.2f} ms (90th percentile); {pages} pages read meanwhile"
    )


def differences(before: dict[str, Any], after: dict[str, Any], limit: int = 20) -> list[str]:
    """The first ``limit`` differences between two saved runs, page by page and field by field."""
    found: list[str] = []
    for url in sorted(before.keys() | after.keys()):
        if url not in after or url not in before:
            found.append(f"{url}: only in the {'saved' if url in before else 'new'} run")
            continue
        old, new = before[url], after[url]
        for key in sorted(old.keys() | new.keys()):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            if isinstance(a, list) and isinstance(b, list):
                at = next(
                    (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
                )
                x = a[at] if at < len(a) else "(none)"
                y = b[at] if at < len(b) else "(none)"
                found.append(f"{url}: {key}[{at}] of {len(a)}/{len(b)}: {x!r} → {y!r}")
            else:
                found.append(f"{url}: {key}: {str(a)[:300]!r} → {str(b)[:300]!r}")
            if len(found) >= limit:
                return found
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=SOURCE, help=f"HTML files (default {SOURCE})")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds over every page (default 5)")
    parser.add_argument("--limit", type=int, help="only the first N pages")
    parser.add_argument(
        "--images", action="store_true", help="read images too (the docs crawl is --no-image)"
    )
    parser.add_argument("--contention", action="store_true", help="the reader in a thread, the GIL's waits")
    parser.add_argument("--save", type=Path, help="pickle every page's output to FILE")
    parser.add_argument("--compare", type=Path, help="exit 1 when any page's output differs from FILE's")
    args = parser.parse_args()
    if not args.folder.is_dir():
        print(f"parse_cpu: no folder {args.folder} (apt-get install -y python3.11-doc)", file=sys.stderr)
        return 2
    if args.compare and not args.compare.is_file():
        print(f"parse_cpu: no saved output {args.compare} (make it with --save first)", file=sys.stderr)
        return 2
    from nitpicker_scrape import crawl_parse, parse, source

    docs = pages(args.folder, args.limit)
    if not docs:
        print(f"parse_cpu: no HTML files under {args.folder}", file=sys.stderr)
        return 2
    crawl = CrawlContext(output=Path("/dev/null"), roots=[ORIGIN], options={"image": args.images})
    # the floor parses the text crawl_parse parses: decoded as declared, newlines as the tokenizer counts them
    texts = [source.decode_sent(body, parse.encoding_of(body, "text/html")) for _, body in docs]
    texts = [t.replace("\r\n", "\n").replace("\r", "\n") for t in texts]
    n = len(docs)
    print(f"{n} pages, {sum(len(b) for _, b in docs) / n / 1024:.1f} KiB a page, images {args.images}")

    if args.save or args.compare:
        outputs = {
            url: output(crawl_parse(result=fresh(url, body), body=body, crawl=crawl)) for url, body in docs
        }
        if args.save:
            args.save.write_bytes(pickle.dumps(outputs))
            print(f"saved {len(outputs)} pages' output to {args.save}")
        if args.compare:
            found = differences(pickle.loads(args.compare.read_bytes()), outputs)
            if found:
                print(f"DIFFERENT from {args.compare}:")
                for line in found:
                    print("  " + line)
                return 1
            print(f"identical to {args.compare}: {len(outputs)} pages")

    run_parse(crawl_parse, docs[:20], crawl)  # warm: imports, regex caches
    if args.contention:
        contention(crawl_parse, docs, crawl)
        return 0
    ours, floor = [], []
    for i in range(args.rounds):
        if i % 2:
            ours.append(run_parse(crawl_parse, docs, crawl))
            floor.append(run_floor(texts))
        else:
            floor.append(run_floor(texts))
            ours.append(run_parse(crawl_parse, docs, crawl))
        print(
            f"round {i + 1}: crawl_parse {ours[-1] / n * 1000:.2f} ms/page, lxml parse {floor[-1] / n * 1000:.2f}"
        )
    a, b = statistics.median(ours) / n * 1000, statistics.median(floor) / n * 1000
    print(
        f"crawl_parse: {a:.2f} ms CPU a page (median of {args.rounds}); floor (lxml parse): {b:.2f}; × {a / b:.2f}"
    )

    steps = Steps()
    with timed_steps(steps):
        total = run_parse(crawl_parse, docs, crawl)
    print(f"steps, one round with timers ({total / n * 1000:.2f} ms a page with them):")
    for name, seconds in sorted(steps.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<16} {seconds / n * 1000:6.2f} ms  {seconds / total:6.1%}")
    other = total - sum(steps.seconds.values())
    print(f"  {'other':<16} {other / n * 1000:6.2f} ms  {other / total:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
