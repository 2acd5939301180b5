"""``python -m app.client [--workflow ID | --new NAME] ...``: ``planwright chat`` alone."""

import argparse
import sys

from app.client.command import register

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="planwright")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["chat", *sys.argv[1:]])
    raise SystemExit(args.run(args))
