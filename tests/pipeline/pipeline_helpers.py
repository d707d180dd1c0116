"""Journal helpers shared by the pipeline tests."""

from __future__ import annotations

import json
from pathlib import Path


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def kinds(evs: list[dict], *, heartbeats: bool = False) -> list[str]:
    """Event kinds with their stage, e.g. ``stage_started:crawl``; heartbeats left out by default."""
    return [
        f"{e['event']}:{e['stage']}" if e.get("stage") else e["event"]
        for e in evs
        if heartbeats or e["event"] != "heartbeat"
    ]


def journal_of(archive: Path) -> Path:
    (journal,) = sorted((archive.parent / (archive.name + ".runs")).glob("*.jsonl"))
    return journal


def process_tree(pid: int) -> list[int]:
    """``pid`` and every live descendant, read from /proc (to kill a whole run, browser included)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rfind(")") + 2 :].split()[1]), []).append(int(entry.name))
    found, todo = [pid], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found
