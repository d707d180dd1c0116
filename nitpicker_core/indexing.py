"""Commit indexing: the registered checks run over a finished commit and their findings stored with it.

The archive stores and reads findings but never runs a check; this service does, with the plugin manager
of the command that made the commit (the crawl, `analyze`, the pipeline), never one found in a global.
The crawler hands the archive sink an ``Indexer`` (``crawl_open_archive``'s ``indexer``); the built-in
sink calls it when a crawl's commit completes, and `analyze` calls ``index_analysis`` when an analyzer's
run completes. Stored findings only make `issues` faster: a commit without them is computed in memory.
"""

from __future__ import annotations

import gc
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from typing import Any

from nitpicker_core.archive import findings_store
from nitpicker_core.archive.reader import ArchiveReader
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.check_context import CheckContext
from nitpicker_core.checks import Check
from nitpicker_core.config import config_of
from nitpicker_core.records import Finding
from nitpicker_core.registries import check_registry, query_registry

__all__ = ["Indexer", "check_settings", "code_versions", "evaluate", "index_analysis", "index_commit"]

log = logging.getLogger(__name__)


class Indexer:
    """Indexes commits with one plugin manager's checks (what ``crawl_open_archive`` receives as ``indexer``)."""

    def __init__(self, pm: Any) -> None:
        self.pm = pm

    def commit(
        self, writer: ArchiveWriter, commit_id: int, *, meanwhile: Callable[[], object] | None = None
    ) -> int:
        """Store the crawl checks' findings on the completed commit; how many checks were stored.

        ``meanwhile``: the writer's work to do while the checks run (``index_commit``)."""
        return index_commit(writer, commit_id, self.pm, meanwhile=meanwhile)

    def analysis(self, writer: ArchiveWriter, commit_id: int, analyzer: str) -> int:
        """Store ``analyzer``'s checks' findings after its run on the commit completed."""
        return index_analysis(writer, commit_id, analyzer, self.pm)


def index_commit(
    writer: ArchiveWriter, commit_id: int, pm: Any, *, meanwhile: Callable[[], object] | None = None
) -> int:
    """Run and store the commit's crawl checks (those of no analyzer); how many checks were stored.

    ``meanwhile``, work on the writer's connection (the link aggregates of the commit just completed), runs
    on the calling thread while the checks read the commit on another; the findings are stored after both
    ended. Its failure is raised (nothing stored); the checks' never is.
    """
    return _index(writer, commit_id, None, pm, meanwhile)


def index_analysis(writer: ArchiveWriter, commit_id: int, analyzer: str, pm: Any) -> int:
    """Run and store ``analyzer``'s checks on the commit; how many checks were stored."""
    return _index(writer, commit_id, analyzer, pm, None)


def _core_version() -> str:
    # nitpicker_core.__version__, read without importing the package root (which reaches the crawler)
    try:
        return _dist_version("nitpicker")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def code_versions(pm: Any, checks: Any) -> dict[str, str]:
    """What made each check's findings (check id → text): its plugin, that plugin's distribution version and
    the values of the settings the check names (``Check.settings``), as ``pm``'s configuration gives them.

    Raises ``SettingsError`` when a check names settings of a plugin whose settings are malformed.
    """
    core = _core_version()
    config = config_of(pm) if any(entry.item.settings for entry in checks.entries()) else None
    versions: dict[str, str] = {}
    dists = {}
    try:
        dists = {
            id(plugin): f"{dist.project_name}=={dist.version}" for plugin, dist in pm.list_plugin_distinfo()
        }
    except Exception:  # noqa: BLE001 - a manager without entry points: the core's version stands for all
        pass
    for entry in checks.entries():
        plugin = pm.get_plugin(entry.plugin) if pm is not None else None
        dist = dists.get(id(plugin), f"nitpicker=={core}")
        versions[entry.name] = f"{entry.plugin}:{dist}"
        if entry.item.settings and config is not None:
            values = config.settings_for(entry.plugin)
            used = {key: values.get(key) for key in entry.item.settings}
            versions[entry.name] += "|settings:" + json.dumps(used, sort_keys=True, ensure_ascii=False)
    return versions


def check_settings(pm: Any) -> None:
    """Raise ``SettingsError`` (one line) when a setting some check reads is malformed: a command that indexes
    or shows findings refuses it before it starts, rather than storing nothing or failing the check."""
    code_versions(pm, check_registry(pm))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a commit's checks run, back as it was after.

    The checks of a large commit hold millions of objects (URL rows, the link graph, findings), none of them
    in a cycle; every full collection walked them all again, a third of the checks' time at 100,000 pages.
    Reference counting still frees them; what a cycle holds waits for the next collection after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def evaluate(check: Check, ctx: CheckContext) -> tuple[set[Finding], str | None]:
    """The check's findings on ``ctx``'s commit, or its error in one line (plugin code may fail)."""
    try:  # one check's failure is that check's row, never the whole build
        found = set(check.findings(ctx)) if check.findings is not None else set()
        wrong = (
            next((f for f in found if not isinstance(f, Finding)), None)
            if set(map(type, found)) - {Finding}  # a million findings: their types at C speed first
            else None
        )
        if wrong is not None:
            raise TypeError(f"findings gave a {type(wrong).__name__}, not a nitpicker_core.Finding")
        return found, None
    except Exception as exc:  # noqa: BLE001 - plugin code
        return set(), f"{type(exc).__name__}: {exc}".splitlines()[0]


def _page_facts(
    check: Check, ctx: CheckContext, token: str
) -> list[tuple[str, Mapping[str, Mapping[str, Any]]]]:
    """The check's per-URL facts with its token, or none when its code fails (the columns stay empty)."""
    assert check.page_facts is not None
    try:
        return [(token, check.page_facts(ctx))]
    except Exception:  # noqa: BLE001 - plugin code
        log.warning("page facts of check %s not stored", check.id, exc_info=True)
        return []


class _Checks:
    """One commit's checks run through ``reader``, then stored by the writer (``store``, on its own thread)."""

    def __init__(self, reader: ArchiveReader, commit_id: int, analyzer: str | None, pm: Any) -> None:
        self.reader, self.commit_id, self.pm = reader, commit_id, pm
        registry = check_registry(pm)
        self.tokens = findings_store.Tokens(reader, code_versions(pm, registry))
        self.checks = [c for c in registry if (c.analyzer == analyzer if analyzer else not c.analyzer)]
        self.results: list[findings_store.Result] = []
        self.facts: list[tuple[str, Mapping[str, Mapping[str, Any]]]] = []
        self.failed = False
        self.stopped = False  # set from the writer's thread: the checks end after the one running

    def run(self) -> None:
        """Never raises: a failure is ``failed`` (and logged)."""
        try:
            self.reader.map_for_scans()
            ctx = CheckContext(self.reader, self.commit_id, query_registry(self.pm), config_of(self.pm))
            with collector_paused():
                for check in self.checks:
                    if self.stopped:
                        raise RuntimeError("stopped")
                    wanted = self.tokens.of(check, self.commit_id)
                    if wanted is not None:  # an unfinished commit or run: nothing worth storing
                        self.results.append((check, wanted, *evaluate(check, ctx)))
                        if check.page_facts is not None and self.results[-1][3] is None:
                            self.facts += _page_facts(check, ctx, wanted)
        except Exception:  # noqa: BLE001 - plugin code and a second reader: the commit itself is already safe
            log.warning("findings of commit %s not stored", self.commit_id, exc_info=True)
            self.failed = True

    def store(self, writer: ArchiveWriter) -> int:
        if self.failed:
            return 0
        try:
            return writer.store_findings(self.commit_id, self.reader, self.results, self.tokens, self.facts)
        except Exception:  # noqa: BLE001 - as in run
            log.warning("findings of commit %s not stored", self.commit_id, exc_info=True)
            return 0


def _index(
    writer: ArchiveWriter,
    commit_id: int,
    analyzer: str | None,
    pm: Any,
    meanwhile: Callable[[], object] | None,
) -> int:
    """Never raises (but ``meanwhile``'s own exception): the archive stays right without stored findings;
    readers compute them in memory."""
    if not findings_store.enabled():
        if meanwhile is not None:
            meanwhile()
        return 0
    try:
        # the live working directory, read-only: it holds what the writer committed a moment ago
        reader = ArchiveReader(writer.stub)
    except Exception:  # noqa: BLE001 - as in _Checks.run
        log.warning("findings of commit %s not stored", commit_id, exc_info=True)
        if meanwhile is not None:
            meanwhile()
        return 0
    with reader:
        try:
            checks = _Checks(reader, commit_id, analyzer, pm)
        except Exception:  # noqa: BLE001 - as in _Checks.run (a plugin's malformed settings, say)
            log.warning("findings of commit %s not stored", commit_id, exc_info=True)
            if meanwhile is not None:
                meanwhile()
            return 0
        if meanwhile is None:
            checks.run()
        else:
            _alongside(checks, reader, meanwhile)
        return checks.store(writer)


def _alongside(checks: _Checks, reader: ArchiveReader, meanwhile: Callable[[], object]) -> None:
    """Run the checks on a thread of their own while ``meanwhile`` runs on this one (the writer's).

    The checks read one snapshot, taken before ``meanwhile`` starts: the commit as it was, whatever
    ``meanwhile`` writes (the link aggregates, which the queries compute the same without). Mostly Python
    against SQLite (which lets go of the GIL) on the other side, the two share the process's two cores.
    ``meanwhile``'s exception (Ctrl-C too) stops the checks after the one running and is raised once they
    ended; nothing is stored then.
    """
    with reader.snapshot():
        thread = threading.Thread(target=checks.run, name="nitpicker-checks", daemon=True)
        thread.start()
        try:
            meanwhile()
        except BaseException:
            checks.stopped = True
            reader.interrupt()
            raise
        finally:
            thread.join()
