"""Helpers of the ctk pytest plugin (ctk/pytest_plugin.py): options, session state, fixtures, collection,
verdict -> outcome mapping and the reports written at the end of a run."""
