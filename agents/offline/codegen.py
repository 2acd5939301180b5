"""Starter job code from the adaptor's function signatures.

The request ("fetch patients and post them to the registry") picks read and/or
write operations from the step's adaptor functions (``get``, ``post``,
``getSubmissions``, ``sendSMS``, ...); arguments are filled by parameter name
(paths and ids become placeholders, payloads ``state => state.data``,
optional options are left out). A ``fn(state => ...)`` block follows for
shaping data; it leaves ``state.data`` in the shape it has (an object stays an
object), because the conditions this model writes on the edges after the step
read its fields (``state.data.plan``). The result always passes
``check_job_code``; if it ever did not, the minimal valid body is returned instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.offline.grammar import camel, imperative, js_string, words
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.names import adaptor_short_name, split_adaptor
from tools.jobcode import check_job_code

_READ_FUNCTIONS = words(
    "get getValues query sql getSubmissions fetchSubmissions getForms getCases getReferrals "
    "getTasks getTask listMembers getContentsFromMessages list getJSON getCSV http.get "
    "tracker.export retrieve bulkQuery findValue getClaim getFile getDrive request"
)
_WRITE_FUNCTIONS = words(
    "post create upsert insert submit appendValues sendMail sendSMS send createTask "
    "createCase upsertCase createReferrals addMember upsertMembers createEncounter putCSV "
    "http.post tracker.import update insertMany upsertMany bulk uploadFile set request"
)
_READ_WORDS = frozenset(
    words(
        "get fetch pull read retrieve download query search list load find look lookup "
        "check verify collect export receive select"
    )
)
_WRITE_WORDS = frozenset(
    words(
        "send post create push submit upload write save insert upsert update notify email "
        "sms text alert store put import record register forward publish append add"
    )
)
_TRANSFORM_WORDS = frozenset(
    words(
        "transform map filter clean dedupe dedup format convert parse merge validate "
        "calculate compute group sort shape reshape enrich summarise summarize count "
        "combine"
    )
)
_FHIR_TYPES = {
    "patient": "Patient",
    "coverage": "Coverage",
    "insurance": "Coverage",
    "referral": "ServiceRequest",
    "encounter": "Encounter",
    "observation": "Observation",
    "document": "DocumentReference",
    "task": "Task",
    "practitioner": "Practitioner",
    "provider": "Practitioner",
    "organization": "Organization",
    "claim": "Claim",
    "appointment": "Appointment",
}
_OPTIONAL = frozenset({"options", "callback", "...args", "parsingOptions", "encoding", "filter"})
_PAYLOAD = frozenset(
    words("data body record records values payload sendData mail fields entries rows members")
)
_STOP = frozenset(words("a an the all any some each every new from to into in on for with of and"))


def _words(text: str) -> list[str]:
    return [imperative(w).lower() for w in re.findall(r"[A-Za-z]+", text)]


_PREAMBLE = re.compile(
    r"^.*?\bcode\b(?:\s+(?:for|in|of|on)\s+.+?)?\s+(?:to|that|so\s+that|so\s+it|which)\s+"
    r"|^(?:make|have)\s+.+?\s+(?=(?:fetch|get|pull|post|send|upload|create|save|read|query)\b)",
    re.I,
)


_BARE = re.compile(
    r"^(?:please\s+)?(?:write|generate|create|add|implement|update|fix|rewrite|redo|draft"
    r"|fill\s+in|complete)\s+(?:the\s+|some\s+)?(?:missing\s+|starter\s+)?(?:job\s+)?code\b"
    r"(?:\s+(?:for|in|of|on)\s+.+)?$",
    re.I,
)


def what_to_do(request: str) -> str:
    """The request without 'write the code for X to' in front ('' if that is all it says)."""
    if _BARE.match(request.strip()):
        return ""
    return _PREAMBLE.sub("", request.strip(), count=1)


# Words that start a new clause: an action word right after one is a verb of its own
# ("fetch the orders and post them"); elsewhere it is part of the object
# ("post the order list", "post the check results": one write).
_CLAUSE_START = frozenset(words("and then before after or also , ;"))


def intents(request: str, name: str) -> list[str]:
    """'read', 'write' and/or 'transform', in the order the request mentions them.

    The first action word is the step's verb; a later one counts only where a clause
    starts (after "and", "then", a comma...), so the nouns of the object never add an
    operation the step was not asked for.
    """
    for text in (what_to_do(request), name):
        found: list[str] = []
        previous = ""
        for token in re.findall(r"[A-Za-z]+|[,;]", text):
            word = imperative(token).lower() if token.isalpha() else token
            if not found or previous in _CLAUSE_START:
                for kind, vocabulary in (
                    ("read", _READ_WORDS),
                    ("write", _WRITE_WORDS),
                    ("transform", _TRANSFORM_WORDS),
                ):
                    if word in vocabulary:
                        if kind not in found:
                            found.append(kind)
                        break
            previous = word
        if found:
            return found
    return []


_PHRASE_END = frozenset(words("from to into in on for with of over via by at as and then"))
_PARTICLES = frozenset(words("up out back off down s"))


def _object_noun(request: str, name: str) -> str:
    """The head of the object after the first verb, the last word of its noun phrase:
    'fetch the patients from X' -> 'patients', "look up the member's insurance over
    http" -> 'insurance', 'fetch the open referrals' -> 'referrals'."""
    for text in (what_to_do(request), name):
        words = re.findall(r"[A-Za-z][A-Za-z0-9_-]*", text)
        for index, word in enumerate(words):
            low = imperative(word).lower()
            if low in _READ_WORDS | _WRITE_WORDS | _TRANSFORM_WORDS:
                phrase: list[str] = []
                for following in words[index + 1 :]:
                    lower = following.lower()
                    if lower in _PHRASE_END and phrase:
                        break
                    if lower not in _STOP and lower not in _PARTICLES:
                        phrase.append(following)
                if phrase:
                    return phrase[-1]
    return "records"


# language-http sends its body as JSON by default, but language-common's request
# encoder hands an iterable body (an array of records) to undici unencoded, and the
# request fails; a JSON string goes through unchanged for arrays and objects alike.
_JSON_BODY = "state => JSON.stringify(state.data)"
_JSON_BODY_ADAPTORS = frozenset({"http"})


def _argument(
    param: str, index: int, function: str, noun: str, request: str, adaptor: str = ""
) -> str:
    url = re.search(r"(https?://[^\s'\"]+|/[\w/{}.-]+)", request)
    singular = noun.rstrip("s") if noun.lower().endswith("s") and len(noun) > 3 else noun
    if param == "method":
        return js_string("POST" if "post" in request.lower() else "GET")
    if param in ("path", "postUrl", "pathOrId"):
        if url:
            return js_string(url.group(1))
        fhir = _FHIR_TYPES.get(singular.lower())
        return js_string(fhir or noun.lower())
    if param == "resourceType":
        return js_string(_FHIR_TYPES.get(singular.lower()) or camel(noun))
    if param == "sObjectName":
        return js_string(singular[:1].upper() + singular[1:].lower())
    if param in ("table", "tableName"):
        return js_string(camel(noun).lower())
    if param in ("sqlQuery", "queryString") or (param == "query" and index == 0):
        return js_string(f"SELECT * FROM {camel(noun).lower()} LIMIT 100")
    if param in ("data", "body") and adaptor in _JSON_BODY_ADAPTORS:
        return _JSON_BODY
    if param in _PAYLOAD or (param == "resource" and index > 0):
        return "state => state.data"
    if param in ("params", "query", "options", "obj") and index == 0:
        return "state => state.data" if function in _WRITE_FUNCTIONS else "{}"
    if param == "operation":
        return js_string("insert")
    if param == "strategy":
        return js_string("CREATE_AND_UPDATE")
    if param in ("keyGen", "logical"):
        return "value => value.id" if param == "keyGen" else "state => Boolean(state.data)"
    if param in ("columns", "ids"):
        return "[]"
    placeholder = re.sub(r"(?<!^)(?=[A-Z])", "_", param).upper()
    return js_string(placeholder)


def operation_call(
    function: dict[str, Any], request: str = "", name: str = "", adaptor: str = ""
) -> str:
    params: Sequence[str] = function.get("params") or []
    noun = _object_noun(request, name)
    args: list[str] = []
    for index, param in enumerate(params):
        if param in _OPTIONAL or (index > 0 and param in ("params", "query")):
            break
        args.append(_argument(param, index, function["name"], noun, request, adaptor))
    return f"{function['name']}({', '.join(args)});"


def _pick(functions: list[dict[str, Any]], preferred: list[str]) -> dict[str, Any] | None:
    # The facts list some functions without parameters (namespaced ones such as common's
    # ``http.get`` by name only): with nothing to fill, ``http.get()`` cannot run.
    by_name = {f["name"]: f for f in functions if f.get("params")}
    for name in preferred:
        if name in by_name:
            return by_name[name]
    return None


def _comment(text: str) -> str:
    return " ".join(text.split())[:160]


def starter_code(job: dict[str, Any], functions: list[dict[str, Any]], request: str) -> str:
    name = str(job.get("name") or job.get("key") or "this step")
    adaptor = str(job.get("adaptor") or "")
    short = adaptor_short_name(adaptor) or "common"
    wanted = intents(request, name) or ["transform"]
    lines = [
        f"// {_comment(name)}: starter code written offline from the {short} adaptor's functions.",
        f"// Request: {_comment(request) or '(none)'}",
        "// Replace the UPPER_CASE placeholders and check paths before running.",
    ]
    used: set[str] = set()
    for kind in wanted:
        if kind == "transform":
            continue
        preferred = _READ_FUNCTIONS if kind == "read" else _WRITE_FUNCTIONS
        function = _pick(functions, [f for f in preferred if f not in used])
        if function is None:
            continue
        used.add(function["name"])
        lines.append(operation_call(function, request, name, short))
    entry = load_catalogue().get(adaptor)
    if "write" in wanted and not {"read", "transform"} & set(wanted) and used:
        return _checked("\n".join(lines) + "\n", name, adaptor)
    if entry is not None and not entry.has_call("fn"):
        # No fn() in this adaptor (the facts list none for language-collections).
        return _checked("\n".join(lines) + "\n", name, adaptor)
    lines += [
        "fn(state => {",
        "  // Shape the data for the next step here. Keep state.data's shape: the",
        "  // conditions on the edges after this step read its fields (state.data.<field>).",
        "  const count = Array.isArray(state.data) ? state.data.length : state.data ? 1 : 0;",
        "  console.log(`" + short + ": ${count} item(s)`);",
        "  return state;",
        "});",
    ]
    return _checked("\n".join(lines) + "\n", name, adaptor)


def _checked(code: str, name: str, adaptor: str = "") -> str:
    # Checked against the step's adaptor too: a name it lacks would be refused.
    if not check_job_code(code, load_catalogue().get(adaptor), version=split_adaptor(adaptor)[1]):
        return code
    return minimal_code(name, "generated code did not check", adaptor)


def minimal_code(name: str, reason: str = "", adaptor: str = "") -> str:
    """``fn(state => state)``, or only a comment where the adaptor has no ``fn`` (the
    facts list none for language-collections or -flutterwave)."""
    note = f" ({_comment(reason)})" if reason else ""
    head = f"// {_comment(name)}: minimal placeholder written offline{note}.\n"
    entry = load_catalogue().get(adaptor)
    if entry is not None and not entry.has_call("fn"):
        return head
    return head + "fn(state => state);\n"
