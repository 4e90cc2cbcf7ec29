"""Profiles are policies (ctk.reference.policies): each deviation profile is a registered subclass overriding
exactly one hook, and the catalog code never names a profile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ctk.reference
from ctk.reference.deviations import PROFILES
from ctk.reference.policies import CommitPolicy, KeyPolicy
from ctk.reference.profiles import policies_for
from ctk.reference.settings import ReferenceSettings
from ctk.reference.variants import VARIANTS

BASES = (KeyPolicy, CommitPolicy)
REFERENCE_DIR = Path(ctk.reference.__file__).parent
# the registry modules: the only places a profile's name may appear
REGISTRY = {"deviations.py", "variants.py"}
CATALOG_CODE = sorted(p for p in REFERENCE_DIR.glob("*.py") if p.name not in REGISTRY)


def _base(cls: type) -> type:
    return next(b for b in BASES if issubclass(cls, b))


def overridden(cls: type) -> set[str]:
    """The hooks `cls` itself defines (its own __dict__), among its policy base's hooks."""
    return set(vars(cls)) & set(_base(cls).HOOKS)


def test_hooks_exist_on_their_base():
    for base in BASES:
        for hook in base.HOOKS:
            assert callable(getattr(base, hook)), (base, hook)


@pytest.mark.parametrize("name", list(PROFILES))
def test_each_deviation_overrides_exactly_one_hook(name):
    policy = PROFILES[name].policy
    assert policy not in BASES, f"{name} has no policy of its own"
    assert len(overridden(policy)) == 1, f"{name}: {policy.__name__} overrides {sorted(overridden(policy))}"
    # its parent is the correct policy, or an allowed variant's (then the deviation adds one hook to it)
    parent = policy.__mro__[1]
    assert parent in BASES or parent in {v.policy for v in VARIANTS.values()}, (name, parent)
    # nothing else of the policy's is redefined (no attribute besides the one hook and documentation)
    extra = {k for k in vars(policy) if not k.startswith("__") and k not in _base(policy).HOOKS and k != "name"}
    assert not extra, f"{name}: {policy.__name__} also defines {sorted(extra)}"


def test_the_one_hook_rule_is_checked_for_real():
    class TwoHooks(KeyPolicy):
        def storable(self, status):
            return True

        def expiry(self, now):
            return now

    assert overridden(TwoHooks) == {"storable", "expiry"}


def test_deviation_policies_are_distinct_and_reach_the_catalog(tmp_path):
    by_policy: dict[type, list[str]] = {}
    for name, profile in PROFILES.items():
        by_policy.setdefault(profile.policy, []).append(name)
        key, commit = policies_for(ReferenceSettings(warehouse=str(tmp_path), deviation=name))
        assert profile.policy in (type(key), type(commit))
        assert {type(key), type(commit)} - {profile.policy} <= set(BASES)
    assert all(len(names) == 1 for names in by_policy.values()), by_policy
    key, commit = policies_for(ReferenceSettings(warehouse=str(tmp_path)))
    assert (type(key), type(commit)) == (KeyPolicy, CommitPolicy)


def test_variants_are_subclasses_of_the_correct_policy():
    """Each variant overrides hooks of the key handling (its KeyPolicy), of the catalog (its CommitPolicy:
    namespace separator, what a drop deletes), or both; never neither."""
    for variant in VARIANTS.values():
        assert issubclass(variant.policy, KeyPolicy) and issubclass(variant.commits, CommitPolicy)
        own = [cls for cls in (variant.policy, variant.commits) if cls not in BASES]
        assert own and all(overridden(cls) for cls in own), variant.name


def test_a_variant_reaches_the_catalog_with_both_policies(tmp_path):
    for name, variant in VARIANTS.items():
        key, commit = policies_for(ReferenceSettings(warehouse=str(tmp_path), variant=name))
        assert (type(key), type(commit)) == (variant.policy, variant.commits), name


def test_no_profile_name_in_catalog_code():
    names = list(PROFILES) + list(VARIANTS)
    assert CATALOG_CODE and {"pipeline.py", "catalog.py", "app.py", "views.py", "planning.py"} <= {
        p.name for p in CATALOG_CODE}
    found = []
    for path in CATALOG_CODE:
        text = path.read_text()
        for name in names:
            for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.name}:{line}: {name}")
    assert not found, "profile names in catalog code (ask a policy hook instead):\n" + "\n".join(found)
