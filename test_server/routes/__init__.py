"""Blueprints of the test site, one module per behaviour family."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes import (
    basic,
    error_status,
    exclude,
    headers,
    meta,
    options,
    pagination,
    recursive,
    redirect,
    reuse,
    robots,
    scope,
    scripted,
    stress,
    tricky,
)

BLUEPRINTS: list[Blueprint] = [
    module.bp
    for module in (
        basic, recursive, redirect, meta, exclude, options, error_status, scope, pagination, tricky, reuse,
        robots, scripted, stress, headers,
    )
]
