"""/showcase/: the demo shop `nitpicker pipeline` crawls without a URL (shipped as nitpicker_demo), version 1."""

from __future__ import annotations

from nitpicker_demo import bp

__all__ = ["bp"]
