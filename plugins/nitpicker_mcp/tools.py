"""The MCP tools, built from the query registry at startup, and the calls behind them (no MCP SDK here).

The low-level MCP server does not validate arguments, so every call is validated here, against the same
schema the tool advertises (``validate_params`` for the query's own parameters).
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nitpicker_core import NitpickerError, UsageError, check_commit, describe, run_query, validate_params

from .archives import ArchiveManager

log = logging.getLogger(__name__)

MAX_BYTES = 1_000_000  # the most JSON text one call returns; paginated queries say how to get the rest

ARCHIVE_PARAM = {
    "type": "string",
    "description": "path of a .nitpicker archive or of a live crawl's working directory "
    "(relative paths are relative to the server's working directory)",
}
COMMIT_PARAM = {
    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["HEAD"]}],
    "description": 'commit id to read, or "HEAD" (the default)',
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    query: str | None = None  # the registry name; None for the server's own tools


def tool_name(query_name: str) -> str:
    return query_name.replace("-", "_")


def _builtin_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            "list_archives",
            "The archives this server has open, with their number of commits and HEAD.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        ),
        ToolSpec(
            "list_commits",
            "Every commit of an archive (newest first) and which one is HEAD.",
            {
                "type": "object",
                "properties": {"archive": ARCHIVE_PARAM},
                "required": ["archive"],
                "additionalProperties": False,
            },
        ),
    ]


def build_tools(registry: Any) -> dict[str, ToolSpec]:
    """One tool per registered query (``broken-links`` → ``broken_links``) plus the server's own tools."""
    tools = {spec.name: spec for spec in _builtin_tools()}
    for item in describe(registry):
        name = tool_name(item["name"])
        schema = copy.deepcopy(item["schema"])
        properties = schema.setdefault("properties", {})
        clash = sorted({"archive", "commit"} & set(properties))
        if clash:
            log.warning(
                "query %r (plugin %s) is not served over MCP: its parameter %r clashes with the tool's own",
                item["name"],
                item["plugin"],
                clash[0],
            )
            continue
        if name in tools:
            log.warning(
                "query %r (plugin %s) is not served over MCP: a tool named %r already exists",
                item["name"],
                item["plugin"],
                name,
            )
            continue
        schema["properties"] = {"archive": ARCHIVE_PARAM, "commit": COMMIT_PARAM, **properties}
        schema["required"] = ["archive", *schema.get("required", [])]
        schema["additionalProperties"] = False
        tools[name] = ToolSpec(name, item["description"], schema, item["name"])
    return tools


def _archive_arg(arguments: dict[str, Any]) -> str:
    value = arguments.pop("archive", None)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(
            "parameter 'archive' is required: the path of a .nitpicker archive or a working directory"
        )
    return value  # its NUL bytes, length and file type are checked where it is opened (``locate``)


def _commit_arg(arguments: dict[str, Any]) -> int | str | None:
    return check_commit(arguments.pop("commit", None))


class Toolbox:
    """The tools of one server: the registry, the open archives and the size limit of a result."""

    def __init__(
        self, registry: Any, archives: ArchiveManager | None = None, max_bytes: int = MAX_BYTES
    ) -> None:
        self.registry = registry
        self.archives = archives or ArchiveManager()
        self.max_bytes = max_bytes
        self.tools = build_tools(registry)

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Any:
        """Validate and run one tool; raises ``NitpickerError`` with a message for the caller."""
        spec = self.tools.get(name)
        if spec is None:
            raise UsageError(f"unknown tool {name!r} (tools: {', '.join(sorted(self.tools))})")
        args = dict(arguments or {})
        if name == "list_archives":
            _no_more(name, args)
            return {"archives": self.archives.describe()}
        archive = _archive_arg(args)
        if name == "list_commits":
            _no_more(name, args)
            with self.archives.use(archive) as reader:
                head = reader.head()
                commits = reader.commits()
                return {
                    "archive": reader.name,
                    "head": head,
                    "total": len(commits),
                    "items": [dict(c, head=c["id"] == head) for c in commits],
                }
        query = spec.query or name
        commit = _commit_arg(args)
        validate_params(self.registry[query], args)  # bad parameters fail before the archive is opened
        with self.archives.use(archive) as reader:
            return run_query(self.registry, reader, query, args, commit)

    def interrupt(self) -> None:
        """Abort every statement the calls run now (each call then fails)."""
        self.archives.interrupt_all()

    def close(self) -> None:
        self.archives.close_all()


def _no_more(name: str, args: dict[str, Any]) -> None:
    if args:
        raise UsageError(f"tool {name!r} has no parameter {sorted(args)[0]!r}")


# --- results --------------------------------------------------------------------------------------------


def dumps(data: Any) -> str:
    """The same JSON as `nitpicker query` prints."""
    return json.dumps(data, ensure_ascii=False, default=str, sort_keys=True)


def _size(data: Any) -> int:
    return len(dumps(data).encode("utf-8"))


def render(result: Any, max_bytes: int = MAX_BYTES) -> tuple[list[str], dict[str, Any] | None]:
    """The text contents and the structured content of a result, kept under ``max_bytes`` of JSON.

    A paginated result (a dict with ``items``) that is too big loses items from its end and says where to
    continue; anything else too big is cut as text, with a note and no structured content.
    """
    text = dumps(result)
    size = len(text.encode("utf-8"))
    if size <= max_bytes:
        plain = json.loads(text)  # what the client gets: plain JSON types, as the text says
        return [text], plain if isinstance(plain, dict) else {"result": plain}
    if isinstance(result, dict) and isinstance(result.get("items"), list):
        items = result["items"]
        budget = max_bytes - 512  # room for the note

        def fits(count: int) -> bool:
            return _size({**result, "items": items[:count]}) <= budget

        if fits(0):
            low, high = 0, len(items)
            while low < high:
                mid = (low + high + 1) // 2
                low, high = (mid, high) if fits(mid) else (low, mid - 1)
            trimmed = {**result, "items": items[:low]}
            note = (
                f"the result was {size} bytes, over the limit of {max_bytes}: only {low} of {len(items)} "
                "items are returned; ask for fewer with 'limit'"
            )
            if isinstance(result.get("offset"), int):
                trimmed["next_offset"] = result["offset"] + low
                note += f" and continue at offset {result['offset'] + low}"
            trimmed["truncated"] = note
            return render(trimmed, max_bytes)
    cut = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    note = (
        f"[truncated: the result is {size} bytes, over the limit of {max_bytes}; "
        "narrow the query with its parameters]"
    )
    return [cut, note], None


# --- errors ---------------------------------------------------------------------------------------------

_FILE_URI = re.compile(r"\bfile:(?://)?(?=/)")
_QUOTED_PATH = re.compile(r"""(['"])((?:[A-Za-z]:)?[\\/][^'"]*?)\1""")
_BARE_PATH = re.compile(r"(?<![\w.:/\\~-])(?:~|[A-Za-z]:)?[\\/](?:[^\s\\/'\"(),;]+[\\/])*([^\s\\/'\"(),;:]+)")
_MAX_MESSAGE = 1000


def _basename(path: str) -> str:
    parts = [p for p in re.split(r"[\\/]", path) if p]
    return parts[-1] if parts else "."


def scrub(message: str) -> str:
    """One line without absolute paths: every path is cut to its last component."""
    message = _FILE_URI.sub("", message)
    message = _QUOTED_PATH.sub(lambda m: m.group(1) + _basename(m.group(2)) + m.group(1), message)
    message = _BARE_PATH.sub(lambda m: m.group(1), message)
    message = " ".join(message.split())
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def error_message(exc: BaseException) -> str:
    """What the client is told about a failed call; unexpected errors leave a traceback on stderr."""
    if isinstance(exc, NitpickerError):
        return scrub(str(exc) or type(exc).__name__)
    log.error("internal error in a tool call", exc_info=exc)
    return scrub(f"internal error: {type(exc).__name__}: {exc}")
