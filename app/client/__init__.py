"""``planwright chat``: the terminal client.

Chat with the planner over the session WebSocket: status lines per tool as
they run and settle, the streamed answer, a compact tree of the workflow after
each change, y/n confirmation prompts, review-mode proposals to accept all, some
or none of (``--review``, ``/review``, ``/diff``), test runs in OpenFn's runtime
(``/run @input.json [@responses.json]``) and errors mode (``/fix`` for a failed run,
``/errors @FILE``), and ``/yaml``, ``/versions``, ``/revert N``, ``/tree``,
``/help``, ``/quit``.

A program of its own: it reaches the server over the wire only (REST and the
session WebSocket) and imports nothing of the server (``app.*`` outside this
package, ``agents``, the store); it reads documents with the tools' pure
helpers, as every client may.

- ``command``: the ``chat`` subcommand, :func:`run_chat` and choosing a workflow;
- ``session``: :class:`ChatClient`, one session's loop, made of ``state`` (what the
  client holds), ``slash`` (the commands), ``turns`` (a turn, its confirmations and
  proposals), ``run_commands`` (``/run``, ``/fix``, ``/errors``) and ``frames``
  (receiving, reconnecting, each frame's effect);
- ``plan``: plan mode (a proposed plan, its review, build progress);
- ``review``: review mode (a proposal's changes, impact and diff, the answer to it);
- ``runs``: test runs (the files ``/run`` sends, progress, the result, ``/fix``'s errors);
- ``rest``: the REST calls and :class:`ChatError`;
- ``terminal``: reading lines and writing (colours, spinners) on a terminal or not;
- ``tree``: the workflow drawn as a tree, and which keys a change touched.

``run_chat(args, stdin, stdout)`` takes its streams as arguments, so tests drive
it on their own event loop with a scripted stdin and a captured stdout.
"""

from app.client.command import main, register, run_chat
from app.client.rest import ChatError
from app.client.tree import changed_keys, render_tree

__all__ = ["ChatError", "changed_keys", "main", "register", "render_tree", "run_chat"]
