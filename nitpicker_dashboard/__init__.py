"""The pipeline monitoring dashboard: one snapshot endpoint and a page that polls it."""

from nitpicker_dashboard.app import create_app, free_port, serve_in_thread

__all__ = ["create_app", "free_port", "serve_in_thread"]
