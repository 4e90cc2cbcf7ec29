"""Catalog cases and state: the operations the kit exercises, built over the client layer."""
