"""The graph's nodes, one module each: route, planner, confirm, tools round, code.

``code_agent`` is the job-code sub-agent itself (used by the fan-out and the
direct route); ``commit`` is how every node persists a mutation.
"""
