"""Running Planwright's workflows in OpenFn's own ``@openfn/runtime`` (npm).

``install`` pins and installs the packages, ``mock_http`` is the loopback HTTP
server the adaptors talk to, ``runtime`` executes a CLI workflow.json. Used by
``tests/external/test_openfn_runtime.py`` and the eval grader
``evals.graders.runtime``.
"""
