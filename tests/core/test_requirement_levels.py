"""A level given to a requirement must be one its sources state: a contradiction is an error at import, not a
level silently replaced (issue 29 item 5)."""

import pytest

from ctk.core.requirements import PROFILES, REQUIREMENTS, Level, Requirement, Said


def test_a_level_the_sources_contradict_is_an_error_naming_both():
    with pytest.raises(ValueError, match=r"X-1: level MUST is given, but its sources make it SHOULD under spec"):
        Requirement("X-1", "a", Level.MUST, "", "s", said=(Said("spec", Level.SHOULD, "w", "q"),))


def test_without_a_level_the_sources_give_it_and_without_either_it_is_refused():
    r = Requirement("X-2", "a", None, "", "s", said=(Said("kit", Level.MUST, "w", "q"),))
    assert r.base_level is Level.MUST and r.level is Level.MUST
    with pytest.raises(ValueError, match="give a level"):
        Requirement("X-3", "a", None, "", "s")


def test_every_registered_level_is_one_its_sources_state():
    for r in REQUIREMENTS.values():
        if r.said:
            assert r.base_level in {r.level_under(p) for p in PROFILES}, r.id
