"""Test helpers for nitpicker plugin authors: archives from plain data, one analyzer, a query, the viewer.

The pytest fixtures are in ``nitpicker_testing.pytest_plugin`` (loaded through the ``pytest11`` entry point);
the plain functions behind them are in ``nitpicker_testing.archives`` and ``nitpicker_testing.runs``. Nothing
heavy is imported here: pytest imports this package in every test run of an environment nitpicker is in.
"""
