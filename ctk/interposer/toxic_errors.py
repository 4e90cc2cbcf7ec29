"""The error of a bad toxic definition, shared by the TCP toxics (`toxics`, which builds every toxic) and the
HTTP ones (`http_toxics`, which `toxics` asks about theirs), so that the two import one way."""

from __future__ import annotations

# Toxiproxy's own error texts (its clients show them, some compare them)
ERR_INVALID_TYPE = "invalid toxic type"
ERR_INVALID_STREAM = "stream was invalid, can be either upstream or downstream"
ERR_TOXIC_EXISTS = "toxic already exists"
ERR_TOXIC_NOT_FOUND = "toxic not found"


class ToxicError(ValueError):
    """Bad toxic definition (unknown type, bad stream, bad attribute). `status` is the HTTP status to answer;
    `api_error` is Toxiproxy's exact error text for the case, when it has one (the control API answers it, with
    this message as `detail`); otherwise the API answers "bad request body: <message>", as Toxiproxy does for
    attributes it cannot decode."""

    def __init__(self, message: str, status: int = 400, api_error: str | None = None):
        super().__init__(message)
        self.status = status
        self.api_error = api_error
