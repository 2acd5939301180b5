"""``python -m agents.offline.rules --readme [--check] [PATH]``: regenerate the grammar
tables of agents/offline/README.md from the rules (``--check``: exit 1 if they are stale)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.offline.rules.docs import README, capabilities, render_readme


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.offline.rules")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's tables")
    parser.add_argument("--check", action="store_true", help="fail if the README is stale")
    parser.add_argument("path", nargs="?", type=Path, default=README)
    args = parser.parse_args(argv)
    if not (args.readme or args.check):
        print(capabilities())
        return 0
    text = args.path.read_text(encoding="utf-8")
    rendered = render_readme(text)
    if args.check:
        if rendered != text:
            print(f"{args.path} is stale: run python -m agents.offline.rules --readme")
            return 1
        return 0
    if rendered != text:
        args.path.write_text(rendered, encoding="utf-8")
        print(f"updated {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
