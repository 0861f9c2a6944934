"""The engine: plan tree, cursor, search loop, budgets, trace events."""
