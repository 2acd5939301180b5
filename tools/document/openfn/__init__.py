"""OpenFn's own formats, out of and into Planwright's workflow document.

- ``ids``: the step, edge and workflow ids ``@openfn/project`` derives (``slugify``);
- ``cli``: :func:`to_cli_workflow`, the CLI ``workflow.json`` ``@openfn/runtime`` runs;
- ``parts``: trigger fields, edge ends and conditions both exports share.

All of it is pure functions over :class:`~tools.document.WorkflowDocument`.
"""

from tools.document.openfn.cli import to_cli_workflow
from tools.document.openfn.ids import slugify

__all__ = ["slugify", "to_cli_workflow"]
