"""Versioned prompt files (``prompts/<role>/v<N>.md``) and their loader."""

from prompts.loader import (
    PromptError,
    PromptNotFoundError,
    PromptTemplate,
    PromptVariableError,
    list_prompts,
    load_prompt,
)

__all__ = [
    "PromptError",
    "PromptNotFoundError",
    "PromptTemplate",
    "PromptVariableError",
    "list_prompts",
    "load_prompt",
]
