"""What the tools know about OpenFn adaptors.

- ``adaptors``: the adaptor catalogue (``data/adaptors.json``);
- ``names``: resolving and shortening adaptor names;
- ``adaptor_docs`` (``dts_docs``: the JSDoc in ``.d.ts``), ``docs_search``: package docs
  and the FTS5 documentation index over them and ``data/concepts/``.
"""
