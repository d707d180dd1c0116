"""What a check's ``findings`` function gets: the open archive, the commit, and the registered queries.

Its own module, above ``query`` (which sits above the registries and ``checks``): a check's context runs
queries, and the checks module stays loadable by the registries without it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from nitpicker_core.query import run_query

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader

__all__ = ["CheckContext"]


class _Settings(Protocol):
    """What a check context reads plugin settings from (``nitpicker_core.config.Config`` is one)."""

    def settings_for(self, plugin: str) -> dict[str, Any]: ...


class CheckContext:
    """What a check's ``findings`` function gets: the open archive, the commit, and the registered queries."""

    def __init__(
        self, reader: ArchiveReader, commit: int, queries: Any = None, config: _Settings | None = None
    ) -> None:
        self.reader = reader
        self.commit = commit
        self._queries = queries  # a Registry[Query]; None when no query is needed
        self._config = config  # the run's configuration; None: every check uses its defaults
        self._runs: dict[str, dict[str, Any]] | None = None

    def settings_for(self, plugin: str) -> Mapping[str, Any]:
        """``plugin``'s settings in effect (file, then flags, defaults filled in); {} without a configuration.

        A check reads the keys it names in ``Check.settings``, with its own default for a missing one.
        """
        return {} if self._config is None else self._config.settings_for(plugin)

    def query(self, name: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every row of the registered query ``name`` on this commit, paged through."""
        if self._queries is None:
            raise RuntimeError("this CheckContext was made without the query registry")
        paged = "offset" in self._queries[name].params and "offset" not in params
        offset = 0
        while True:
            given = {**params, "offset": offset, "limit": 10000} if paged else params
            result = run_query(self._queries, self.reader, name, given, self.commit)
            if isinstance(result, list):
                yield from result
                return
            if not isinstance(result, dict) or "items" not in result:
                yield result
                return
            yield from result["items"]
            if not paged or result.get("next_offset") is None:
                return
            offset = result["next_offset"]

    def runs(self) -> dict[str, dict[str, Any]]:
        """The commit's analyzer runs by analyzer name (version, settings hash, status)."""
        if self._runs is None:
            self._runs = {r["analyzer"]: r for r in self.reader.analyzer_runs(self.commit)}
        return self._runs

    def analysed(self, analyzer: str) -> bool:
        """Whether ``analyzer`` ran to completion on this commit (errors on some pages included)."""
        run = self.runs().get(analyzer)
        # "complete" or "complete-with-errors"; a run still "running" was interrupted: its findings are partial
        return run is not None and str(run.get("status") or "").startswith("complete")
