"""The offline reader's vocabulary in one place: the word lists its parsers read requests
with, and that the eval grader (``evals/graders/consistency.py``) reads the model's replies
with, so the two cannot drift apart.

Plain data with no imports from the rest of ``agents.offline``: the grader imports this
module alone, never the rule engine.
"""

from __future__ import annotations

from collections.abc import Iterable

ARTICLES = ("a", "an", "the")
NUMBER_WORDS = ("one", "two", "three")
STEP_NOUNS = ("step", "steps", "job", "jobs")
NAMING_WORDS = ("called", "named")

# What a reply says was done to steps (past tense, as the replies word it).
ADDED_VERBS = ("added", "created", "inserted", "appended")
REMOVED_VERBS = ("removed", "deleted")
# Things a reply can add or remove that are not steps.
NOT_STEPS = ("workflow", "edge", "trigger", "connection", "condition", "branch", "code", "schedule")
# Words that end a step's name inside a sentence ("added Check coverage after Get referrals").
NAME_ENDS = (
    "after",
    "before",
    "between",
    "to",
    "with",
    "using",
    "that",
    "which",
    "so",
    "in",
    "on",
    "from",
    "at",
    "for",
    "as",
    "now",
    "because",
)
# Words just before a verb that make it not a claim ("could not add", "would remove").
NOT_A_CLAIM = ("not", "n't", "never", "without", "could", "would", "should", "will", "can", "to")

# Small words dropped from the end of a step name.
STOPWORDS = frozenset(
    (
        *ARTICLES,
        *("of", "to", "for", "in", "on", "at", "by", "with", "and", "or", "from", "into"),
        *("via", "using", "then"),
    )
)
PRONOUN_OBJECTS = frozenset({"it", "them", "this", "that", "those", "these"})
PREPOSITIONS = frozenset(
    {"from", "to", "in", "into", "with", "by", "via", "on", "for", "at", "through", "using"}
)


def alternation(options: Iterable[str]) -> str:
    """The words as one regex alternative, in order: ``a|an|the``."""
    return "|".join(options)
