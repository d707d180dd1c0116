"""Built-in analyzer `axe`: accessibility violations found by axe-core in each page, rendered in Chromium."""

from __future__ import annotations

from nitpicker_core import Analyzer, Register, RegisterSetting, hookimpl

from .analyzer import AxeAnalyzer


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register("lang", default="", help="language of axe-core's messages, e.g. ja; empty: English")
    register(
        "locale_dir",
        default="",
        help="folder with axe-core locale files <lang>.json; "
        "empty: the axe-core that bin/install-lighthouse installs",
    )
    register(
        "source",
        default="archive",
        help="archive: the stored HTML at its URL, page scripts blocked; "
        "live: load the URL from the site as a visitor would",
    )
    register("tags", type="list", default=[], help="run only rules with these axe tags, e.g. wcag2a,wcag2aa")
    register("timeout", type="float", default=30.0, help="seconds allowed to load one page and to run axe")


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(AxeAnalyzer())
