"""The name a user's credentials go by: one safe identifier per user, used as their PostgreSQL
role and schema, their Redis ACL user, and inside the hash tag of their Redis keys."""

from __future__ import annotations

import hashlib
import re

__all__ = ["role_name"]

_MAX_NAME = 40


def role_name(username: str) -> str:
    """``gth_`` and the user name as a safe identifier (only ``[a-z0-9_]``, so it can widen no
    glob and break out of no quoting); a name that had to change (case, punctuation, length)
    gets a hash suffix, so two users never share a role."""
    safe = re.sub(r"[^a-z0-9_]", "_", username.lower())[:_MAX_NAME]
    if safe != username or not safe:
        digest = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        safe = f"{safe}_{digest}"
    return f"gth_{safe}"
