"""Role names: one per Hub user name, by construction, within ``[a-z0-9_]`` and 63 bytes.

An escaped role reads back as exactly one name (:func:`read_back`, written here apart from the
code), so two names with the same escaped role are one name; a hashed role starts ``gth__z``,
which no escaped role does. Checked on generated names (any Unicode, lone surrogates, names
that are other names' roles, old roles, case variants, long names) and on a large set built to
collide, and on the old mapping's twins, which did collide.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gth_jupyter.store.roles import (
    Found,
    RoleTakenError,
    claim,
    legacy_role_is_alone,
    legacy_role_name,
    role_name,
    sole_legacy_owners,
)

SAFE = re.compile(r"[a-z0-9_]{1,63}")


def read_back(role: str) -> str | None:
    """The one name an escaped role is of; ``None`` for a hashed role."""
    assert role.startswith("gth_")
    body = role.removeprefix("gth_")
    if body.startswith("_z"):
        return None
    out, i = bytearray(), 0
    while i < len(body):
        if body[i] == "_":
            group = body[i + 1 : i + 3]
            assert re.fullmatch(r"[0-9a-f]{2}", group), role
            out.append(int(group, 16))
            i += 3
        else:
            assert body[i] in string.ascii_lowercase + string.digits, role
            out.append(ord(body[i]))
            i += 1
    return out.decode("utf-8", "surrogatepass")


ANY_TEXT = st.text(st.characters(exclude_categories=[]), max_size=80)  # surrogates too
NAMES = st.one_of(
    ANY_TEXT,
    st.from_regex(r"[a-z0-9_]{1,70}", fullmatch=True),
    st.from_regex(r"[a-zA-Z0-9_.@*\-]{1,40}(_[0-9a-f]{8})?", fullmatch=True),
    st.from_regex(r"(_[0-9a-f]{2}|[a-z0-9]){1,30}", fullmatch=True),  # escaped-looking
)


def relatives(name: str) -> list[str]:
    """Names an attacker would try against ``name``: its roles (new and old) as names, case
    variants, and neighbours."""
    roles = [role_name(name), legacy_role_name(name)]
    return [
        *roles,
        *(r.removeprefix("gth_") for r in roles),
        name.lower(),
        name.upper(),
        name.swapcase(),
        name + "_",
        "_" + name,
        name.replace("_", "-"),
        name.replace("-", "_"),
        name[:-1],
        name * 2,
    ]


@given(NAMES)
def test_a_role_is_a_safe_identifier_that_reads_back_as_its_name(name: str) -> None:
    role = role_name(name)
    assert SAFE.fullmatch(role) and len(role.encode()) <= 63
    assert role == role_name(name)
    found = read_back(role)
    if found is None:  # hashed: only where the escaped role would be too long
        escaped = sum(
            1 if chr(b) in string.ascii_lowercase + string.digits else 3
            for b in name.encode("utf-8", "surrogatepass")
        )
        assert len("gth_") + escaped > 63 and role.startswith("gth__z")
    else:
        assert found == name


@given(NAMES, st.data())
def test_no_two_names_share_a_role(name: str, data: st.DataObject) -> None:
    other = data.draw(st.one_of(NAMES, st.sampled_from(relatives(name))))
    assert name == other or role_name(name) != role_name(other)


def test_a_large_set_of_names_built_to_collide_gets_one_role_each() -> None:
    seeds = [
        "bob-jones",
        "bob_jones",
        "bob.jones",
        "Bob-Jones",
        "BOB_JONES",
        "bob jones",
        "Alice",
        "alice",
        "ALICE",
        "alice_",
        "_alice",
        "carol@example.com",
        "a*",
        "*",
        "a?b",
        "[x]",
        "{a}",
        "gth_a}:*",
        "",
        "_",
        "__",
        "_5f",
        "_2d",
        "a_2db",
        "a-b",
        "a_b",
        "Ünïcödé",
        "ünïcödé",
        "K",
        "\u212a",
        "İ",
        "i\u0307",
        "ß",
        "ss",
        "\ud800",
        "\udfff",
        "😀",
        "\ud83d\ude00",
        "\x00",
        "x" * 59,
        "x" * 60,
        "y" * 200,
        "é" * 20,
        "é" * 21,
        "gth__zabc",
        "_zabc",
        "a" * 40,
        "a" * 41,
    ]
    names = set(seeds)
    for seed in seeds:  # two rounds of each name's attacker's relatives
        for first in relatives(seed):
            names.add(first)
            names.update(relatives(first))
    roles = {role_name(n) for n in names}
    assert len(names) > 2000 and len(roles) == len(names)
    assert all(SAFE.fullmatch(r) for r in roles)


@pytest.mark.parametrize(
    ("victim", "twin"),
    [
        ("bob-jones", "bob_jones_bc2fc3bc"),
        ("Alice", "alice_3bc51062"),
        ("carol@example.com", legacy_role_name("carol@example.com")[4:]),
        ("a*", legacy_role_name("a*")[4:]),
    ],
)
def test_the_old_mappings_twins_collided_and_no_longer_do(victim: str, twin: str) -> None:
    assert legacy_role_name(victim) == legacy_role_name(twin) == f"gth_{twin}"
    assert role_name(victim) != role_name(twin)
    assert (read_back(role_name(victim)), read_back(role_name(twin))) == (victim, twin)


def test_roles_read_as_the_names_suggest() -> None:
    assert role_name("alice") == "gth_alice"  # a plain name keeps its old role
    assert role_name("bob-jones") == "gth_bob_2djones"
    assert role_name("bob_jones") == "gth_bob_5fjones"
    assert role_name("Alice") == "gth__41lice"
    assert role_name("carol@example.com") == "gth_carol_40example_2ecom"
    long = role_name("Dr. Very Long Name " * 5)
    assert re.fullmatch(r"gth__zdr_very_long_name_dr_ver_[a-z2-7]{32}", long), long


@given(ANY_TEXT)
def test_a_name_the_old_mapping_gave_alone_had_no_twin(name: str) -> None:
    """``legacy_role_is_alone`` holds only where no other name had the old role: never for a
    name whose old role was hashed (its twin is that role spelt as a name) or for a kept one
    ending like a hash."""
    twin = legacy_role_name(name).removeprefix("gth_")
    if legacy_role_is_alone(name):
        assert twin == name and legacy_role_name(name) == f"gth_{name}"
    elif twin != name and len(twin) <= 40:
        assert legacy_role_name(twin) == legacy_role_name(name) and not legacy_role_is_alone(twin)


def test_only_names_of_a_z_0_9_and_underscore_without_a_hash_ending_are_alone() -> None:
    assert legacy_role_is_alone("alice") and legacy_role_is_alone("alice_smith")
    assert not legacy_role_is_alone("bob_jones_bc2fc3bc")
    assert not legacy_role_is_alone("bob-jones") and not legacy_role_is_alone("Alice")
    assert not legacy_role_is_alone("a" * 41) and not legacy_role_is_alone("")
    assert sole_legacy_owners(["bob-jones", "bob_jones_bc2fc3bc", "alice"]) == {"alice"}


def test_what_provisioning_does_with_what_it_finds() -> None:
    mine, theirs, unrecorded = Found("bob-jones"), Found("alice"), Found(None)
    assert claim("bob-jones", mine, None) == "keep"
    assert claim("bob-jones", None, None) == "create"
    assert claim("bob-jones", None, theirs) == "create"  # an old name someone now owns
    assert claim("bob-jones", None, unrecorded, confirmed=True) == "carry"
    assert claim("alice_smith", None, unrecorded) == "carry"
    assert claim("alice", unrecorded, None) == "adopt"
    refusals = [
        (("bob-jones", theirs, None), {}, "role_taken"),
        (("bob-jones", Found(""), None), {}, "role_taken"),  # an unreadable record
        (("bob-jones", unrecorded, None), {"confirmed": True}, "role_owner_unknown"),
        (("bob_jones", unrecorded, None), {}, "role_owner_unknown"),
        (("bob-jones", None, unrecorded), {}, "role_migration_needed"),
        (("bob_jones_bc2fc3bc", None, unrecorded), {}, "role_migration_needed"),
    ]
    for args, options, code in refusals:
        with pytest.raises(RoleTakenError) as refused:
            claim(*args, **options)
        assert refused.value.code == code, args
    with pytest.raises(ValueError):
        claim("", None, None)
