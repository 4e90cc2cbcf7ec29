"""Where the tests find the upstream (merged) Iceberg REST OpenAPI document: the shared folder beside the
checkout (`../shared/reference/` from the repository root), or $CTK_UPSTREAM_SPEC. Never an absolute path of
one machine: CI clones the repository next to the same shared folder."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
UPSTREAM_SPEC = Path(os.environ.get("CTK_UPSTREAM_SPEC", SHARED / "reference" / "iceberg-rest-catalog-open-api.yaml"))
