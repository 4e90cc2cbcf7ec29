"""Checkers comparing a `History` with the final state.

`check_effects(history, observed)` is the generic Jepsen-style set checker: ``observed`` is the multiset of
operation values visible in the final state (e.g. the snapshot ids, or a marker written into each
snapshot's summary). Per logical operation (attempts folded):

* lost           - acknowledged ok but absent                                   (anomaly, HIST-01)
* duplicated     - its value appears more than once (applied twice)             (anomaly, HIST-02)
* failed_present - reported failed but present (e.g. a blind retry read its own write as a 409: seed
                   example 1a)                                                  (anomaly)
* recovered      - outcome unknown (info) but present                           (fine)
* unknown_absent - outcome unknown and absent                                   (fine)
* unexpected     - observed values no operation wrote                           (anomaly)

`check_chain(table_state)` flags a non-linear history: snapshots outside the main parent chain, a broken
chain, sequence numbers not strictly increasing along it. `check_table()` runs both.

Nothing is judged from state the catalog could not give: an unreadable state (5xx, no answer) yields only
the ``unreadable`` category (``CheckResult.judgeable`` false), never "lost" or "nonlinear". A history with no
operation to judge (``CheckResult.acknowledged`` 0) is not a pass either: `vacuous_reason()` says why; nor is
"nothing duplicated" when no operation's value is in the state at all (`duplicates_vacuous_reason()`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ctk.history.recorder import FAIL, INFO, OK, History, Operation
from ctk.history.state import TableState

ANOMALIES = ("lost", "duplicated", "failed_present", "unexpected", "nonlinear")
# ok_present, recovered (info and present), unknown_absent (info and absent), fail_absent: not anomalies
BENIGN = ("ok_present", "recovered", "unknown_absent", "fail_absent")


@dataclass
class CheckResult:
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, category: str, item: Any) -> None:
        self.counts[category] = self.counts.get(category, 0) + 1
        self.details.setdefault(category, []).append(item)

    def count(self, category: str) -> int:
        return self.counts.get(category, 0)

    @property
    def judgeable(self) -> bool:
        """False when the final state could not be read: the result says nothing about the target."""
        return not self.count("unreadable")

    @property
    def acknowledged(self) -> int:
        """Operations the catalog acknowledged (ok), present or lost."""
        return self.count("ok_present") + self.count("lost")

    @property
    def present(self) -> int:
        """Operations whose value the final state shows (acknowledged, recovered after an unknown outcome, or
        reported failed): the evidence a duplication check has to look at."""
        return self.count("ok_present") + self.count("recovered") + self.count("failed_present")

    def duplicates_vacuous_reason(self, op: str = "operation") -> str | None:
        """Why "nothing applied twice" cannot be a pass (None when it can): unreadable state, or no operation's
        value in the final state to be seen twice (acknowledged ones missing are HIST-01's lost writes)."""
        if not self.judgeable:
            return "; ".join(map(str, self.details.get("unreadable", []))) or "state unreadable"
        if not self.present:
            lost = self.count("lost")
            return (f"none of the {op}s is in the final state" + (f" ({lost} acknowledged: lost, see HIST-01)"
                                                                 if lost else "") + ", so none can be seen twice")
        return None

    def vacuous_reason(self, op: str = "operation") -> str | None:
        """Why this result cannot support a pass (None when it can): unreadable state, or nothing acknowledged."""
        if not self.judgeable:
            return "; ".join(map(str, self.details.get("unreadable", []))) or "state unreadable"
        if not self.acknowledged:
            return f"0 acknowledged {op}s: nothing to judge"
        return None

    @property
    def valid(self) -> bool:
        return not any(self.count(a) for a in ANOMALIES)

    @property
    def anomalies(self) -> dict[str, list[Any]]:
        return {a: self.details[a] for a in ANOMALIES if self.details.get(a)}

    def merge(self, other: "CheckResult") -> "CheckResult":
        for cat, items in other.details.items():
            for it in items:
                self.add(cat, it)
        for cat, n in other.counts.items():  # counts without details (e.g. chain_length)
            if cat not in other.details:
                self.counts[cat] = n
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "counts": dict(self.counts),
                "details": {k: [str(i) for i in v] for k, v in self.details.items()}}

    def __str__(self) -> str:
        head = "valid" if self.valid else "INVALID"
        counts = ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items())) or "nothing checked"
        lines = [f"{head}: {counts}"]
        for cat, items in self.anomalies.items():
            lines.append(f"  {cat}:")
            lines += [f"    - {i}" for i in items[:20]]
            if len(items) > 20:
                lines.append(f"    ... {len(items) - 20} more")
        return "\n".join(lines)


def check_effects(history: History | Iterable[Operation], observed: Iterable[Any],
                  op: str | Callable[[Operation], bool] | None = None) -> CheckResult:
    """Compare operations (optionally only those named ``op``) with the multiset of observed values."""
    ops = history.operations() if isinstance(history, History) else list(history)
    if isinstance(op, str):
        ops = [o for o in ops if o.op == op]
    elif callable(op):
        ops = [o for o in ops if op(o)]
    seen = Counter(observed)
    known: set[Any] = set()
    res = CheckResult()
    for o in ops:
        known.add(o.value)
        n = seen.get(o.value, 0)
        if n > 1:
            res.add("duplicated", f"{o.describe()} appears {n} times")
        outcome = o.outcome or INFO
        if outcome == OK:
            res.add("ok_present" if n else "lost", o.describe())
        elif outcome == FAIL:
            if n:
                why = " (an earlier attempt had an unknown outcome: the retry read its own write)" if o.ambiguous else ""
                res.add("failed_present", o.describe() + why)
            else:
                res.add("fail_absent", o.describe())
        else:
            res.add("recovered" if n else "unknown_absent", o.describe())
    for value, n in seen.items():
        if value not in known:
            res.add("unexpected", f"value {value!r} present {n} time(s), written by no operation")
    return res


def check_chain(state: TableState, ref: str = "main", expect_all_in_chain: bool = True) -> CheckResult:
    """A linear main history: every snapshot in the parent chain, sequence numbers strictly increasing."""
    res = CheckResult()
    if state.exists is None:
        res.add("unreadable", state.error or "state unreadable")
        return res
    if not state.exists:
        res.add("nonlinear", f"table absent: {state.error or 'load table answered 404'}")
        return res
    chain = state.parent_chain(ref)
    ids = state.snapshot_ids
    if len(ids) != len(set(ids)):
        dup = [i for i, n in Counter(ids).items() if n > 1]
        res.add("nonlinear", f"snapshot ids listed more than once: {dup}")
    if chain:
        root = state.snapshot(chain[-1]) or {}
        parent = root.get("parent-snapshot-id")
        if parent is not None and parent != -1:
            res.add("nonlinear", f"parent chain broken: snapshot {chain[-1]} names missing parent {parent}")
    if expect_all_in_chain:
        outside = [i for i in ids if i not in set(chain)]
        if outside:
            res.add("nonlinear", f"snapshots not in the {ref} parent chain: {outside}")
    seqs = [(sid, (state.snapshot(sid) or {}).get("sequence-number")) for sid in reversed(chain)]
    for (a, sa), (b, sb) in zip(seqs, seqs[1:]):
        if sa is not None and sb is not None and not sb > sa:
            res.add("nonlinear", f"sequence number of {b} ({sb}) not greater than its parent {a} ({sa})")
    last = state.last_sequence_number
    if seqs and last is not None and seqs[-1][1] is not None and seqs[-1][1] > last:
        res.add("nonlinear", f"head sequence number {seqs[-1][1]} > last-sequence-number {last}")
    res.counts["chain_length"] = len(chain)
    return res


def check_table(history: History | Iterable[Operation], state: TableState, op: str | None = None,
                summary_key: str | None = None, ref: str = "main") -> CheckResult:
    """`check_effects` on the table's snapshots plus `check_chain`.

    Operation values are snapshot ids, unless ``summary_key`` names a snapshot summary property whose values
    are the operation values (a marker that also detects a re-execution producing a new snapshot id).
    """
    if state.exists is None:        # nothing can be observed: no operation is judged lost or present
        res = CheckResult()
        res.add("unreadable", state.error or "state unreadable")
        return res
    observed = state.summary_values(summary_key) if summary_key else state.snapshot_ids
    res = check_effects(history, observed, op=op)
    return res.merge(check_chain(state, ref=ref))
