"""Runs the declared stages in order, journaling each step; on resume, reuses what is still valid."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from typing import Any

from nitpicker_core.archive import open_archive
from nitpicker_core.pipeline import verdict
from nitpicker_core.pipeline.journal import Journal, classify, failure_class
from nitpicker_core.pipeline.stages import STAGE_TYPES, Context, StageFailed
from nitpicker_core.query import query_registry

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 5.0


class Heartbeat:
    """A daemon thread that journals the running stage's progress every few seconds."""

    def __init__(self, journal: Journal, ctx: Context, every: float) -> None:
        self.journal, self.ctx, self.every = journal, ctx, every
        self.stage: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nitpicker-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            stage = self.stage
            if stage is None:
                continue
            try:  # the run mutates the progress while we copy it: a failed copy waits for the next beat
                progress = json.loads(json.dumps(self.ctx.progress, default=str))
            except (RuntimeError, ValueError):
                continue
            try:
                self.journal.append("heartbeat", stage=stage, progress=progress)
            except OSError:  # a full disk must not kill the beat for good
                log.warning("cannot write a heartbeat to the journal", exc_info=True)


def analyze_exit_code(outputs: dict[str, Any], code: int) -> int:
    """``nitpicker analyze``'s rule on top of the crawl's code: 1 when an analyzer failed on every page."""
    return 1 if outputs.get("failed") else code


def crawl_exit_code(outputs: dict[str, Any], strict: bool) -> int:
    """The crawl's rules: 1 for in-scope errors, 2 when only external links failed (1 with --strict)."""
    if outputs.get("internal_errors"):
        return 1
    if outputs.get("external_errors"):
        return 1 if strict else 2
    return 0


class Pipeline:
    def __init__(self, ctx: Context, journal: Journal, *, heartbeat: float = HEARTBEAT_SECONDS) -> None:
        self.ctx, self.journal, self.heartbeat_every = ctx, journal, heartbeat

    def start(self, resumed: bool) -> None:
        self.journal.append(
            "run_resumed" if resumed else "run_started",
            declaration=self.ctx.declaration,
            pid=os.getpid(),
            host=socket.gethostname(),
        )

    def run(self) -> tuple[int, dict[str, Any]]:
        """Every stage in order; returns the exit code and a summary. Never raises for a stage failure."""
        ctx, journal = self.ctx, self.journal
        decl = ctx.declaration
        summary: dict[str, Any] = {"run": journal.run_id, "archive": decl["archive"], "stages": {}}
        rerun_from: str | None = None
        code = 0
        with Heartbeat(journal, ctx, self.heartbeat_every) as beat:
            for name in decl["stages"]:
                stage = STAGE_TYPES[name]()
                if name == "report":  # the verdict gates the report; without one it comes last
                    stopped = self._verdict(summary)
                    if stopped is not None:
                        return stopped, summary
                reused = self._reuse(stage, rerun_from)
                if reused is not None:
                    ctx.outputs[name] = reused
                    summary["stages"][name] = {"state": "reused", **reused}
                    if name == "crawl":
                        code = crawl_exit_code(reused, bool(decl["crawl"].get("strict")))
                    elif name == "analyze":
                        code = analyze_exit_code(reused, code)
                    continue
                rerun_from = rerun_from or name
                ctx.progress = {}
                beat.stage = name
                journal.append(
                    "stage_started",
                    stage=name,
                    inputs=list(stage.inputs),
                    declared_outputs=list(stage.outputs),
                )
                started = time.monotonic()
                try:
                    outputs = stage.run(ctx)
                except BaseException as exc:
                    beat.stage = None
                    log.debug("stage %s failed", name, exc_info=True)  # the traceback, with --verbose
                    reason, kind = (
                        (exc.reason, failure_class(exc.reason))
                        if isinstance(exc, StageFailed)
                        else classify(exc)
                    )
                    journal.append(
                        "stage_failed", stage=name, reason=reason, **{"class": kind}, message=str(exc)
                    )
                    summary["stages"][name] = {
                        "state": "failed",
                        "reason": reason,
                        "class": kind,
                        "message": str(exc),
                    }
                    code = 130 if reason == "interrupted" else 1
                    journal.append(
                        "run_finished", state="interrupted" if code == 130 else "failed", exit_code=code
                    )
                    if not isinstance(exc, (StageFailed, Exception)):
                        raise  # KeyboardInterrupt / SystemExit: journaled, then let it through
                    return code, summary
                beat.stage = None
                outputs["seconds"] = round(time.monotonic() - started, 3)
                ctx.outputs[name] = outputs
                journal.append("stage_finished", stage=name, outputs=outputs)
                summary["stages"][name] = {"state": "done", **outputs}
                if name == "crawl":
                    code = crawl_exit_code(outputs, bool(decl["crawl"].get("strict")))
                elif name == "analyze":
                    code = analyze_exit_code(outputs, code)
            if "report" not in decl["stages"]:
                stopped = self._verdict(summary)
                if stopped is not None:
                    return stopped, summary
        journal.append("run_finished", state="complete", exit_code=code)
        return code, summary

    def _reuse(self, stage: Any, rerun_from: str | None) -> dict[str, Any] | None:
        """The stage's earlier outputs when they are still valid; a mismatch is journaled, never fatal."""
        previous = self.ctx.previous
        if previous is None:
            return None
        if rerun_from is not None:
            self.journal.append("stage_mismatch", stage=stage.name, reason=f"{rerun_from} ran again")
            return None
        earlier = previous.stages.get(stage.name)
        if not earlier or earlier.get("state") not in ("done", "reused") or not earlier.get("outputs"):
            state = (earlier or {}).get("state", "pending")
            self.journal.append("stage_mismatch", stage=stage.name, reason=f"not finished earlier ({state})")
            return None
        try:
            problem = stage.check(self.ctx, earlier["outputs"])
        except Exception as exc:  # an output that cannot even be checked is not valid
            problem = f"cannot check the earlier output: {exc}"
        if problem is not None:
            self.journal.append("stage_mismatch", stage=stage.name, reason=problem)
            return None
        self.journal.append("stage_reused", stage=stage.name, outputs=earlier["outputs"])
        return dict(earlier["outputs"])

    def _verdict(self, summary: dict[str, Any]) -> int | None:
        """Apply the --fail-on thresholds to the commit; a failed verdict stops the run (exit 3)."""
        thresholds = [verdict.parse(t) for t in self.ctx.declaration.get("fail_on") or []]
        crawl = self.ctx.outputs.get("crawl")
        if not thresholds or not crawl:
            return None

        with open_archive(self.ctx.archive) as reader:
            result = verdict.evaluate(thresholds, reader, crawl["commit"], query_registry(self.ctx.pm))
        self.journal.append("verdict", **result)
        summary["verdict"] = result
        if result["passed"]:
            return None
        self.journal.append("run_finished", state="stopped", exit_code=verdict.EXIT_GATE_FAILED)
        return verdict.EXIT_GATE_FAILED
