"""The workflow document: round-trip YAML, its typed structure and the rules over it.

- ``workflow``: :class:`WorkflowDocument`, the seam everything uses;
- ``structure``: the typed index (jobs, triggers, edges) and the draft ops;
- ``emitter``, ``yaml_io``, ``yaml_comments``: loading and incremental emission;
- ``schema``: the document's pydantic schema and its JSON Schema file;
- ``validation``: the problems of a structure; ``names``, ``refs``, ``cron``: its rules;
- ``redaction``: the structure as the model sees it; ``importing``: whole-document replace.
"""

from tools.document.workflow import WorkflowDocument

__all__ = ["WorkflowDocument"]
