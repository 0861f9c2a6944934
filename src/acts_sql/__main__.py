"""`python -m acts_sql`: the `acts-sql` command."""

from acts_sql.cli.app import main

if __name__ == "__main__":
    main()
