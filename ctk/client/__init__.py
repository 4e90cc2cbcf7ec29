"""The client layer: the target (URL, auth, limits), discovery of /v1/config, the recorded HTTP transport, keys, placement of the run namespace, storage settings and the retrying reference client."""
