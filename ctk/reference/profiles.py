"""Which strategies a catalog runs: the one place that knows both registries of profiles (the allowed
variants, `variants.VARIANTS`, and the deviations, `deviations.PROFILES`) sits above them and above the
policies they list, so `policies` -> `variants` -> `deviations` -> `profiles` import one way.

`policies_for(settings)` is the (KeyPolicy, CommitPolicy) pair of a catalog's settings; `for_settings(settings)`
its key policy.
"""

from __future__ import annotations

from typing import Any

from ctk.reference.deviations import get_profile
from ctk.reference.policies import CommitPolicy, KeyPolicy
from ctk.reference.variants import get_variant


def policies_for(settings: Any) -> tuple[KeyPolicy, CommitPolicy]:
    """The strategies of a catalog's settings: its variant's, its deviation profile's, else the reference's."""
    key_cls: type[KeyPolicy] = KeyPolicy
    commit_cls: type[CommitPolicy] = CommitPolicy
    if getattr(settings, "variant", None):
        variant = get_variant(settings.variant)
        key_cls, commit_cls = variant.policy, variant.commits
    elif getattr(settings, "deviation", None):
        cls = get_profile(settings.deviation).policy
        if issubclass(cls, CommitPolicy):
            commit_cls = cls
        else:
            key_cls = cls
    return key_cls(settings), commit_cls(settings)


def for_settings(settings: Any) -> KeyPolicy:
    """The key policy of a catalog's settings (its variant's, its deviation profile's, else the reference's)."""
    return policies_for(settings)[0]
