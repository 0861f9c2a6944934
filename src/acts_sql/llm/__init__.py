"""LLM layer: one protocol, backends, usage accounting, structured (JSON) calls."""
