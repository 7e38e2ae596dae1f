"""Who may use a thread: its owner, and an admin who may read it.

Every thread belongs to the user who created it (the host says who is asking: Jupyter's
``current_user``, the Hub user under JupyterHub, the token's identity for the standalone
server). Anyone else is answered ``404 thread_not_found``, as for a thread that does not exist,
so a visitor on a shared server learns nothing of the owner's threads. A thread that predates
the thread index (it has checkpoints but no owner) belongs to the server's owner.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..agent.runtime import Runtime
from .errors import thread_not_found

__all__ = ["Requester", "admit_thread"]


@dataclass(frozen=True)
class Requester:
    """The user a host authenticated for one request."""

    name: str
    #: May read (never run on) every user's threads (``GthJupyterApp.admin_users``).
    admin: bool = False
    #: Who owns threads from before the index: the user the server runs for.
    server_owner: str = ""


async def admit_thread(runtime: Runtime, thread_id: str, who: Requester, *, write: bool) -> None:
    """Raises ``404 thread_not_found`` unless ``who`` may read (or, with ``write``, run on) the
    thread; a run on a thread nobody owns yet makes ``who`` its owner."""
    threads = runtime.threads
    owner = await threads.owner(thread_id)
    if owner is None:
        if await runtime.has_thread(thread_id):
            owner = await threads.claim(thread_id, who.server_owner or who.name)
        elif write:
            owner = await threads.claim(thread_id, who.name)
            write = False  # recorded (and marked as used) just now
        else:
            return  # nothing there yet: an empty thread, as for any new id
    if owner == who.name:
        if write:
            await threads.claim(thread_id, owner)  # marks it as just used, for the listing
        return
    if who.admin and not write:
        return
    raise thread_not_found(thread_id)
