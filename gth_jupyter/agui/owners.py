"""Who may use a thread or a run, and the key each is stored under.

Every thread belongs to the user who created it (the host says who is asking: Jupyter's
``current_user``, the Hub user under JupyterHub, the token's identity for the standalone
server). Thread and run ids come from clients, and a notebook's thread id is derived from its
path alone (the kernel that derives it knows neither the user nor a server secret), so two
users can send the same id. On the server each id is therefore scoped by its user
(:func:`scoped_id`): the same id from two users names two threads, and two runs, and neither
user can tell that the other's exists.

The server's owner (the user it runs for, whose notebook kernels share its SQLite store) keeps
unscoped keys: the threads it had before scoping, and the ones a notebook's kernel writes
(``Session``, the widget's comm) under the bare notebook id, stay its own. Every other user's
key is ``~<user, percent-quoted>/<id>`` (an id of the server's owner that itself starts with
``~`` is scoped too, so no id of one user can name another's key). A thread another user made
before scoping (unscoped, recorded as theirs in the thread index) is still found under its
unscoped key, for that user alone.

A thread that predates the thread index (it has checkpoints but no owner) belongs to the
server's owner. An admin (``GthJupyterApp.admin_users``) may read another user's thread by
naming its owner (``?owner=``), never run on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from ..agent.runtime import Runtime
from ..store.base import ThreadIndex, ThreadRecord
from .errors import thread_not_found

__all__ = ["SCOPE_MARK", "Requester", "admit_thread", "client_record", "scoped_id"]

#: The first character of a scoped key.
SCOPE_MARK = "~"


@dataclass(frozen=True)
class Requester:
    """The user a host authenticated for one request."""

    name: str
    #: May read (never run on) every user's threads (``GthJupyterApp.admin_users``).
    admin: bool = False
    #: The user the server runs for: their ids are stored unscoped (``""``: ``name``).
    server_owner: str = ""

    @property
    def owns_server(self) -> bool:
        return self.name == (self.server_owner or self.name)

    def as_user(self, name: str) -> Requester:
        """The same server, asked by ``name`` (an admin reading another user's thread)."""
        return Requester(name, server_owner=self.server_owner or self.name)


def scoped_id(who: Requester, value: str) -> str:
    """The key a thread or run id of ``who`` is stored under (see the module docstring)."""
    if who.owns_server and not value.startswith(SCOPE_MARK):
        return value
    return f"{SCOPE_MARK}{quote(who.name, safe='')}/{value}"


def client_record(record: ThreadRecord) -> ThreadRecord:
    """``record`` with the thread id its owner's client sends (its key unscoped)."""
    prefix = f"{SCOPE_MARK}{quote(record.owner, safe='')}/"
    if not record.thread_id.startswith(prefix):
        return record
    return ThreadRecord(
        record.thread_id[len(prefix) :], record.owner, record.created_at, record.updated_at
    )


async def _thread_key(threads: ThreadIndex, thread_id: str, who: Requester) -> str:
    key = scoped_id(who, thread_id)
    if key != thread_id and await threads.owner(key) is None:
        # A thread this user made before ids were scoped is still theirs.
        if await threads.owner(thread_id) == who.name:
            return thread_id
    return key


async def admit_thread(
    runtime: Runtime, thread_id: str, who: Requester, *, write: bool, owner: str | None = None
) -> str:
    """The key ``who``'s thread ``thread_id`` is stored under, once ``who`` may read it (or,
    with ``write``, run on it); a run on a thread nobody owns yet makes ``who`` its owner.

    ``owner`` names another user whose thread an admin reads; for anyone else, or to run, that
    is ``404 thread_not_found``, as for a thread that does not exist."""
    threads = runtime.threads
    user = who
    if owner is not None and owner != who.name:
        if not who.admin or write:
            raise thread_not_found(thread_id)
        user = who.as_user(owner)
    key = await _thread_key(threads, thread_id, user)
    found = await threads.owner(key)
    if found is None:
        if await runtime.has_thread(key):
            # Older than the index: an unscoped thread is the server owner's.
            first = user.server_owner or user.name if key == thread_id else user.name
            found = await threads.claim(key, first)
        elif write:
            await threads.claim(key, user.name)
            return key  # recorded (and marked as used) just now
        else:
            return key  # nothing there yet: an empty thread, as for any new id
    if found == user.name:
        if write:
            await threads.claim(key, found)  # marks it as just used, for the listing
        return key
    # An unscoped thread of the server's owner that another user claimed before ids were
    # scoped: still theirs alone.
    raise thread_not_found(thread_id)
