"""Replays journals into run states: per stage, live progress, hung detection; incremental, for the dashboard."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nitpicker_core.pipeline.journal import failure_class, iter_lines, journals_in

STAGES = ("crawl", "analyze", "report")
STALE_AFTER = 30.0
# The crawler may spend 60 s on one navigation after up to 100 s of preflight retries: counts that have not
# moved for longer than that, while heartbeats keep coming, mean the stage is stuck, not slow.
STALL_AFTER = 300.0
_ABS_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s/'\"]+/)+([^\s/'\"]*)")


def scrub(text: str) -> str:
    """Messages shown outside the run keep file names, never absolute directories."""
    return _ABS_PATH.sub(r"\1", text)


@dataclass
class RunState:
    """What a journal says so far; ``feed`` one event at a time (the journal is replayed incrementally)."""

    run_id: str = ""
    declaration: dict[str, Any] = field(default_factory=dict)
    state: str = "unknown"
    started_at: str | None = None
    finished_at: str | None = None
    exit_code: int | None = None
    last_ts: float = 0.0
    resumes: int = 0
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    verdict: dict[str, Any] | None = None
    events: int = 0

    def stage(self, name: str) -> dict[str, Any]:
        return self.stages.setdefault(
            name,
            {
                "name": name,
                "state": "pending",
                "progress": {},
                "outputs": None,
                "failure": None,
                "started_at": None,
                "finished_at": None,
                "notes": [],
            },
        )

    def feed(self, ev: dict[str, Any]) -> None:
        kind = ev.get("event")
        self.events += 1
        self.last_ts = max(self.last_ts, float(ev.get("ts") or 0))
        self.run_id = self.run_id or ev.get("run", "")
        if kind in ("run_started", "run_resumed"):
            self.declaration = ev.get("declaration") or {}
            self.state, self.finished_at, self.exit_code, self.verdict = "running", None, None, None
            self.started_at = self.started_at or ev.get("at")
            self.resumes += kind == "run_resumed"
            for stage in self.stages.values():  # a stage the killed process left running: its clock restarts
                if stage["state"] == "running":
                    stage["progress_ts"] = float(ev.get("ts") or 0)
            for name in self.declaration.get("stages", []):
                self.stage(name)
            return
        if kind == "run_finished":
            self.state, self.finished_at, self.exit_code = (
                ev.get("state", "complete"),
                ev.get("at"),
                ev.get("exit_code"),
            )
            return
        if kind == "verdict":
            self.verdict = {"passed": ev.get("passed"), "checks": ev.get("checks", [])}
            return
        name = ev.get("stage")
        if not name:
            return
        stage = self.stage(name)
        if kind == "stage_started":
            stage.update(
                state="running",
                started_at=ev.get("at"),
                finished_at=None,
                failure=None,
                progress={},
                outputs=None,
                mode=ev.get("mode"),
                progress_ts=float(ev.get("ts") or 0),
            )
        elif kind == "heartbeat":
            if stage["state"] != "running":  # a beat taken just before the stage ended, written just after
                return
            progress = ev.get("progress") or {}
            if counters(progress) != counters(stage["progress"]):
                stage["progress_ts"] = float(ev.get("ts") or 0)
            stage["progress"] = progress
        elif kind == "stage_finished":  # a finished stage shows what it produced, not its last heartbeat
            stage.update(
                state="done", finished_at=ev.get("at"), outputs=ev.get("outputs"), failure=None, progress={}
            )
        elif kind == "stage_reused":
            stage.update(
                state="reused", finished_at=ev.get("at"), outputs=ev.get("outputs"), failure=None, progress={}
            )
        elif kind == "stage_skipped":
            stage.update(state="skipped", finished_at=ev.get("at"), note=ev.get("reason"))
        elif kind == "stage_failed":
            reason = ev.get("reason", "internal")
            stage.update(
                state="failed",
                finished_at=ev.get("at"),
                failure={
                    "reason": reason,
                    "class": ev.get("class") or failure_class(reason),
                    "message": scrub(str(ev.get("message", ""))),
                },
            )
        elif kind == "stage_mismatch":
            stage["notes"] = [*stage["notes"][-9:], scrub(str(ev.get("reason", "")))]

    def view(self, now: float, stale_after: float, stall_after: float = STALL_AFTER) -> dict[str, Any]:
        """The run as the dashboard shows it; "running" becomes "hung" when its journal has been silent for
        ``stale_after`` seconds (a dead or frozen process) or its running stage's counts have not moved for
        ``stall_after`` seconds while heartbeats continue (a live process stuck on something)."""
        state, hung = self.state, None
        age = round(now - self.last_ts, 1) if self.last_ts else None
        running = (
            next((s for s in self.stages.values() if s["state"] == "running"), None)
            if state == "running"
            else None
        )
        progress_age = None
        if running is not None and running.get("progress_ts") and counters(running["progress"]):
            progress_age = round(now - running["progress_ts"], 1)  # a stage without counts cannot stall
        if state == "running" and age is not None and age > stale_after:
            state, hung = "hung", {"reason": "silent", "stage": running["name"] if running else None}
        elif running is not None and progress_age is not None and progress_age > stall_after:
            state, hung = "hung", {"reason": "stalled", "stage": running["name"]}
        decl = self.declaration
        stages = [dict(self.stage(n)) for n in decl.get("stages", STAGES) if n in self.stages or n in STAGES]
        failure = next((s["failure"] for s in stages if s.get("failure")), None)
        return {
            "id": self.run_id,
            "state": state,
            "url": decl.get("url"),
            "archive": Path(decl["archive"]).name if decl.get("archive") else None,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "exit_code": self.exit_code,
            "heartbeat_age": age,
            "progress_age": progress_age,
            "hung": hung,
            "resumes": self.resumes,
            "stages": stages,
            "verdict": self.verdict,
            "failure": failure,
            "counts": derived_counts(self.stages),
        }


def counters(progress: Any, prefix: str = "") -> dict[str, float]:
    """The numbers in a stage's progress, flattened: what must move for the stage to count as moving."""
    if isinstance(progress, dict):
        found: dict[str, float] = {}
        for key, value in progress.items():
            found.update(counters(value, f"{prefix}{key}."))
        return found
    if isinstance(progress, (int, float)) and not isinstance(progress, bool):
        return {prefix.rstrip("."): float(progress)}
    return {}


def derived_counts(stages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Headline numbers: a finished stage's outputs, else the last progress of a running or failed one."""
    crawl, analyze = stages.get("crawl") or {}, stages.get("analyze") or {}
    c_out, c_live = crawl.get("outputs") or {}, crawl.get("progress") or {}
    a_out, a_live = analyze.get("outputs") or {}, analyze.get("progress") or {}
    return {
        "pages": c_out.get("pages", c_live.get("internal_done")),
        "rendered": c_out.get("rendered", c_live.get("internal_rendered")),
        "found": c_out.get("pages", c_live.get("internal_found")),
        "crawl_errors": c_out.get("internal_errors"),
        "analyzed": a_out.get("pages", a_live.get("pages")),
        "violations": a_out.get("violations", a_live.get("violations")),
    }


class JournalTail:
    """Reads only what was appended since the last poll; starts over when the file was replaced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.run = RunState(run_id=path.stem)
        self._offset = 0
        self._inode: int | None = None

    def poll(self) -> RunState:
        try:
            st = self.path.stat()
        except OSError:
            return self.run
        if st.st_ino != self._inode or st.st_size < self._offset:
            self.run, self._offset, self._inode = RunState(run_id=self.path.stem), 0, st.st_ino
        if st.st_size > self._offset:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read(st.st_size - self._offset)
            end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next poll
            for event in iter_lines(chunk[:end].decode("utf-8", errors="replace")):
                self.run.feed(event)
            self._offset += end
        return self.run


def replay(path: Path) -> RunState:
    return JournalTail(path).poll()


class Monitor:
    """Every run journal found under some directories, kept up to date poll by poll."""

    def __init__(
        self, directories: list[Path], stale_after: float = STALE_AFTER, stall_after: float = STALL_AFTER
    ) -> None:
        self.directories = directories
        self.stale_after, self.stall_after = stale_after, stall_after
        self.boot_id = f"{os.getpid()}-{time.time_ns()}"
        self._tails: dict[Path, JournalTail] = {}

    def snapshot(self) -> dict[str, Any]:
        now = time.time()
        seen = set()
        for directory in self.directories:
            for path in journals_in(directory):
                seen.add(path)
                self._tails.setdefault(path, JournalTail(path))
        for gone in set(self._tails) - seen:
            del self._tails[gone]
        runs = [tail.poll().view(now, self.stale_after, self.stall_after) for tail in self._tails.values()]
        runs.sort(key=lambda r: (r["started_at"] or "", r["id"]), reverse=True)
        totals = {s: 0 for s in ("running", "hung", "complete", "failed", "stopped", "interrupted")}
        for run in runs:
            totals[run["state"]] = totals.get(run["state"], 0) + 1
        return {
            "boot_id": self.boot_id,
            "generated_at": round(now, 3),
            "stale_after": self.stale_after,
            "stall_after": self.stall_after,
            "directories": [d.name or str(d) for d in self.directories],
            "totals": totals,
            "runs": runs,
        }
