"""Source of the ``probe`` test plugin (written into a throwaway distribution by the tests)."""

SOURCE = '''
import multiprocessing
import os
import time

from nitpicker_core import Analyzer, Cell, Column, PageReport, UsageError, Violation, hookimpl


def log(settings, line):
    if settings.get("log"):
        with open(settings["log"], "a") as f:
            f.write(line + "\\n")


class Probe(Analyzer):
    name = "probe"
    label = "Probe"
    version = "1"
    columns = (Column("length", "Length"), Column("pid", "Worker pid"))
    concurrency = 2
    timeout = 30

    def check(self, settings):
        if settings.get("usage_error"):
            raise UsageError("probe: these settings make no sense")

    def setup(self, settings):
        self.settings = settings
        if settings.get("fail_in_workers") and multiprocessing.parent_process() is not None:
            raise RuntimeError("no workers today")
        log(settings, f"setup {os.getpid()}")

    def teardown(self):
        log(self.settings, f"teardown {os.getpid()}")

    def each_page(self, page):
        log(page.settings, f"page {page.url}")
        if "hang" in page.url:
            time.sleep(600)  # the scenario: a page that never finishes (the pool must time it out)
        if "boom" in page.url:
            raise ValueError("boom page")
        if "crash" in page.url:
            os._exit(3)
        bad = [Violation("has-bad", "the page says bad", "warning", snippet="bad")] if "bad" in page.html else []
        return PageReport({"length": len(page.html), "pid": os.getpid(), "words": Cell(page.settings["words"], "n"),
                           "html_in_metadata": "html" in page.metadata}, bad)


class SourceProbe(Probe):
    """Reads the HTML the server sent; says which HTML it got; leaves a check out on pages saying "big"."""

    name = "source-probe"
    reads = "source"

    def each_page(self, page):
        report = super().each_page(page)
        report.cells["kind"] = page.html_kind
        if "big" in page.html:
            report.skipped = {"big-rule": "the page is too big"}
        return report


class Recycler(Probe):
    name = "recycler"
    concurrency = 1
    pages_per_worker = 2


class BrowserProbe(Analyzer):
    """Launches Chromium once per worker and logs the pids of the worker and everything it started."""

    name = "browser-probe"
    concurrency = 1
    timeout = 30

    def setup(self, settings):
        from playwright.sync_api import sync_playwright

        from nitpicker_core.analyze.pool import descendants
        from nitpicker_core.crawler.browser import browser_args, find_browser

        self.settings = settings
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=find_browser(), args=browser_args())
        log(settings, "pids " + " ".join(map(str, [os.getpid(), *descendants(os.getpid())])))

    def teardown(self):
        self.browser.close()
        self.playwright.stop()

    def each_page(self, page):
        tab = self.browser.new_page()
        tab.set_content(page.html)
        title = tab.title()
        tab.close()
        if "hang" in page.url:
            time.sleep(600)  # the scenario: a page that never finishes (the pool must time it out)
        return PageReport({"title": title})


@hookimpl
def register_settings(register):
    register("log", default="")
    register("words", type="list", default=[])
    register("fail_in_workers", type="bool", default=False)
    register("usage_error", type="bool", default=False)
    register("reads", default="")


@hookimpl
def register_analyzers(register):
    register(Probe())
    register(Recycler())
    register(SourceProbe())
    register(BrowserProbe())
'''
