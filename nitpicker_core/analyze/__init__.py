"""Analyze: run registered analyzers over one archive commit and store their results with it."""

from nitpicker_core.analyze.engine import (
    AnalyzerSummary,
    AnalyzeRun,
    analyze,
    analyzer_registry,
    default_names,
    run_analyze,
)

__all__ = ["AnalyzeRun", "AnalyzerSummary", "analyze", "analyzer_registry", "default_names", "run_analyze"]
