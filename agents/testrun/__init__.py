"""Test runs: a workflow executed in OpenFn's own runtime on a sample (DESIGN §5c)."""
