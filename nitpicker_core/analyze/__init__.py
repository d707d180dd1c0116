"""Analyze: run registered analyzers over one archive commit and store their results with it."""

from nitpicker_core.analyze.engine import AnalyzeRun, analyzer_registry, run_analyze

__all__ = ["AnalyzeRun", "analyzer_registry", "run_analyze"]
