"""The scenario file format (YAML), as a JSON Schema plus the rules the schema cannot say.

A scenario file holds one scenario (a mapping) or several (``scenarios: [...]``)::

    name: createNamespace finalized duplicate      # required; unique within the file
    requirement: REPLAY-01                          # required; an id of ctk.core.requirements
    endpoint: createNamespace                       # required; the operationId exercised
    behaviour: finalized-duplicate                  # optional; matrix column: a name of ctk.core.behaviours
    description: ...                                # optional
    requires: [idempotency, faults]                 # optional; missing capability -> verdict unsupported
    setup:   [step, ...]                            # optional; an unmet expectation -> inconclusive
    steps:   [step, ...]                            # required; an unmet expectation -> the requirement is broken

Steps (exactly one of request / fault / wait / observe / clear_faults per step):

    - request:                      # one HTTP request, path relative to /v1/{prefix}
        method: POST
        path: namespaces            # placeholders: {ns} {uid} {table} {view} {child}
        body: {namespace: ["{ns}", "{child}"]}
        key: new                    # new (fresh UUIDv7) | same (the last key) | none | a literal string
        header: idempotency-key     # optional header spelling (default Idempotency-Key)
        headers: {X-Extra: "1"}     # optional
      save: first                   # optional: remember the exchange under this name
      expect:
        status: [200]               # list of codes; "none" = no answer (lost, reset, timeout)
        body: {namespace: ["{ns}", "{child}"]}   # dotted paths -> expected values
        same_body_as: first         # body equal (as JSON) to a saved exchange's body
        same_status_as: first
        subtype: request_in_progress
    - fault: {action: lose_answer, mode: drop}
        # armed for the NEXT request step (through the CheckContext's fault injector: the control API of
        # the reference catalog, or the interposer), once. Actions: lose_answer (mode 503 | 500 | reset |
        # drop; default drop = no answer) | delay (seconds) | fail_before (status) | fail_after_commit
        # (status) | crash_before_finalize | corrupt_stored_response. Optional: operation (default: the
        # scenario's endpoint), method and path (default: the next request's).
    - wait: 1.5                     # seconds, or "lifetime" (the advertised idempotency-key-lifetime)
    - observe: namespace_exists     # state query; args below
      args: {namespace: ["{ns}", "{child}"]}
      save: before                  # optional
      expect: {value: true}         # value | value_in | at_least | at_most | delta_from (saved) + value
    - clear_faults: true

State queries: namespace_exists(namespace), table_exists(namespace, table), view_exists(namespace, view),
property(kind: namespace|table, namespace, table?, key), metadata_log_length(namespace, table),
snapshot_count(namespace, table), executions(operation?) (control API counters).
"""

from __future__ import annotations

KEY_MODES = ("new", "same", "none")
FAULT_ACTIONS = {
    "lose_answer": "drop-after-commit",
    "delay": "delay",
    "fail_before": "fail-before",
    "fail_after_commit": "fail-after-commit",
    "crash_before_finalize": "crash-before-finalize",
    "corrupt_stored_response": "corrupt-stored-response",
}
QUERIES = {
    "namespace_exists": ("namespace",),
    "table_exists": ("namespace", "table"),
    "view_exists": ("namespace", "view"),
    "property": ("kind", "namespace", "key"),
    "metadata_log_length": ("namespace", "table"),
    "snapshot_count": ("namespace", "table"),
    "executions": (),
}
CAPABILITIES = ("idempotency", "faults", "control-api")
STEP_KINDS = ("request", "fault", "wait", "observe", "clear_faults")

_status = {"oneOf": [{"type": "integer", "minimum": 100, "maximum": 599},
                     {"const": "none"},
                     {"type": "array", "minItems": 1,
                      "items": {"oneOf": [{"type": "integer", "minimum": 100, "maximum": 599}, {"const": "none"}]}}]}

STEP_SCHEMA = {
    "type": "object",
    "properties": {
        "request": {
            "type": "object",
            "required": ["method", "path"],
            "additionalProperties": False,
            "properties": {
                "method": {"enum": ["GET", "HEAD", "POST", "PUT", "DELETE", "get", "head", "post", "put", "delete"]},
                "path": {"type": "string", "minLength": 1},
                "body": {},
                "key": {"type": "string", "minLength": 1},
                "header": {"type": "string", "minLength": 1},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "label": {"type": "string"},
            },
        },
        "fault": {
            "type": "object",
            "required": ["action"],
            "additionalProperties": False,
            "properties": {
                "action": {"enum": sorted(FAULT_ACTIONS)},
                "operation": {"type": "string"},
                "method": {"type": "string"},
                "path": {"type": "string"},
                "status": {"type": "integer", "minimum": 100, "maximum": 599},
                "seconds": {"type": "number", "minimum": 0},
                "mode": {"enum": ["503", "500", "reset", "drop"]},
            },
        },
        "wait": {"oneOf": [{"type": "number", "minimum": 0}, {"const": "lifetime"}]},
        "observe": {"enum": sorted(QUERIES)},
        "clear_faults": {"type": "boolean"},
        "args": {"type": "object"},
        "save": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "label": {"type": "string"},
        "expect": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "status": _status,
                "body": {"type": "object"},
                "same_body_as": {"type": "string"},
                "same_status_as": {"type": "string"},
                "subtype": {"type": "string"},
                "value": {},
                "value_in": {"type": "array"},
                "at_least": {"type": "number"},
                "at_most": {"type": "number"},
                "delta_from": {"type": "string"},
            },
        },
    },
    "additionalProperties": False,
}

SCENARIO_SCHEMA = {
    "type": "object",
    "required": ["name", "requirement", "endpoint", "steps"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "requirement": {"type": "string"},
        "endpoint": {"type": "string", "minLength": 1},
        "behaviour": {"type": "string"},
        "description": {"type": "string"},
        "requires": {"type": "array", "items": {"enum": list(CAPABILITIES)}},
        "setup": {"type": "array", "items": STEP_SCHEMA},
        "steps": {"type": "array", "minItems": 1, "items": STEP_SCHEMA},
    },
}
