"""The name a user's credentials go by: one safe identifier per Hub user name, used as their
PostgreSQL role and schema, their Redis ACL user, and inside the hash tag of their Redis keys.

:func:`role_name` keeps to ``[a-z0-9_]`` (so it can widen no Redis glob and break out of no
quoting) within PostgreSQL's 63-byte identifiers, and no two user names share one. It has two
forms, and no role is of both:

- **Escaped**: ``gth_`` and the name's UTF-8 bytes, each of ``[a-z0-9]`` as it is and every other
  byte, ``_`` included, as ``_`` and two hex digits: ``alice`` is ``gth_alice``, ``bob-jones``
  ``gth_bob_2djones``, ``bob_jones`` ``gth_bob_5fjones``, ``Alice`` ``gth__41lice``. Every ``_``
  after ``gth_`` opens a group of three characters, so the role reads back as exactly one byte
  string, and UTF-8 (with lone surrogates passed through) gives distinct strings distinct
  bytes: two names with the same escaped role are the same name.
- **Hashed**, for a name whose escaped role would pass 63 bytes: ``gth__z``, up to 24
  characters of the name (lowercased, other characters as ``_``) to read, ``_`` and 32 base32
  digits (160 bits) of the SHA-256 of the name's UTF-8 bytes. After ``gth_`` an escaped role
  has ``_`` followed by two hex digits, never ``_z``, so no hashed role is an escaped one; two
  hashed roles end alike only if SHA-256 collides.

Roles made by gth-jupyter before were named by :func:`legacy_role_name`, which kept a name of
``[a-z0-9_]`` as it was and hashed any other into eight hex digits, so the user named
``bob_jones_bc2fc3bc`` got ``bob-jones``'s role. Provisioning (``store/provision.py``,
``store/redis_users.py``) records whose each role is, never takes over a role recorded for
another name or one it cannot prove is this name's, and carries an old role over to the new
name by itself only where :func:`legacy_role_is_alone` proves no other name had it
(``gth-jupyter db migrate-roles`` carries the others over: see docs/deployment.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..contract.errors import CodedError

__all__ = [
    "Claim",
    "Found",
    "RoleTakenError",
    "claim",
    "legacy_role_is_alone",
    "legacy_role_name",
    "role_name",
    "shared_legacy_roles",
    "sole_legacy_owners",
]

PREFIX = "gth_"
#: PostgreSQL's longest identifier (NAMEDATALEN - 1), in bytes; a role is ASCII, so characters.
MAX_ROLE = 63
#: The start of a hashed role: ``_z`` is no escape group (``_`` and two hex digits).
HASHED_PREFIX = PREFIX + "_z"
_HASH_CHARS = 32  # base32 of 20 bytes of SHA-256: 160 bits
_READABLE = MAX_ROLE - len(HASHED_PREFIX) - 1 - _HASH_CHARS
_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")


def _utf8(username: str) -> bytes:
    # surrogatepass: every str encodes, and decoding the same way gives it back.
    return username.encode("utf-8", "surrogatepass")


def role_name(username: str) -> str:
    """``username``'s role (see the module's docstring): ``gth_`` and the name escaped, or a
    hash of it where that is too long."""
    escaped = "".join(chr(byte) if byte in _KEPT else f"_{byte:02x}" for byte in _utf8(username))
    if len(PREFIX) + len(escaped) <= MAX_ROLE:
        return PREFIX + escaped
    digest = hashlib.sha256(_utf8(username)).digest()[:20]
    readable = re.sub(r"[^a-z0-9]+", "_", username.lower())[:_READABLE]
    return f"{HASHED_PREFIX}{readable}_{base64.b32encode(digest).decode().lower()}"


_LEGACY_MAX = 40


def legacy_role_name(username: str) -> str:
    """The role gth-jupyter gave ``username`` before :func:`role_name` (not one per name: kept
    to find and carry over the roles it made)."""
    safe = re.sub(r"[^a-z0-9_]", "_", username.lower())[:_LEGACY_MAX]
    if safe != username or not safe:
        digest = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe = f"{safe}_{digest}"
    return f"gth_{safe}"


def legacy_role_is_alone(username: str) -> bool:
    """Whether no name but ``username`` had its :func:`legacy_role_name`. The old mapping kept a
    name of 1-40 characters of ``[a-z0-9_]`` as it was and gave every other name a role ending
    in ``_`` and eight hex digits: a kept name without that ending is no other name's role."""
    return (
        re.fullmatch(r"[a-z0-9_]{1,40}", username) is not None
        and re.search(r"_[0-9a-f]{8}\Z", username) is None
    )


def sole_legacy_owners(usernames: Iterable[str]) -> set[str]:
    """The names of ``usernames`` whose :func:`legacy_role_name` no other of them shares."""
    by_role: dict[str, set[str]] = {}
    for name in usernames:
        by_role.setdefault(legacy_role_name(name), set()).add(name)
    return {next(iter(names)) for names in by_role.values() if len(names) == 1}


def shared_legacy_roles(names: Sequence[str]) -> dict[str, str]:
    """For each of ``names`` whose old role another of them had too, why it is left alone."""
    sole = sole_legacy_owners(names)
    by_role: dict[str, list[str]] = {}
    for name in names:
        if name not in sole:
            by_role.setdefault(legacy_role_name(name), []).append(name)
    return {
        name: f"left alone: {legacy} was shared under the old naming by "
        f"{', '.join(json.dumps(n) for n in group)} (carry it over for the one it belongs to "
        "by naming that user alone)"
        for legacy, group in by_role.items()
        for name in group
    }


class RoleTakenError(CodedError):
    """Provisioning refused to hand a user a role (or Redis user) that is, or may be, another
    user's. ``code``: ``role_taken`` (recorded for another name), ``role_owner_unknown`` (made
    without an owner record, and not provably this name's), ``role_migration_needed`` (this
    name's role under the old naming, which another name may share), ``schema_taken`` (a schema
    of the role's name that another role owns)."""

    code = "role_taken"


@dataclass(frozen=True)
class Found:
    """A role (or Redis user) that exists: ``owner`` is the Hub name its owner record names,
    ``None`` where it has none (an older gth-jupyter made it, or an admin by hand), ``""`` where
    the record is unreadable (no user is called ``""``)."""

    owner: str | None


#: What provisioning does with a user's role: ``create`` it, ``keep`` the user's own,
#: ``adopt`` the user's unrecorded old role of the same name, ``carry`` the old role over to
#: the new name.
Claim = Literal["create", "keep", "adopt", "carry"]


def claim(
    username: str, at_role: Found | None, at_legacy: Found | None, *, confirmed: bool = False
) -> Claim:
    """What provisioning ``username`` may do, given what exists under its :func:`role_name`
    (``at_role``) and its :func:`legacy_role_name` (``at_legacy``, ``None`` where the two are
    one); raises :class:`RoleTakenError` where the role is or may be another user's.
    ``confirmed``: an admin said no other user shares the legacy role."""
    if not username:
        raise ValueError("a user name cannot be empty")
    role, legacy = role_name(username), legacy_role_name(username)
    sure = confirmed or legacy_role_is_alone(username)
    detail = {"role": role, "user": username}
    if at_role is not None:
        if at_role.owner == username:
            return "keep"
        if at_role.owner is not None:
            raise RoleTakenError(
                f"The role {role} belongs to another user: it is not handed to {username!r}.",
                {**detail, "owner": at_role.owner},
            )
        if role == legacy and sure:
            return "adopt"
        raise RoleTakenError(
            f"The role {role} exists without an owner record (an older gth-jupyter made it, "
            f"maybe for another user), so it is not handed to {username!r}. An admin carries "
            "old roles over with `gth-jupyter db migrate-roles` (see docs/deployment.md).",
            detail,
            code="role_owner_unknown",
        )
    if role == legacy or at_legacy is None or at_legacy.owner is not None:
        return "create"
    if sure:
        return "carry"
    raise RoleTakenError(
        f"{username!r} has a role under gth-jupyter's old naming, {legacy}, which another user "
        "may share (the old names were not one per user), so it is not carried over by itself. "
        "An admin carries it over with `gth-jupyter db migrate-roles` naming every Hub user "
        "(see docs/deployment.md).",
        {**detail, "legacy": legacy},
        code="role_migration_needed",
    )
