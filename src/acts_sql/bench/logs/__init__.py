"""The log-analytics benchmark: a generated database, 60 questions with gold PRQL, and
`acts-sql bench logs` (text-to-query: generate, then correct; scored by result)."""
