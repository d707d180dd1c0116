"""Long-lived analyzer workers: rebuilt from plugin names in each process, fed plain data, bounded."""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from nitpicker_core.types import Analyzer, PageInput, PageReport

_WORKER: dict[str, Any] = {}
Task = tuple[str, str, dict[str, Any]]  # url, html, metadata
Outcome = tuple[str, PageReport | None, str | None]  # url, report, error


def build_analyzer(plugin_names: list[str], analyzer: str, values: dict[str, Any]) -> tuple[Analyzer, Any]:
    """Rebuild the plugin manager from entry-point names and return (analyzer, config) in this process."""
    from nitpicker_core.analyze.engine import analyzer_registry
    from nitpicker_core.config import Config, collect_settings
    from nitpicker_core.plugins import make_plugin_manager

    pm = make_plugin_manager(allow=set(plugin_names), deny=set())
    config = Config(collect_settings(pm), dict(values))
    pm.configure_plugins(config)
    return analyzer_registry(pm)[analyzer], config


def _init_worker(plugin_names: list[str], analyzer: str, plugin: str, values: dict[str, Any]) -> None:
    instance, config = build_analyzer(plugin_names, analyzer, values)
    settings = config.settings_for(plugin)
    instance.setup(settings)
    _WORKER.update(analyzer=instance, settings=settings)
    # atexit does not run in pool workers; Finalize does, when the pool shuts the worker down
    multiprocessing.util.Finalize(None, instance.teardown, exitpriority=10)


def call_each_page(analyzer: Analyzer, settings: dict[str, Any], task: Task) -> Outcome:
    url, html, metadata = task
    try:
        report = analyzer.each_page(PageInput(url, html, metadata, settings))  # type: ignore[misc]
        return url, report or PageReport(), None
    except Exception as exc:  # one page failing is this analyzer's error for that page, nothing more
        return url, None, f"{type(exc).__name__}: {exc}".strip() or traceback.format_exc(limit=1)


def _work(task: Task) -> Outcome:
    return call_each_page(_WORKER["analyzer"], _WORKER["settings"], task)


def run_in_pool(size: int, init_args: tuple[Any, ...], tasks: Iterable[Task]) -> Iterator[Outcome]:
    """Yield outcomes in submission order, keeping at most 2 × size tasks in flight (bounded memory)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(size, initializer=_init_worker, initargs=init_args)
    window: deque[Any] = deque()
    try:
        for task in tasks:
            window.append(pool.apply_async(_work, (task,)))
            while len(window) >= 2 * size:
                yield window.popleft().get()
        while window:
            yield window.popleft().get()
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def run_serial(analyzer: Analyzer, settings: dict[str, Any], tasks: Iterable[Task]) -> Iterator[Outcome]:
    """The in-process fallback: for analyzers not loadable by name, or when a pool cannot start."""
    analyzer.setup(settings)
    try:
        for task in tasks:
            yield call_each_page(analyzer, settings, task)
    finally:
        analyzer.teardown()


def pool_size(analyzer: Analyzer, pages: int) -> int:
    wanted = analyzer.concurrency or os.cpu_count() or 1
    return max(1, min(wanted, pages))


def safe_call(func: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    try:
        return func(*args), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
