"""Source of the ``flaky`` test plugin: analyzers that raise on one page and return wrong types on others.

Loaded in-process (``load``) for engine tests and written into a throwaway distribution for the CLI test.
"""

import types

SOURCE = '''
from nitpicker_core import Analyzer, Column, PageReport, Violation, hookimpl


class Flaky(Analyzer):
    """each_page: fine on most pages; raises on /boom; returns wrong types on /wrong, /dict and /cells."""

    name = "flaky"
    label = "Flaky"
    version = "1"
    columns = (Column("length", "Length"),)
    concurrency = 1

    def each_page(self, page):
        if page.url.endswith("/boom"):
            raise ValueError("boom page")
        if page.url.endswith("/wrong"):
            return "not a report"
        if page.url.endswith("/dict"):
            return {"cells": {"length": 1}}
        if page.url.endswith("/cells"):
            return PageReport(cells=[("length", 1)])
        return PageReport({"length": len(page.html)}, [Violation("seen", "the page was seen", "info")])


class FlakyUrls(Analyzer):
    """each_url only: raises on /boom, returns a list on /wrong."""

    name = "flaky-urls"
    label = "Flaky URLs"

    def each_url(self, url, is_external, settings):
        if url.endswith("/boom"):
            raise KeyError("no such key")
        if url.endswith("/wrong"):
            return ["a list"]
        return PageReport({"checked": True})


@hookimpl
def register_analyzers(register):
    register(Flaky())
    register(FlakyUrls())
'''


def load() -> types.ModuleType:
    """The plugin as a fresh module, for ``pm.add_plugin``."""
    module = types.ModuleType("flaky_plugin")
    exec(compile(SOURCE, "flaky_plugin.py", "exec"), module.__dict__)
    return module
