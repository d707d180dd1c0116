"""The typed contract reaches the plugins: what hooks pass is annotated with its type, never ``Any``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from support import ROOT

import nitpicker_core

# Every package on the plugin side of the boundary, the example plugin the tutorial copies included.
BOUNDARY = (
    "plugins",
    "nitpicker_cli",
    "nitpicker_viewer",
    "nitpicker_dashboard",
    "nitpicker_demo",
    "nitpicker_testing",
    "tests/example_plugin/nitpicker_example",
)
# Parameter names that always hold one of the objects hooks pass (a path is called ``path`` or ``output``).
PASSED = {"archive", "reader", "pm", "nitpicker_pm", "register", "config", "nitpicker_config", "crawl"}


def _sources() -> list[Path]:
    return sorted(p for package in BOUNDARY for p in (ROOT / package).rglob("*.py") if "build" not in p.parts)


def untyped_parameters(source: str) -> list[str]:
    """``function(name)`` for each parameter in ``PASSED`` annotated ``Any`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                annotation = arg.annotation
                if arg.arg in PASSED and isinstance(annotation, ast.Name) and annotation.id == "Any":
                    found.append(f"{node.name}({arg.arg})")
    return found


def test_what_hooks_pass_is_never_annotated_any():
    found = [
        f"{path.relative_to(ROOT)}: {where}"
        for path in _sources()
        for where in untyped_parameters(path.read_text(encoding="utf-8"))
    ]
    assert len(_sources()) > 100  # the scan sees the packages
    assert found == []


def test_an_any_annotation_is_reported():
    source = "def rows(reader: Any, commit: int, path: Any) -> None: ...\nasync def q(*, pm: Any): ...\n"
    assert untyped_parameters(source) == ["rows(reader)", "q(pm)"]


@pytest.mark.parametrize(
    "name", ["ArchiveReader", "NitpickerPluginManager", "Config", "AnalyzeRun", "ReportContext"]
)
def test_the_types_for_annotations_resolve_to_the_real_classes(name):
    """Loaded on first use, yet ``nitpicker_core.X`` is the class itself (isinstance and mypy agree)."""
    cls = getattr(nitpicker_core, name)
    assert inspect.isclass(cls) and cls.__name__ == name and name in nitpicker_core.__all__


def test_the_read_model_takes_a_typed_reader() -> None:
    """``nitpicker_core.read``'s functions, which plugins call, say what they read from: an ArchiveReader."""
    from nitpicker_core import read

    untyped = []
    for name in read.__all__:
        function = getattr(read, name)
        if not inspect.isfunction(function):
            continue
        parameters = inspect.signature(function).parameters
        for param in ("archive", "reader"):
            if param in parameters and parameters[param].annotation != "ArchiveReader":
                untyped.append(f"{name}({param}: {parameters[param].annotation})")
    assert untyped == []
