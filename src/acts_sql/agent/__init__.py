"""The Central Agent: prompts per purpose and typed decisions (plan, choose, judge)."""
