"""docs/rck-coverage.md maps every test of Iceberg's REST compatibility kit, and says what the registry says."""

from pathlib import Path

from ctk.core import rck
from ctk.reporting import rck_coverage

PAGE = Path(__file__).resolve().parents[2] / "docs" / "rck-coverage.md"


def test_every_compatibility_kit_test_is_covered_or_explained():
    assert len(rck.qualified()) == len(set(rck.qualified())) == 154
    assert not rck_coverage.uncovered(), (
        f"{len(rck_coverage.uncovered())} tests of CatalogTests/ViewCatalogTests are neither covered by a semantic "
        f"check (ctk.core.rck.COVERS) nor listed in ctk.core.rck.NOT_OBSERVABLE: {rck_coverage.uncovered()}")
    for test in rck.NOT_OBSERVABLE:
        assert test in rck.qualified(), f"NOT_OBSERVABLE names {test}, which is not a test of the two classes"


def test_the_page_is_what_the_registry_generates():
    assert PAGE.read_text(encoding="utf-8") == rck_coverage.render_markdown(), (
        "docs/rck-coverage.md differs from the registry: run `ctk rck-coverage -o docs/rck-coverage.md`")


def test_an_unmapped_test_is_found(monkeypatch):
    monkeypatch.setattr(rck, "CATALOG_TESTS", rck.CATALOG_TESTS + ("testSomethingNew",))
    assert "CatalogTests.testSomethingNew" in rck_coverage.uncovered()
    assert "**not covered yet**" in rck_coverage.render_markdown()
