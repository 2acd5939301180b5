"""One module per tool: its pydantic args model, its handler and its ``TOOL`` spec.

``primitives`` holds the edit steps the tools share; ``specs`` the item models
(``JobSpec``, ``EdgeSpec``, ``TriggerSpec``) several tools take.
"""
