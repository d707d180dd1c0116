"""The xdist work units of tests/conftest.py name modules and directories that exist, and order them all."""

from __future__ import annotations

from types import ModuleType

import pytest
from support import ROOT


@pytest.fixture
def top(pytestconfig: pytest.Config) -> ModuleType:
    """tests/conftest.py as pytest loaded it (``import conftest`` may find another directory's)."""
    module = pytestconfig.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py"))
    assert module is not None
    return module


def test_every_member_of_a_shared_unit_exists(top: ModuleType) -> None:
    for unit, members in top.SHARED_UNITS.items():
        for member in members:
            path = ROOT / member
            assert path.is_dir() if member.endswith("/") else path.is_file(), (unit, member)


def test_a_module_goes_to_its_unit_and_any_other_is_a_unit_of_its_own(top: ModuleType) -> None:
    assert top._unit("tests/viewer/test_views.py") == "tests/viewer/"
    assert (
        top._unit("tests/viewer/seo/test_seo_views_browser.py")
        == "tests/viewer/seo/test_seo_views_browser.py"
    )
    assert top._unit("tests/e2e/test_crawl_rules.py") == "e2e-shared-crawls"
    assert top._unit("tests/e2e/test_crawl_stop.py") == "tests/e2e/test_crawl_stop.py"


def test_long_first_names_each_unit_once_and_only_units_that_exist(top: ModuleType) -> None:
    assert len(set(top.LONG_FIRST)) == len(top.LONG_FIRST)
    for unit in top.LONG_FIRST:
        assert unit in top.SHARED_UNITS or ((ROOT / unit).is_file() and top._unit(unit) == unit), unit
