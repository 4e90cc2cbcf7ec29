"""Setup and interference steps of the cases that read their effect back.

A case's steps (a table made for the check, "drop the table a create made, then retry", "commit another value,
then retry") are plain operations; a verdict on a retry rests on them. A step acknowledged without its effect - a
drop answered 204 that leaves the table, a commit answered 200 that the next load does not show - is a broken
plain operation: `EffectMissing` names the catalog-semantics requirement it breaks (TBL-08 for the drop, EVO-01
for the commit, ...), and the check that needed the step is inconclusive naming that finding, never a replay
failure read off a state the step never made.

Each function sends nothing itself: it wraps the step (a callable that sends it and returns its exchange or
load result) and the reader of the resource's state (a case observer: None when absent).
"""

from __future__ import annotations

from typing import Any, Callable

from ctk.client.errors import EffectMissing
from ctk.core.exchange import Exchange

State = Callable[[], "dict | None"]

# kind -> the requirement a plain create / drop / commit / rename of that kind breaks when its effect is missing
REQUIREMENT = {
    "namespace": {"create": "NS-01", "drop": "NS-06", "commit": "NS-04"},
    "table": {"create": "TBL-01", "drop": "TBL-08", "commit": "EVO-01", "rename": "TBL-06", "append": "EVO-06"},
    "view": {"create": "VIEW-01", "drop": "VIEW-05", "commit": "VIEW-06", "rename": "VIEW-04"},
}


def _answered(result: Any) -> str:
    return str(result.status) if isinstance(result, Exchange) else "success"


def _loads_after(step: Callable[[], Any], state: State, requirement: str,
                 missing: Callable[[str], str]) -> Any:
    """Runs ``step``; what ``state`` reads must then load (else EffectMissing of ``requirement``, saying
    ``missing(<what the step answered>)``)."""
    out = step()
    if state() is None:
        raise EffectMissing(requirement, missing(_answered(out)), out if isinstance(out, Exchange) else None)
    return out


def made(kind: str, what: str, step: Callable[[], Any], state: State, same_uuid: bool = False) -> Any:
    """``step`` creates ``what``; it must then load (else EffectMissing of the kind's create requirement). With
    ``same_uuid`` (a check that asserts the resource's identity) it must load with the uuid the create answered."""
    out = _loads_after(step, state, REQUIREMENT[kind]["create"],
                       lambda answered: f"creating {kind} {what} answered {answered}, but loading it answers 404")
    if same_uuid and isinstance(out, dict):
        made_uuid = (out.get("metadata") or {}).get(f"{kind}-uuid")
        loaded = state()
        shown = (loaded or {}).get("uuid")
        if made_uuid is not None and loaded is not None and shown != made_uuid:
            raise EffectMissing(REQUIREMENT[kind]["create"],
                                f"creating {kind} {what} answered {kind}-uuid {made_uuid}, but loading it shows "
                                f"{kind}-uuid {shown}")
    return out


def dropped(kind: str, what: str, step: Callable[[], Any], state: State) -> Any:
    """``step`` drops ``what`` (a 404 is allowed: nothing was there); it must then be gone (else EffectMissing
    of the kind's drop requirement). A resource still listed but no longer loadable (its files deleted) is
    gone for the case."""
    ex = step()
    after = state()
    if after is not None and "damaged" not in after:
        raise EffectMissing(REQUIREMENT[kind]["drop"],
                            f"dropping {kind} {what} answered {_answered(ex)}, but it still loads",
                            ex if isinstance(ex, Exchange) else None)
    return ex


def committed(kind: str, what: str, step: Callable[[], Any], state: State, key: str, value: str) -> Any:
    """``step`` sets the property ``key`` = ``value`` on ``what``; the next load must show it (else EffectMissing
    of the kind's commit requirement)."""
    out = step()
    after = state()
    shown = (after or {}).get("properties", {}).get(key) if after is not None else None
    if shown != value:
        now = "it does not load" if after is None else f"the next load shows {key} = {shown!r}"
        raise EffectMissing(REQUIREMENT[kind]["commit"],
                            f"a commit setting {key} = {value!r} on {kind} {what} answered {_answered(out)}, but {now}",
                            out if isinstance(out, Exchange) else None)
    return out


def appended(what: str, step: Callable[[], Any], state: State, snapshot_id: int) -> Any:
    """``step`` commits an append (add-snapshot, set-snapshot-ref main) whose snapshot is ``snapshot_id`` to table
    ``what``; the next load must show its whole effect: the snapshot current and main pointing at it (else
    EffectMissing of EVO-06). ``state`` reads the table's metadata."""
    out = step()
    after = state()
    shown = after.get("current-snapshot-id") if after is not None else None
    main = ((after or {}).get("refs") or {}).get("main") if after is not None else None
    main_id = main.get("snapshot-id") if isinstance(main, dict) else None
    if shown != snapshot_id or main_id != snapshot_id:
        snaps = [s.get("snapshot-id") for s in (after or {}).get("snapshots") or [] if isinstance(s, dict)]
        current = f"the next load's current snapshot is {shown} and main points at {main_id}"
        if after is None:
            now = "it does not load"
        elif snapshot_id in snaps:
            now = f"{current}: the snapshot is listed (the add-snapshot landed, the set-snapshot-ref main did not)"
        elif not snaps:
            now = f"{current}: the table records no snapshot (a lost write)"
        else:
            now = f"{current}: the table does not record snapshot {snapshot_id}"
        raise EffectMissing(REQUIREMENT["table"]["append"],
                            f"an append of snapshot {snapshot_id} to table {what} was acknowledged "
                            f"({_answered(out)}), but {now}", out if isinstance(out, Exchange) else None)
    return out


def append_in_part(metadata: dict | None, acknowledged: int) -> str | None:
    """What shows that appends acknowledged to a table landed in part - their snapshots listed, main pointing at
    none of them (the add-snapshot applied, the set-snapshot-ref main not) - or None. For a check whose workload
    is appends: its verdict would rest on that broken plain append (EVO-06), not judge it."""
    if not acknowledged or not isinstance(metadata, dict):
        return None
    snaps = [s.get("snapshot-id") for s in metadata.get("snapshots") or [] if isinstance(s, dict)]
    main = (metadata.get("refs") or {}).get("main")
    main_id = main.get("snapshot-id") if isinstance(main, dict) else None
    if not snaps or main_id in snaps:
        return None
    return (f"{acknowledged} append(s) were acknowledged and the table lists {len(snaps)} snapshot(s), but main "
            f"points at {'none' if main_id is None else main_id} (current-snapshot-id "
            f"{metadata.get('current-snapshot-id')}): the add-snapshot landed, the set-snapshot-ref main did not")


def renamed(kind: str, what: str, step: Callable[[], Any], target: State) -> Any:
    """``step`` renames ``what`` away; the target name must then load (else EffectMissing of the kind's rename
    requirement)."""
    return _loads_after(step, target, REQUIREMENT[kind]["rename"],
                        lambda answered: f"renaming {kind} {what} answered {answered}, but the new name does not load")


def renamed_back(kind: str, what: str, step: Callable[[], Any], source: State) -> Any:
    """``step`` renames the target back to ``what``; ``what`` must then load (else EffectMissing of the kind's
    rename requirement)."""
    return _loads_after(step, source, REQUIREMENT[kind]["rename"],
                        lambda answered: f"renaming {kind} back to {what} answered {answered}, but {what} does not "
                                         "load")
