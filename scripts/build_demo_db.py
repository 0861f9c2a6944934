"""Build the demo database shipped as src/acts_sql/demo/demo.sqlite.

    python scripts/build_demo_db.py [--out PATH]

Deterministic (fixed seed): rebuilding gives the same rows, which
tests/demo checks against the shipped file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from acts_sql.demo.build import build_demo_db

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "acts_sql" / "demo" / "demo.sqlite"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the file")
    args = parser.parse_args()
    path = build_demo_db(args.out)
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
