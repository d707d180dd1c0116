"""The three stages: what each consumes and produces, how it runs, and how an earlier output is checked."""

from __future__ import annotations

import abc
import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core.archive import open_archive
from nitpicker_core.hookspecs import hookimpl
from nitpicker_core.pipeline.provenance import archive_commits, changed_file, fingerprint
from nitpicker_core.report import run_report

if TYPE_CHECKING:
    from nitpicker_core.config import Config
    from nitpicker_core.plugins import NitpickerPluginManager
    from nitpicker_core.records import CrawlContext


class StageFailed(Exception):
    """A stage ended without valid outputs, for a classified reason (see ``journal.classify``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Context:
    """One run: the plugin manager and config, the declaration, live progress and the outputs so far."""

    pm: NitpickerPluginManager
    config: Config
    declaration: dict[str, Any]
    crawl_options: Any  # CrawlOptions with the secrets (credentials, header values) the journal never holds
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)
    on_crawl_progress: Any = None
    previous: Any = None  # RunState of the journal being resumed
    silent: bool = False
    executor: Any = None  # a connected distributed.Client (--executor): crawl renders and analysis run there

    @property
    def archive(self) -> Path:
        return Path(self.declaration["archive"])


def commit_statuses(archive: Path) -> dict[int, str] | None:
    """Commit id → status of the archive's working directory (a live or killed crawl) or of the file."""
    commits = archive_commits(archive)
    return None if commits is None else {cid: c["status"] for cid, c in commits.items()}


class _Observer:
    """Feeds the run's live progress: a crawl hook (registered for the stage) and the engine's callback."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @hookimpl
    def crawl_started(self, crawl: CrawlContext) -> None:
        self.ctx.progress["commit"] = crawl.commit

    def analyze_progress(self, *args: Any) -> None:
        """The engine's progress callback: (analyzer, done, total, violations)."""
        if len(args) < 4:
            return
        name, done, total, violations = args[:4]
        p = self.ctx.progress
        p.setdefault("by_analyzer", {})[name] = {"done": done, "total": total, "violations": violations}
        p["pages"] = sum(a["done"] for a in p["by_analyzer"].values())
        p["total"] = sum(a["total"] for a in p["by_analyzer"].values())
        p["violations"] = sum(a["violations"] for a in p["by_analyzer"].values())


class Stage(abc.ABC):
    """One step of a run: what it consumes and produces, how to tell its earlier outputs are still valid."""

    name = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    @abc.abstractmethod
    def check(self, ctx: Context, outputs: dict[str, Any]) -> str | None:
        """None when ``outputs`` (from an earlier run) exist, are valid and match the declaration."""

    @abc.abstractmethod
    def run(self, ctx: Context) -> dict[str, Any]:
        """Produce the stage's outputs."""

    def observe(self, ctx: Context) -> Any:
        observer = _Observer(ctx)
        ctx.pm.register(observer, name=f"pipeline-observer-{self.name}")
        return observer


def crawl_declaration(decl: dict[str, Any]) -> dict[str, Any]:
    # speed knobs do not change what the crawl records; an unset option (None) is the same as one that did
    # not exist yet, so a version adding an option does not invalidate the crawls made before it; so is an
    # option added later at the value every earlier crawl had (--render always)
    return {
        k: v
        for k, v in decl["crawl"].items()
        if k not in ("parallels", "interval", "strict", "max_rps", "max_retry_after")
        and v is not None
        and not (k in _AS_BEFORE and _AS_BEFORE[k] == v)
    }


_AS_BEFORE: dict[str, Any] = {"render": "always"}


class CrawlStage(Stage):
    name = "crawl"
    outputs = ("commit",)

    def check(self, ctx: Context, outputs: dict[str, Any]) -> str | None:
        if outputs.get("declaration") != digest(crawl_declaration(ctx.declaration)):
            return "crawl options changed"
        commits = archive_commits(ctx.archive)
        if commits is None:
            return f"{ctx.archive.name} is missing"
        commit = commits.get(outputs.get("commit", -1)) or {}
        if commit.get("status") != "complete":
            return (
                f"commit {outputs.get('commit')} is {commit.get('status') or 'missing'} in {ctx.archive.name}"
            )
        if commit.get("identity") != outputs.get("identity"):
            return (
                f"commit {outputs.get('commit')} of {ctx.archive.name} is not the one this run crawled "
                "(the archive was made again)"
            )
        return None

    def _mode(self, ctx: Context) -> str:
        """Finish the interrupted commit this run left behind; otherwise crawl a new one, revalidating the
        pages of the archive's last complete crawl (``update``: a conditional request each, 304s taken over
        without rendering) unless the run says ``--full``."""
        statuses = commit_statuses(ctx.archive) or {}
        latest = max(statuses, default=None)
        prev = ctx.previous.stages.get("crawl") if ctx.previous else None
        if prev and prev.get("state") not in ("pending", "skipped"):
            if latest is not None and statuses[latest] != "complete":
                return "resume"
        if "complete" in statuses.values() and not ctx.declaration.get("full"):
            return "update"
        return "new"

    def run(self, ctx: Context) -> dict[str, Any]:
        from nitpicker_core.crawler.engine import Crawler

        mode = self._mode(ctx)
        ctx.progress["mode"] = mode

        def progress(counts: Any) -> None:
            ctx.progress.update(
                internal_done=counts.internal_done,
                internal_rendered=counts.internal_rendered,
                internal_found=counts.internal_found,
                external_done=counts.external_done,
                external_found=counts.external_found,
                remaining=counts.remaining,
                percent=counts.percent,
            )
            if ctx.on_crawl_progress:
                ctx.on_crawl_progress(counts)

        observer = self.observe(ctx)
        try:
            crawler = Crawler(
                ctx.pm, ctx.crawl_options, ctx.archive, mode=mode, progress=progress, executor=ctx.executor
            )
            stats = asyncio.run(crawler.run())
        finally:
            ctx.pm.unregister(observer)
        if stats.status == "interrupted":  # why, when it was not a stop request: the Dask cluster is gone
            why = crawler.cluster_lost or "the crawl was interrupted; resume the run to finish it"
            raise StageFailed("interrupted", why)
        if stats.rendered == 0 and stats.parsed == 0 and stats.internal_errors:
            kinds = ", ".join(sorted(stats.errors_by_kind)) or "error"
            reason = "timeout" if "timeout" in kinds else "network"
            raise StageFailed(reason, f"no page could be rendered ({kinds})")
        commit = ctx.progress.get("commit")
        identity = (
            ((archive_commits(ctx.archive) or {}).get(commit) or {}).get("identity") if commit else None
        )
        return {
            "commit": commit,
            "mode": mode,
            "identity": identity,
            "declaration": digest(crawl_declaration(ctx.declaration)),
            **stats.as_dict(),
        }


def wanted_analyzers(ctx: Context) -> dict[str, dict[str, Any]]:
    """name → the version and settings its results must have been produced with."""
    from nitpicker_core.analyze import analyzer_registry, default_names

    registry = analyzer_registry(ctx.pm)
    names = ctx.declaration["analyze"].get("plugins") or default_names(registry)
    wanted = {}
    for name in names:
        analyzer = registry[name]
        settings = ctx.config.settings_for(registry.plugin_of(name))
        wanted[name] = {
            "version": str(analyzer.version),
            "settings": json.loads(json.dumps(settings, default=str)),
        }
    return wanted


def stale_analyzers(ctx: Context, commit: int) -> dict[str, str]:
    """Analyzers without a finished run on ``commit`` with the wanted version and settings, and why."""
    with open_archive(ctx.archive) as reader:
        runs = {r["analyzer"]: r for r in reader.analyzer_runs(commit)}
    stale = {}
    for name, want in wanted_analyzers(ctx).items():
        run = runs.get(name)
        if run is None or not str(run["status"]).startswith("complete"):
            stale[name] = f"{name}: no finished analysis of commit {commit}"
        elif str(run["version"]) != want["version"]:
            stale[name] = f"{name}: version {run['version']} → {want['version']}"
        elif (run["settings"] or {}) != want["settings"]:
            stale[name] = f"{name}: settings changed"
    return stale


class AnalyzeStage(Stage):
    name = "analyze"
    inputs = ("commit",)
    outputs = ("analysis",)

    def check(self, ctx: Context, outputs: dict[str, Any]) -> str | None:
        commit = ctx.outputs["crawl"]["commit"]
        if outputs.get("commit") != commit:
            return f"analysis is of commit {outputs.get('commit')}, the crawl made {commit}"
        stale = stale_analyzers(ctx, commit)
        return "; ".join(stale.values()) or None

    def run(self, ctx: Context) -> dict[str, Any]:
        """The engine's run over the crawled commit: the stale analyzers only (all of them when none is).

        ``summary`` is the engine's (``pages``, ``violations``, ``errors`` and per analyzer ``analyzers``:
        pages, urls, cached, violations, errors, timeouts, mode); ``failed`` names the analyzers that
        failed on every page they were given (the run then exits 1, as ``nitpicker analyze`` does).
        """
        from nitpicker_core.analyze import analyze

        commit = ctx.outputs["crawl"]["commit"]
        wanted = wanted_analyzers(ctx)
        if not wanted:
            return {
                "commit": commit,
                "analyzers": {},
                "skipped": "no analyzer is enabled (see `nitpicker plugins`)",
            }
        names = list(stale_analyzers(ctx, commit)) or list(wanted)
        on_cluster = {"executor": ctx.executor} if ctx.executor is not None else {}
        try:
            run = analyze(
                ctx.pm,
                ctx.config,
                ctx.archive,
                names,
                commit,
                progress=_Observer(ctx).analyze_progress,
                **on_cluster,
            )
        except KeyboardInterrupt as exc:
            from nitpicker_core.analyze.dask_pool import ClusterLost

            if isinstance(exc, ClusterLost):  # an interrupted stage, said with its reason (not a Ctrl-C)
                raise StageFailed("interrupted", exc.reason) from None
            raise
        summary = run.summary()
        failed = [name for name, s in run.summaries.items() if s.failed_everywhere]
        return {
            "commit": commit,
            "analyzers": wanted,
            "ran": names,
            "summary": summary,
            "failed": failed,
            "pages": summary.get("pages"),
            "violations": summary.get("violations"),
        }


class ReportStage(Stage):
    name = "report"
    inputs = ("commit", "analysis")
    outputs = ("report",)

    def _key(self, ctx: Context) -> str:
        # the commit's identity, not its number: a re-made archive has a commit 1 of its own
        analysis, crawl = ctx.outputs.get("analyze") or {}, ctx.outputs["crawl"]
        return digest(
            [ctx.declaration["report"], crawl["commit"], crawl.get("identity"), analysis.get("analyzers")]
        )

    def check(self, ctx: Context, outputs: dict[str, Any]) -> str | None:
        if outputs.get("key") != self._key(ctx):
            return "the report was made from another commit, analysis or destination"
        target = outputs.get("local_target")
        if not target:  # a remote sheet: nothing here to look at
            return None
        if not Path(target).exists():
            return f"{Path(target).name} is missing"
        if not outputs.get("files"):
            return f"{Path(target).name} has no recorded fingerprint"
        return changed_file(Path(target), outputs["files"])

    def run(self, ctx: Context) -> dict[str, Any]:
        report = ctx.declaration["report"]
        commit = ctx.outputs["crawl"]["commit"]
        ctx.progress["destination"] = report["destination"]
        with open_archive(ctx.archive) as reader:
            result = run_report(
                ctx.pm,
                reader,
                report["destination"],
                {**report["options"], "silent": ctx.silent},
                report.get("sheets") or None,
                commit,
            )
        local = report.get("local_target")
        plain = json.loads(json.dumps(result, default=str))
        return {
            "commit": commit,
            "destination": report["destination"],
            "target": report.get("target"),
            "local_target": local,
            "key": self._key(ctx),
            "result": plain,
            "files": fingerprint(Path(local), plain) if local else None,
        }


STAGE_TYPES: dict[str, type[Stage]] = {"crawl": CrawlStage, "analyze": AnalyzeStage, "report": ReportStage}
