"""Fixtures of the store tests: users provisioned on the test PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from gth_jupyter.store.provision import role_name


@pytest.fixture
def users(pg_url: str) -> Iterator[tuple[str, str]]:
    """Two fresh user names (roles are cluster-wide: dropped afterwards)."""
    tag = uuid.uuid4().hex[:6]
    names = (f"alice{tag}", f"bob{tag}")
    yield names
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for name in names:
            role = sql.Identifier(role_name(name))
            if conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (role_name(name),)
            ).fetchone():
                conn.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(role))
                conn.execute(sql.SQL("DROP ROLE {}").format(role))
