"""`acts-sql batch`: correction at data-curation scale (docs/SCALE.md).

`runner` reads the input and writes the results, `worker` corrects one task
with a long-lived backend and open databases, `tasks` and `databases` read
the input and the database names, `summary` writes the summary. The workers
run on a pool of `acts_sql.scale`: processes of this machine or Ray actors.
"""
