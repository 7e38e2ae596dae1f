"""Security issue, item 3 as properties: an "Always allow" grant covers the exact string granted.

Shell grants used to be keyed on ``" ".join(command.split())``, which turns a newline (a command
separator for ``sh``) into a space: a grant for ``echo cleaning: rm -f victim.txt`` also ran
``echo cleaning:\\nrm -f victim.txt``. Now a shell grant is the exact command and a ``run_python``
grant the exact code, so no generated string that differs from the granted one is treated as
granted: whitespace variants, line breaks, carriage returns, control characters, Unicode spaces
and invisible characters inserted anywhere, or any other text. A shell command holding such a
character is never granted at all. The gate's own grant and match paths are exercised.
"""

from __future__ import annotations

import unicodedata

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gth_jupyter.config.schema import ApprovalsConfig
from gth_jupyter.middleware.approval_rules import Subject
from gth_jupyter.middleware.approvals import ApprovalsMiddleware
from gth_jupyter.middleware.grants import grant_refusal

ATTACK = "echo cleaning: rm -f victim.txt"
#: Whitespace and look-alikes: what a normaliser might fold, or a shell might split on.
SPACES = [
    *(" ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\x00", "\x1b", "\x85"),
    *("\u00a0", "\u2002", "\u2003", "\u2009", "\u200b", "\u202f", "\u3000", "\ufeff"),
    *("\u2028", "\u2029", "\u202e", "\u2066"),
]
#: Characters that make a shell command impossible to grant.
UNGRANTABLE = ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\u200b", "\u202e", "\u2028"]
PROPERTY = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def grantable_char(ch: str) -> bool:
    return unicodedata.category(ch) not in {"Cc", "Cf", "Zl", "Zp", "Cs"}


shell_commands = st.one_of(
    st.just(ATTACK),
    st.text(st.characters(codec="utf-8").filter(grantable_char), min_size=1, max_size=40).filter(
        str.strip
    ),
)
code_texts = st.one_of(
    st.just("import os\nos.remove('victim.txt')\n"),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=60),
)


@st.composite
def variants(draw: st.DrawFn, granted: str) -> str:
    """A string near ``granted``: re-spaced, with a character inserted, replaced or dropped, or
    any text at all."""
    how = draw(st.sampled_from(["respace", "insert", "replace", "drop", "any"]))
    if how == "respace":
        words = granted.split(" ")
        glue = [draw(st.sampled_from(SPACES)) for _ in words[1:]]
        out = words[0] + "".join(g + w for g, w in zip(glue, words[1:], strict=True))
        return draw(st.sampled_from(["", *SPACES])) + out + draw(st.sampled_from(["", *SPACES]))
    if how == "any":
        return draw(st.text(st.characters(codec="utf-8"), max_size=60))
    at = draw(st.integers(0, len(granted)))
    ch = draw(st.one_of(st.sampled_from(SPACES), st.characters(codec="utf-8")))
    if how == "insert":
        return granted[:at] + ch + granted[at:]
    if how == "replace":
        return granted[:at] + ch + granted[at + 1 :]
    return granted[:at] + granted[at + 1 :]


def gate() -> ApprovalsMiddleware:
    return ApprovalsMiddleware(
        ApprovalsConfig(mode="manual"), rater=None, answers=True, command="notebook", cwd="/"
    )


def shell(command: str) -> Subject:
    return Subject("shell", "run_shell_command", command=command)


def code(text: str) -> Subject:
    return Subject("tool", "run_python", command=text)


@PROPERTY
@given(st.data(), shell_commands)
def test_no_string_but_the_granted_shell_command_runs_unasked(
    data: st.DataObject, granted: str
) -> None:
    middleware = gate()
    middleware._grant("session", shell(granted), "shell", "run_shell_command")
    assert len(middleware.grants) == 1  # a one-line command without control characters
    assert middleware._granted(shell(granted), "shell")
    other = data.draw(variants(granted))
    assume(other != granted)
    assert not middleware._granted(shell(other), "shell")


@PROPERTY
@given(st.data(), code_texts)
def test_no_code_but_the_granted_code_runs_unasked(data: st.DataObject, granted: str) -> None:
    middleware = gate()
    middleware._grant("thread", code(granted), "code", "run_python")
    assert len(middleware.grants) == 1  # code is granted as its text, line breaks and all
    assert middleware._granted(code(granted), "code")
    other = data.draw(variants(granted))
    assume(other != granted)
    assert not middleware._granted(code(other), "code")


@PROPERTY
@given(shell_commands, st.integers(0, 40), st.sampled_from(UNGRANTABLE))
def test_a_shell_command_with_a_control_character_is_never_granted(
    base: str, at: int, ch: str
) -> None:
    command = base[:at] + ch + base[at:]
    assert grant_refusal(shell(command), "shell") is not None
    middleware = gate()
    middleware._grant("thread", shell(command), "shell", "run_shell_command")
    middleware._grant("session", shell(command), "shell", "run_shell_command")
    assert len(middleware.grants) == 0
    assert not middleware._granted(shell(command), "shell")


def test_the_reported_attack_is_not_covered() -> None:
    middleware = gate()
    middleware._grant("thread", shell(ATTACK), "shell", "run_shell_command")
    assert middleware._granted(shell(ATTACK), "shell")
    assert not middleware._granted(shell("echo cleaning:\nrm -f victim.txt"), "shell")
    assert not middleware._granted(shell("echo cleaning:\rrm -f victim.txt"), "shell")
    assert not middleware._granted(shell("echo  cleaning: rm -f victim.txt"), "shell")
