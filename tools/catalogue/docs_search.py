"""Full-text search over adaptor functions, concept notes and installed package docs.

An in-memory SQLite FTS5 index ranked with bm25. Free-text queries (usually
written by a language model) are reduced to plain word tokens and OR-ed as
quoted FTS5 strings, so no input can inject FTS5 syntax.

Documents:

- ``function``: every catalogue function, titled ``http.post(path, data, options)``;
- ``adaptor``: every catalogue adaptor's description and function list;
- ``concept``: each ``##`` section of ``tools/catalogue/data/concepts/*.md``;
- ``package-doc``: when a package-docs cache folder is given and holds installed
  adaptor packages, each documented function's description, parameter notes
  and examples (that text stays in the cache and is never committed).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.catalogue.adaptor_docs import PackageDocs, read_all_package_docs
from tools.catalogue.adaptors import Adaptor, AdaptorCatalogue
from tools.catalogue.names import adaptor_short_name

DEFAULT_CONCEPTS_DIR = Path(__file__).resolve().parent / "data" / "concepts"

MAX_RESULTS = 20
MAX_QUERY_TERMS = 32
MAX_TEXT_CHARS = 1500

# Columns: title, name, adaptor, body are searched; the rest are stored only.
# bm25 weights follow the searched columns in order.
_BM25 = "bm25(docs, 3.0, 4.0, 2.0, 1.0)"

_STOPWORDS = frozenset(
    """a an the and or not to of in on for with from into onto by at as is are be been
    it its this that these those do does did how what which when where who why can could
    should would will want need i me my we our you your please using use via some any
    there then than so if""".split()  # noqa: SIM905 (a word list reads better as text)
)

# Extra words people use for a system that its package name does not contain.
_ADAPTOR_ALIASES = {
    "googlesheets": "google sheets spreadsheet",
    "msgraph": "microsoft graph outlook office365 sharepoint onedrive excel",
    "mssql": "microsoft sql server",
    "postgresql": "postgres sql",
    "mysql": "sql",
    "kobotoolbox": "kobo",
    "commcare": "dimagi",
    "collections": "key value store",
    "gmail": "google email mail",
    "fhir": "hl7",
}


@dataclass(frozen=True)
class DocHit:
    title: str
    adaptor: str | None
    kind: str  # "function" | "adaptor" | "concept" | "package-doc"
    text: str
    score: float


@dataclass(frozen=True)
class _Doc:
    title: str
    name: str
    adaptor_terms: str
    body: str
    kind: str
    adaptor: str | None
    text: str


def _words(identifier: str) -> str:
    """``appendValues`` -> ``appendValues append values``; ``a.b`` -> ``a.b a b``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[._$-]+", " ", identifier)
    return f"{identifier} {spaced}" if spaced != identifier else identifier


def _adaptor_terms(package: str) -> str:
    short = adaptor_short_name(package)
    return " ".join(filter(None, (short, short.replace("-", " "), _ADAPTOR_ALIASES.get(short))))


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1].rstrip() + "…"


def _catalogue_docs(adaptor: Adaptor) -> Iterator[_Doc]:
    short = adaptor.short_name
    terms = _adaptor_terms(adaptor.name)
    names = ", ".join(f.name for f in adaptor.functions)
    yield _Doc(
        title=f"{adaptor.name}@{adaptor.version}",
        name=short,
        adaptor_terms=terms,
        body=f"{adaptor.description}\nFunctions: {names}",
        kind="adaptor",
        adaptor=adaptor.name,
        text=f"{adaptor.description}\nFunctions: {names}",
    )
    for fn in adaptor.functions:
        yield _Doc(
            title=f"{short}.{fn.signature}",
            name=_words(fn.name),
            adaptor_terms=terms,
            body=f"{fn.description}\nParameters: {' '.join(_words(p) for p in fn.params)}",
            kind="function",
            adaptor=adaptor.name,
            text=fn.description,
        )


def _concept_docs(concepts_dir: Path) -> Iterator[_Doc]:
    for path in sorted(concepts_dir.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        doc_title = path.stem.replace("-", " ").capitalize()
        if lines and lines[0].startswith("# "):
            doc_title = lines.pop(0)[2:].strip()
        sections: list[tuple[str, list[str]]] = [(doc_title, [])]
        for line in lines:
            if line.startswith("## "):
                sections.append((f"{doc_title}: {line[3:].strip()}", []))
            else:
                sections[-1][1].append(line)
        for title, body_lines in sections:
            body = "\n".join(body_lines).strip()
            if not body:
                continue
            yield _Doc(
                title=title,
                name=path.stem.replace("-", " "),
                adaptor_terms="",
                body=body,
                kind="concept",
                adaptor=None,
                text=_clip(body),
            )


def _package_docs(package: PackageDocs) -> Iterator[_Doc]:
    short = adaptor_short_name(package.name)
    terms = _adaptor_terms(package.name)
    for fn in package.functions:
        text = fn.doc_text()
        yield _Doc(
            title=f"{short}.{fn.signature}",
            name=_words(fn.name),
            adaptor_terms=terms,
            body=text,
            kind="package-doc",
            adaptor=package.name,
            text=_clip(f"{package.name}@{package.version}\n{text}"),
        )


def _adaptor_key(name: str) -> str:
    """``http`` for ``@openfn/language-HTTP@latest``, ``language-http`` or ``http``."""
    return adaptor_short_name(name.strip().lower())


def _match_expression(query: str) -> str | None:
    """An FTS5 MATCH expression built only from quoted word tokens, or None if no words."""
    raw = re.findall(r"[^\W_]+", query[:4000])
    words: list[str] = []
    for token in raw:
        words.extend(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", token).lower().split())
        if token.lower() not in words:
            words.append(token.lower())
    unique = list(dict.fromkeys(w for w in words if len(w) > 1 or w.isdigit()))
    terms = [w for w in unique if w not in _STOPWORDS] or unique
    if not terms:
        return None
    parts = []
    for term in terms[:MAX_QUERY_TERMS]:
        parts.append(f'"{term}"')
        if len(term) >= 4:
            parts.append(f'"{term}"*')  # prefix match; exact matches score twice
    return " OR ".join(parts)


class DocsIndex:
    """A built, read-only search index. Safe to share between threads."""

    def __init__(self, catalogue: AdaptorCatalogue, conn: sqlite3.Connection) -> None:
        self._catalogue = catalogue
        self._conn = conn
        self._lock = threading.Lock()
        self._adaptors = {
            row[0] for row in conn.execute("SELECT DISTINCT adaptor FROM docs") if row[0]
        }

    @classmethod
    def build(
        cls,
        catalogue: AdaptorCatalogue,
        *,
        concepts_dir: Path | None = None,
        package_docs_dir: Path | None = None,
    ) -> DocsIndex:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(
            "CREATE VIRTUAL TABLE docs USING fts5("
            "title, name, adaptor_terms, body, kind UNINDEXED, adaptor UNINDEXED, text UNINDEXED,"
            " tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        docs: list[_Doc] = []
        for name in catalogue.names():
            docs.extend(_catalogue_docs(catalogue.adaptors[name]))
        docs.extend(_concept_docs(concepts_dir or DEFAULT_CONCEPTS_DIR))
        if package_docs_dir is not None:
            for package in read_all_package_docs(package_docs_dir):
                docs.extend(_package_docs(package))
        with conn:
            conn.executemany(
                "INSERT INTO docs (title, name, adaptor_terms, body, kind, adaptor, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (d.title, d.name, d.adaptor_terms, d.body, d.kind, d.adaptor, d.text)
                    for d in docs
                ],
            )
        return cls(catalogue, conn)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    def _resolve_adaptor(self, name: str) -> str:
        known = self._catalogue.get(name)
        if known is not None:
            return known.name
        wanted = _adaptor_key(name)
        for full in sorted(self._adaptors):  # packages installed but not in the catalogue
            if _adaptor_key(full) == wanted:
                return full
        hint = self._catalogue.suggest(name)
        did_you_mean = f"; did you mean {', '.join(hint)}?" if hint else ""
        raise ValueError(f"unknown adaptor {name!r}{did_you_mean}")

    def search(
        self, query: str, *, adaptor: str | None = None, num_results: int = 5
    ) -> list[DocHit]:
        """The best matches for a free-text query, best first.

        ``adaptor`` (full or short name) restricts results to that adaptor's
        documents and raises ``ValueError`` if the adaptor is unknown.
        ``num_results`` is clamped to 1..20.
        """
        package = self._resolve_adaptor(adaptor) if adaptor else None
        limit = max(1, min(MAX_RESULTS, int(num_results)))
        expression = _match_expression(query or "")
        if expression is None:
            return []
        sql = f"SELECT title, adaptor, kind, text, {_BM25} AS rank FROM docs WHERE docs MATCH ?"
        params: list[object] = [expression]
        if package is not None:
            sql += " AND adaptor = ?"
            params.append(package)
        sql += " ORDER BY rank, rowid LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [
            DocHit(title=t, adaptor=a or None, kind=k, text=x, score=round(-r, 6))
            for t, a, k, x, r in rows
        ]
