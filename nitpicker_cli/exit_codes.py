"""The exit codes of every `nitpicker` command, in one table shown by `--help` (and copied in docs/reference/exit-codes.md)."""

from __future__ import annotations

from nitpicker_core.pipeline.verdict import EXIT_GATE_FAILED

OK = 0
ERROR = 1
WARNING = 2
GATE_FAILED = EXIT_GATE_FAILED
INTERRUPTED = 130

TABLE = (
    (OK, "success"),
    (
        ERROR,
        "an error: bad arguments, an unreadable archive, a failed stage, in-scope URLs that failed, a crash",
    ),
    (WARNING, "a warning: only external links failed (crawl, pipeline; --strict makes it 1)"),
    (GATE_FAILED, "the quality gate failed: a --fail-on of `issues` or `pipeline` holds"),
    (INTERRUPTED, "interrupted (Ctrl-C, SIGTERM or SIGHUP)"),
)


def epilog() -> str:
    """The table as a help epilog; ``\\b`` keeps click from rewrapping its lines."""
    return "\b\nExit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in TABLE)
