"""OpenFn's own formats, out of and into Planwright's workflow document.

- ``formats``: :func:`export_workflow` / :func:`import_workflows` by format name
  (``yaml``, ``lightning``, ``cli``); :func:`export_project` / :func:`import_project`
  for a whole project as one ``project.yaml``;
- ``ids``: the step, edge and workflow ids ``@openfn/project`` derives (``slugify``);
- ``cli``: :func:`to_cli_workflow`, the CLI ``workflow.json`` ``@openfn/runtime`` runs;
- ``lightning``: :func:`to_lightning_project`, Lightning's ``project.yaml``;
- ``lightning_import``, ``cli_import``: reading those back, via ``building``
  (assembling a document) and ``fields`` (errors that name the field);
- ``context``: what an imported file holds around a workflow (project name,
  description, sections, trigger keys), kept for the exports; bodies from ``files``;
- ``parts``: trigger fields, edge ends and conditions both exports share.

All of it is pure functions over :class:`~tools.document.WorkflowDocument`.
"""

from tools.document.openfn.cli import to_cli_workflow
from tools.document.openfn.cli_import import from_cli_json, from_cli_workflow
from tools.document.openfn.formats import (
    FORMATS,
    Exported,
    Format,
    ImportedProject,
    export_project,
    export_workflow,
    guess_format,
    import_project,
    import_workflows,
)
from tools.document.openfn.ids import slugify
from tools.document.openfn.lightning import to_lightning_project, to_lightning_yaml
from tools.document.openfn.lightning_import import from_lightning_project, from_lightning_yaml

__all__ = [
    "FORMATS",
    "Exported",
    "Format",
    "ImportedProject",
    "export_project",
    "export_workflow",
    "from_cli_json",
    "from_cli_workflow",
    "from_lightning_project",
    "from_lightning_yaml",
    "guess_format",
    "import_project",
    "import_workflows",
    "slugify",
    "to_cli_workflow",
    "to_lightning_project",
    "to_lightning_yaml",
]
