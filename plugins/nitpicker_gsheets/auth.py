"""Google credentials: a service-account key, an authorized-user file, or an OAuth client with a cached token."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from nitpicker_core import NitpickerError, UsageError

from .api import auth_request

SCOPES = ["https://www.googleapis.com/auth/spreadsheets"]


def token_path(credentials: Path) -> Path:
    """Where an OAuth client's token is cached: next to the client file (``credentials.token.json``)."""
    return credentials.with_name(credentials.stem + ".token.json")


def _save_token(path: Path, creds: Any) -> None:
    """Replace the cache atomically with a file only the user can read."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(creds.to_json())
    os.replace(partial, path)


def _refresh(creds: Any) -> None:
    from google.auth.exceptions import RefreshError, TransportError

    try:
        creds.refresh(auth_request())
    except (RefreshError, TransportError) as exc:
        # The messages of these errors can quote the token endpoint's answer; say only what failed.
        raise NitpickerError(
            f"Google authentication failed ({type(exc).__name__}); check the credentials"
        ) from None


def _oauth_client(path: Path, data: dict[str, Any], interactive: bool) -> Any:
    from google.oauth2.credentials import Credentials

    cache = token_path(path)
    creds = None
    if cache.is_file():
        try:
            creds = Credentials.from_authorized_user_file(str(cache), SCOPES)
        except ValueError:
            creds = None  # an unreadable cache is as good as none: authorize again
    if creds is not None and creds.valid:
        return creds
    if creds is not None and creds.refresh_token:
        _refresh(creds)
        _save_token(cache, creds)
        return creds
    if not interactive:
        raise UsageError(
            f"no valid OAuth token cached for {path.name}; run `nitpicker report` once in a terminal "
            "to authorize, or use a service account key"
        )
    from google_auth_oauthlib.flow import InstalledAppFlow

    flow = InstalledAppFlow.from_client_config(data, SCOPES)
    print("nitpicker: opening the browser to authorize Google Sheets access…", file=sys.stderr)
    creds = flow.run_local_server(host="127.0.0.1", port=0, open_browser=True)
    _save_token(cache, creds)
    return creds


def load_credentials(path: Path, interactive: bool = False) -> Any:
    """Valid credentials from ``path``; secrets never reach a message, a log or another file."""
    if not path.is_file():
        raise UsageError(f"credentials file not found: {path.name} (give --credentials FILE)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UsageError(f"{path.name} is not a JSON credentials file") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path.name} is not a JSON credentials file")
    kind = data.get("type")
    if kind == "service_account":
        from google.oauth2 import service_account

        try:
            creds = service_account.Credentials.from_service_account_info(data, scopes=SCOPES)
        except (ValueError, KeyError):
            raise UsageError(f"{path.name} is not a usable service account key") from None
    elif kind == "authorized_user":
        from google.oauth2.credentials import Credentials

        try:
            creds = Credentials.from_authorized_user_info(data, SCOPES)
        except ValueError:
            raise UsageError(f"{path.name} is not a usable authorized-user file") from None
    elif "installed" in data or "web" in data:
        return _oauth_client(path, data, interactive)
    else:
        raise UsageError(f"{path.name} is neither a service account key nor an OAuth client")
    if not creds.valid:
        _refresh(creds)
    return creds
