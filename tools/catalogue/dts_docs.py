"""The JSDoc of an adaptor package's ``types/*.d.ts``, for packages whose ``ast.json``
is empty (:func:`tools.catalogue.adaptor_docs.read_package_docs`).

tree-sitter reads both layers: its TypeScript grammar the exported function
declarations and the comment just above each, its JSDoc grammar the comment's tags.
"""

from __future__ import annotations

from collections.abc import Iterable

from tree_sitter import Language, Node, Parser

from tools.catalogue.adaptor_docs import PackageFunction

_DTS_PARAMETERS = ("required_parameter", "optional_parameter")


def _typescript() -> Parser:
    """A parser for TypeScript declarations (tree-sitter's own grammar, loaded on first use)."""
    import tree_sitter_typescript

    return Parser(Language(tree_sitter_typescript.language_typescript()))


def _exported_functions(root: Node) -> Iterable[tuple[Node, Node | None]]:
    """Each exported function signature at the top level, with the comment just above it."""
    previous: Node | None = None
    for node in root.named_children:
        if node.type == "export_statement":
            declaration = node.named_children[-1] if node.named_children else None
            if declaration is not None and declaration.type == "ambient_declaration":
                declaration = declaration.named_children[-1] if declaration.named_children else None
            if declaration is not None and declaration.type in (
                "function_signature",
                "function_declaration",
            ):
                yield declaration, previous if previous and previous.type == "comment" else None
        previous = node


def _parameter_names(function: Node) -> tuple[str, ...]:
    """Named parameters of a signature (``...rest`` kept; destructured ones have no name)."""
    parameters = function.child_by_field_name("parameters")
    names: list[str] = []
    for parameter in parameters.named_children if parameters else ():
        pattern = parameter.child_by_field_name("pattern")
        if parameter.type not in _DTS_PARAMETERS or pattern is None:
            continue
        if pattern.type == "identifier":
            names.append(_text(pattern))
        elif pattern.type == "rest_pattern" and pattern.named_children:
            names.append("..." + _text(pattern.named_children[0]))
    return tuple(names)


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def _jsdoc() -> Parser:
    """A parser for JSDoc comment bodies (tree-sitter's JSDoc grammar, loaded on first use)."""
    import tree_sitter_jsdoc

    return Parser(Language(tree_sitter_jsdoc.language()))


def _comment_text(text: str) -> str:
    """Comment text without each line's leading `` * ``."""
    lines = []
    for line in text.splitlines():
        line = line.lstrip()
        lines.append(line.removeprefix("*").removeprefix(" ").rstrip())
    return "\n".join(lines)


def _param_name(node: Node) -> str | None:
    """``name``, ``options.limit`` (also in ``[...]`` and ``[... = default]``), ``...rest``."""
    if node.type in ("identifier", "member_expression"):
        return _text(node)
    if node.type in ("optional_identifier", "array_expression"):
        inner = [n for n in node.named_children if n.type in ("identifier", "member_expression")]
        return _text(inner[0]) if inner else None
    return None


def _function_from_jsdoc(doc: Node, function: Node) -> PackageFunction | None:
    """The function a ``/** ... */`` comment documents, or None unless it is ``@public``."""
    tags = [tag for tag in doc.named_children if tag.type == "tag" and tag.named_children]
    names = [_text(tag.named_children[0]).removeprefix("@") for tag in tags]
    if "public" not in names:
        return None
    source = doc.text or b""
    ends = [tag.start_byte for tag in tags[1:]] + [len(source) - len(b"*/")]
    param_docs: list[tuple[str, str]] = []
    examples: list[str] = []
    for name, tag, end in zip(names, tags, ends, strict=True):
        if name == "param":
            named = next(filter(None, map(_param_name, tag.named_children)), None)
            described = [_text(n) for n in tag.named_children if n.type == "description"]
            if named:
                lines = _comment_text(" ".join(described)).splitlines()
                words = " ".join(line.strip() for line in lines)
                param_docs.append((named, words.removeprefix("-").strip()))
        elif name == "example":
            # Verbatim code up to the next tag: the JSDoc grammar does not read code (a
            # ``//`` line in it is an error node), so the body is the source in between.
            body = source[tag.named_children[0].end_byte : end].decode("utf-8", "replace")
            example = _comment_text(body).replace("<caption>", "").replace("</caption>", "")
            if example.strip():
                examples.append(example.strip())
    summary = " ".join(_text(n) for n in doc.named_children if n.type == "description")
    function_name = function.child_by_field_name("name")
    return PackageFunction(
        name=_text(function_name) if function_name is not None else "",
        params=_parameter_names(function),
        description=" ".join(s.strip() for s in _comment_text(summary).splitlines() if s.strip()),
        param_docs=tuple(param_docs),
        examples=tuple(examples),
    )


def parse_dts(text: str) -> list[PackageFunction]:
    """Public functions documented with JSDoc in a TypeScript declaration file: the
    declarations read by tree-sitter's TypeScript grammar, their comments by its JSDoc one."""
    functions = []
    root = _typescript().parse(text.encode("utf-8")).root_node
    jsdoc = _jsdoc()
    for function, comment in _exported_functions(root):
        if comment is None or not _text(comment).startswith("/**"):
            continue
        documented = _function_from_jsdoc(jsdoc.parse(comment.text or b"").root_node, function)
        if documented is not None:
            functions.append(documented)
    return functions
