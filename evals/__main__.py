"""``python -m evals run|compare|prompts``."""

from evals.cli import main

raise SystemExit(main())
