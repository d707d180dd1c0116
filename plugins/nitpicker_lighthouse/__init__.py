"""Built-in analyzer `lighthouse`: the Lighthouse CLI run against each page's live URL in Chromium."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker_core import Analyzer, Register, RegisterSetting, hookimpl

from .analyzer import CATEGORIES, LighthouseAnalyzer
from .runner import find_chromium, find_lighthouse

if TYPE_CHECKING:
    from nitpicker_core import Config


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "binary",
        default="",
        help="the lighthouse executable; empty: lighthouse on PATH, "
        "else the one bin/install-lighthouse installs",
    )
    register(
        "categories",
        type="list",
        default=list(CATEGORIES),
        help="categories to audit: performance, accessibility, best-practices, seo",
    )
    register("preset", default="", help="Lighthouse preset: desktop, perf or experimental; empty: mobile")
    register("locale", default="", help="language of Lighthouse's audit titles, e.g. ja; empty: English")
    register("timeout", type="float", default=150.0, help="seconds allowed for one page's audit")


@hookimpl
def configure(config: Config) -> None:
    settings = config.settings_for("lighthouse")
    # NotConfigured: `nitpicker plugins` lists lighthouse as unavailable with the reason
    find_lighthouse(settings.get("binary") or "")
    find_chromium()


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(LighthouseAnalyzer())
