"""Command-line interface: `acts-sql fix`, `acts-sql demo`, `acts-sql protocol`."""
