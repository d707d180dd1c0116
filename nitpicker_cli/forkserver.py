"""The forkserver started as the command starts, for a crawl that forks its workers from it.

A crawl that reads pages without a browser (``--render never`` or ``auto``) forks its archive writer and its
page readers from multiprocessing's forkserver, which imports the plugins first
(``nitpicker_core.crawler.writer_process._preload``). Started by the crawl, that import came after this
process had made the same imports, and before the first request: 0.4 s of a 9 s crawl of a docs site, on one
core while the other waited. Started here, before this process imports anything of the project, the server
imports them on the other core meanwhile.

Only the built-in plugins are preloaded this way (the names of the ``nitpicker`` distribution's entry points,
read without importing them): their modules are known to import cleanly, and a third party's that raised
would take the server down with it (it skips only an ImportError). A crawl's child imports a third party's
plugin itself. Only what the command line says is looked at: a render mode set in ``nitpicker.toml`` leaves
the server to the crawl, as before.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.forkserver
from importlib import metadata

log = logging.getLogger(__name__)

#: the commands that fork readers and a writer when they read pages without a browser
COMMANDS = ("crawl", "pipeline")
#: the render modes that do
MODES = ("never", "auto")
#: what the crawl's children import besides the plugins: ``writer_process.CHILD_MODULES``, named here without
#: importing the core (which would delay the server's start by the imports it is to overlap)
CORE_MODULES = ("nitpicker_core.crawler.reading", "nitpicker_core.crawler.writer_process")
_DISTRIBUTION = "nitpicker"


def wanted(args: list[str]) -> bool:
    """Whether ``args`` run a crawl that reads pages without a browser (``--render never|auto`` given)."""
    command = next((arg for arg in args if not arg.startswith("-")), None)
    if command not in COMMANDS:
        return False
    for at, arg in enumerate(args):
        if arg == "--render" and at + 1 < len(args):
            return args[at + 1] in MODES
        if arg.startswith("--render="):
            return arg.split("=", 1)[1] in MODES
    return False


def builtin_modules() -> list[str]:
    """The modules of the built-in plugins and of the crawl's children, by name (nothing imported)."""
    modules = set(CORE_MODULES)
    for entry in metadata.entry_points(group="nitpicker"):
        dist = getattr(entry, "dist", None)
        if dist is not None and dist.name == _DISTRIBUTION:
            modules.add(entry.value.split(":")[0])
    return sorted(modules)


def start_early(args: list[str]) -> bool:
    """Start the forkserver with the built-in plugins preloaded when ``args`` will fork from it; whether it was.

    Never fatal: a server that cannot start here is started by the crawl, as without this.
    """
    if not wanted(args):
        return False
    try:
        multiprocessing.get_context("forkserver").set_forkserver_preload(builtin_modules())
        multiprocessing.forkserver.ensure_running()
    except Exception:  # noqa: BLE001 - an optimisation only: the crawl starts the server itself
        log.debug("the forkserver did not start early", exc_info=True)
        return False
    return True
