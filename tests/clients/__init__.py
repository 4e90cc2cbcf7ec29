"""The real-client lane: PyIceberg, DuckDB, iceberg-js and Spark against `ctk serve` (see conftest.py)."""
