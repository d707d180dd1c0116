"""Pipeline engine: crawl → analyze → report as stages of one journaled, resumable run."""

from nitpicker_core.pipeline.journal import (
    Journal,
    classify,
    find_journal,
    new_run_id,
    read_events,
    runs_dir_for,
)
from nitpicker_core.pipeline.runner import Pipeline
from nitpicker_core.pipeline.stages import Context, StageFailed
from nitpicker_core.pipeline.state import Monitor, RunState, replay

__all__ = [
    "Context",
    "Journal",
    "Monitor",
    "Pipeline",
    "RunState",
    "StageFailed",
    "classify",
    "find_journal",
    "new_run_id",
    "read_events",
    "replay",
    "runs_dir_for",
]
