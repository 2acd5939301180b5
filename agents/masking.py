"""Masking secrets out of everything that leaves the process (Langfuse traces, logs).

Traces carry the user's messages, tool inputs and results, and job code, and
job code is where people paste credentials. The masker knows the shapes a
secret takes there rather than a list of exact key names:

- a secret-named key with a value, in an object literal, an assignment, a
  header pair or prose: ``Authorization: 'Bearer X'``, ``'x-api-key': 'X'``,
  ``pw = "X"``, ``{ clientSecret: `X` }``, ``setHeader('X-Auth-Token', 'X')``,
  ``password=X``. A name is secret when one of its words (split on ``_``,
  ``-``, ``.`` and camelCase) is a secret word (``password``, ``pw``,
  ``secret``, ``token``, ``auth``, ``apikey`` ...) or it pairs ``api``,
  ``access``, ``private`` or ``client`` with ``key``; ``author`` and
  ``input_tokens`` are not secret names.
- credentials in URLs: ``https://u:X@host``, ``https://X@host``, and query
  parameters such as ``?api_key=X``, ``&key=X``, ``&access_token=X``.
- authorization schemes anywhere: ``Bearer X``, ``Basic X``, and what is
  base64-encoded into one (``btoa('u:X')``, ``Buffer.from('u:X')``).
- well-known token shapes (Anthropic, Langfuse, OpenAI, GitHub, Slack, AWS,
  Google, GitLab keys, JWTs, PEM private keys).

A bare value that is a member path (``state.configuration.password``) is code,
not a secret, and stays readable. Mapping keys with secret names have their
whole value masked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

MASK = "***"

_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pwd",
        "pw",
        "secret",
        "secrets",
        "token",
        "auth",
        "authorization",
        "apikey",
        "credential",
        "credentials",
        "cookie",
        "jwt",
        "bearer",
        "signature",
        "sig",
        "privatekey",
        "accesskey",
    }
)
_KEY_PREFIXES = frozenset({"api", "access", "private", "client", "secret", "signing"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """``apiKey``, ``x-api-key``, ``client_secret``, ``pw``: yes; ``author``, ``max_tokens``: no."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(a in _KEY_PREFIXES and b == "key" for a, b in itertools.pairwise(words))


# Bounded, and a pair's name starts no word (2fa_token: a digit may come before), so
# that a scan stays linear: a name with no ":" after it is not read again from each
# of its characters.
_NAME = r"[A-Za-z_$][\w$.-]{0,100}"
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`]*`"
_BARE = r"[^\s,;&}\)\]\"'`<>]+"
_IDENT = r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)*"
# 'Bearer ' + 'X', 'Bearer ' + state.configuration.token: strings and names joined
# by "+", one string at least (password=abc+def is one bare value, not code)
_JOINED = (
    rf"(?:{_IDENT}\s*\+\s*)*(?:{_QUOTED})(?:\s*\+\s*(?:{_QUOTED}|{_IDENT}))+"
    rf"|(?:{_IDENT}\s*\+\s*)+(?:{_QUOTED})"
)
_JOINED_VALUE = re.compile(_JOINED)
_JOINED_PIECE = re.compile(rf"{_QUOTED}|{_IDENT}")
# name (maybe quoted), then ":", "=" (not "==") or "=>" (a PHP/Ruby hash; with a
# quoted value only: ``password => password.trim()`` is an arrow function), then a value.
# The value is read only after a secret name (_sub_pairs): reading it after every
# name made a long text quadratic.
_PAIR = re.compile(
    rf"(?<![A-Za-z_$])(?P<name>{_NAME})(?P<close>[\"'`]?)(?P<op>\s*(?::|=>|=(?![=>]))\s*)"
)
_PAIR_VALUE = re.compile(rf"{_JOINED}|{_QUOTED}|{_BARE}")
# a header name and value as two arguments: setHeader('x-api-key', 'X')
_ARGS = re.compile(rf"(?P<name>[\"'`]{_NAME}[\"'`])(?P<op>\s*,\s*)")
_ARGS_VALUE = re.compile(rf"{_JOINED}|{_QUOTED}")
# the scheme alone is no secret: 'Bearer ' + token
_SCHEME_ONLY = re.compile(r"(?i)^(?:bearer|basic|token|digest)\s*$")
_MEMBER_PATH = re.compile(r"^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[[^\]]*\])+$")
_CODE_WORDS = frozenset({"true", "false", "null", "undefined", "none", "yes", "no"})

_TEXT: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
        ),
        "-----BEGIN PRIVATE KEY-----" + MASK,
    ),
    (re.compile(r"\b(sk-ant-|sk-lf-|pk-lf-|sk-proj-|sk-)[A-Za-z0-9_\-]{6,}"), r"\1" + MASK),
    (
        re.compile(r"\b(ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abprs]-)[A-Za-z0-9_\-]{6,}"),
        r"\1" + MASK,
    ),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{12,}"), r"\1" + MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), "AIza" + MASK),
    (re.compile(r"\beyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]*"), "eyJ" + MASK),
    # userinfo in a URL: keep the user name of user:password, mask the rest
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,30}://)([^\s/:@'\"`]*):([^\s/@'\"`]+)@"),
        r"\1\2:" + MASK + "@",
    ),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,30}://)([^\s/:@'\"`]{6,})@"), r"\1" + MASK + "@"),
    # user:password@host without a scheme (scp, ssh, connection strings); not
    # mailto:ana@host, and the host must look like one (dotted or localhost)
    (
        re.compile(
            r"(?<![\w.+\-:/@])(?!(?:mailto|sips?|tel|xmpp|news):)([\w.+\-]+):([^\s/:@'\"`]+)@"
            r"(?=[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+|localhost\b)"
        ),
        r"\1:" + MASK + "@",
    ),
    # query parameters that carry keys
    (
        re.compile(
            r"(?i)([?&;](?:[\w.\-]*(?:key|token|secret|password|passwd|pwd|auth|sig|signature|"
            r"credential)[\w.\-]*|code)=)[^&\s'\"`#<>]+"
        ),
        r"\1" + MASK,
    ),
    (
        re.compile(r"(?i)\b(bearer|basic|token|digest|api[-_]key)([ \t]+)[A-Za-z0-9._~+/=\-:]{6,}"),
        r"\1\2" + MASK,
    ),
]
# prose: "my password is X", "the api key was: X"
_PROSE = re.compile(
    r"(?i)\b((?:api[ _-]?key|access[ _-]?key|token|password|passwd|passphrase|secret|pw)"
    r"\s+(?:is|was|are)\s*:?\s*)([\"'`]?)[^\s\"'`,;]{4,}"
)
# what is base64-encoded into a Basic header: btoa('user:password')
_ENCODED = re.compile(
    r"(?i)\b(btoa|Buffer\.from|base64encode|b64encode)(\s*\(\s*)(" + _QUOTED + ")"
)


def _mask_quoted(value: str) -> str:
    quote = value[0]
    return f"{quote}{MASK}{quote}" if quote in "\"'`" and len(value) >= 2 else MASK


def _masked_joined(value: str) -> str | None:
    """Each string of ``'Bearer ' + 'X'`` masked, but the scheme and the names."""
    masked = False

    def piece(match: re.Match[str]) -> str:
        nonlocal masked
        text = match.group()
        if text[0] not in "\"'`" or _SCHEME_ONLY.match(text[1:-1]):
            return text
        masked = True
        return _mask_quoted(text)

    out = _JOINED_PIECE.sub(piece, value)
    return out if masked else None


def _masked_value(match: re.Match[str], value: str, text: str) -> str | None:
    """The value's replacement, or ``None`` when this is no secret."""
    op = match.group("op").strip()
    if op == ":" and text[max(0, match.start() - 40) : match.start()].rstrip().endswith("?"):
        return None  # the middle of a conditional: ready ? token : fallback
    if _JOINED_VALUE.fullmatch(value):
        return _masked_joined(value)
    if value[0] in "\"'`":
        return None if _SCHEME_ONLY.match(value[1:-1]) else _mask_quoted(value)
    if op == "=>":
        return None  # an arrow function of a secret-named parameter
    if _MEMBER_PATH.match(value) or value.lower() in _CODE_WORDS or value.startswith("${"):
        return None  # code that reads a secret, not the secret
    return MASK


def _sub_pairs(pattern: re.Pattern[str], values: re.Pattern[str], text: str) -> str:
    """Masks the value (``values``) after each secret name and operator (``pattern``).
    A pair that is no secret gives its value back to the scan: in
    ``note: password = 'x'`` the value of ``note`` starts the real pair."""
    out: list[str] = []
    position = 0
    while (match := pattern.search(text, position)) is not None:
        start = match.end()
        value = values.match(text, start) if is_secret_name(match["name"].strip("\"'`")) else None
        masked = None if value is None else _masked_value(match, value.group(), text)
        if value is None or masked is None:
            out.append(text[position:start])
            position = start
            continue
        out.append(text[position:start] + masked)
        position = value.end()
    out.append(text[position:])
    return "".join(out)


def _encoded(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2) + _mask_quoted(match.group(3))


def mask_text(text: str) -> str:
    """``text`` with every secret shape above replaced by ``***``."""
    for pattern, replacement in _TEXT:
        text = pattern.sub(replacement, text)
    text = _ENCODED.sub(_encoded, text)
    text = _PROSE.sub(r"\1\2" + MASK, text)
    text = _sub_pairs(_ARGS, _ARGS_VALUE, text)
    return _sub_pairs(_PAIR, _PAIR_VALUE, text)


def mask_secrets(*, data: Any, **_: Any) -> Any:
    """Langfuse ``mask=`` callback: masks strings, and whole values under secret keys."""
    if isinstance(data, str):
        return mask_text(data)
    if isinstance(data, Mapping):
        return {
            k: MASK if isinstance(k, str) and is_secret_name(k) and v else mask_secrets(data=v)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [mask_secrets(data=item) for item in data]
    return data
