"""/cal/: a calendar trap, /cal/YYYY/MM linking to the previous and the next month, for every year there is."""

from __future__ import annotations

from flask import Blueprint, abort

from test_server.routes._html import links, page

bp = Blueprint("calendar_trap", __name__, url_prefix="/cal")

START = (2024, 1)  # where the index points; the trap goes both ways from here without end


def month_path(year: int, month: int) -> str:
    return f"/cal/{year}/{month:02d}"


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    return page("Calendar", links((month_path(*START), "This month")))


@bp.get("/<year>/<month>")
def month(year: str, month: str):  # type: ignore[no-untyped-def]
    # any year at all answers, as a real calendar script does: only a malformed month is missing
    if not (
        year.isascii()
        and year.isdigit()
        and int(year) >= 1
        and month.isascii()
        and month.isdigit()
        and len(month) == 2
        and 1 <= int(month) <= 12
    ):
        abort(404)
    y, m = int(year), int(month)
    before = (y, m - 1) if m > 1 else (y - 1, 12)
    after = (y, m + 1) if m < 12 else (y + 1, 1)
    nav = [(month_path(*before), "Previous month")] if before[0] >= 1 else []
    nav.append((month_path(*after), "Next month"))
    return page(f"{y}-{m:02d}", f"<h1>{y}-{m:02d}</h1><p>No events.</p>{links(*nav)}")


@bp.get("/loose/")
def loose_index():  # type: ignore[no-untyped-def]
    return page(
        "Loose Calendar", links(("/cal/loose/2024/11", "November"), ("/cal/loose/2024/12", "December"))
    )


@bp.get("/loose/<int:year>/<month>")
def loose_month(year: int, month: str):  # type: ignore[no-untyped-def]
    # a calendar script that answers any month number (13, 37) with an empty month: only a guesser asks for
    # one, since the pages link from December to the next January
    if not (month.isascii() and month.isdigit() and len(month) == 2 and int(month) >= 1 and year >= 1):
        abort(404)
    y, m = year, int(month)
    before = (y, m - 1) if 1 < m <= 12 else (y - 1, 12)
    after = (y, m + 1) if m < 12 else (y + 1, 1)
    nav = [
        (f"/cal/loose/{y:04d}/{mm:02d}", text) for (y, mm), text in ((before, "Previous"), (after, "Next"))
    ]
    return page(f"{y}-{m:02d}", f"<h1>{y}-{m:02d}</h1><p>No events.</p>{links(*nav)}")
