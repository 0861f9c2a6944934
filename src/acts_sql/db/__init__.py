"""Database layer: executors (one per dialect), typed results, schema reflection."""
