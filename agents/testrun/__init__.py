"""Test runs: a workflow executed in OpenFn's own runtime on a sample (DESIGN §5c).

``install`` pins and installs the npm packages (``node/package.json`` + the committed
``package-lock.json``), ``runtime`` executes a CLI workflow.json with ``node/run.mjs``,
``mock_http`` is the loopback HTTP server the older callers point the adaptors at.
Used by the service, the eval runtime grader and ``tests/external``.
"""
