"""One coded-error base: every error family a caller matches on reads the same three fields."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.agui.errors import (
    ProtocolError,
    from_agent_error,
    grant_not_found,
    host_not_allowed,
    invalid_message,
    oauth_state_mismatch,
    oauth_state_unknown,
    route_not_found,
    unauthorized,
)
from gth_jupyter.config import ConfigError
from gth_jupyter.contract.errors import (
    AgentError,
    AgentNotFoundError,
    AgentUnavailableError,
    CodedError,
    RunBusyError,
)
from gth_jupyter.kernel import KernelClientError
from gth_jupyter.models.fake import FakeModelError
from gth_jupyter.models.resolve import ModelConfigError, resolve_model


@pytest.mark.parametrize(
    ("error", "code", "message", "detail"),
    [
        (RunBusyError("t-1"), "run_busy", "already in progress", {"threadId": "t-1"}),
        (
            ProtocolError(400, "bad_request", "No.", {"field": "x"}),
            "bad_request",
            "No.",
            {"field": "x"},
        ),
        (
            ConfigError("not a list", code="config_invalid"),
            "config_invalid",
            "not a list",
            "not a list",
        ),
        (
            KernelClientError("no reply in 1 s", code="kernel_timeout"),
            "kernel_timeout",
            "no reply",
            None,
        ),
        (ModelConfigError("llm.type is missing."), "model_config_error", "llm.type", None),
        (FakeModelError("scripted failure"), "model_error", "scripted failure", None),
    ],
)
def test_every_family_is_a_coded_error_with_code_message_and_detail(
    error: CodedError, code: str, message: str, detail: Any
) -> None:
    assert isinstance(error, CodedError)
    assert error.code == code
    assert message in error.message
    assert str(error) == error.message
    assert error.detail == detail


def test_a_kernel_error_names_its_code_after_its_sentence() -> None:
    error = KernelClientError("this process is not a Jupyter kernel", code="no_kernel")
    assert (error.code, str(error)) == ("no_kernel", "this process is not a Jupyter kernel")
    assert isinstance(error, RuntimeError)  # callers that caught RuntimeError still do


def test_a_model_configuration_error_is_still_a_value_error() -> None:
    with pytest.raises(ValueError) as caught:
        resolve_model({})
    assert isinstance(caught.value, CodedError)
    assert caught.value.code == "model_config_error"


def test_an_agent_refusal_keeps_its_code_sentence_and_detail_over_http() -> None:
    refusal = from_agent_error(RunBusyError("t-9"))
    assert (refusal.code, refusal.detail) == ("run_busy", {"threadId": "t-9"})
    assert refusal.to_json()["message"] == RunBusyError("t-9").message


def _agent_refusals() -> list[type[AgentError]]:
    found, pending = [], list(AgentError.__subclasses__())
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_every_agent_refusal_says_its_own_http_status_and_the_hosts_answer_with_it() -> None:
    refusals = _agent_refusals()
    assert {c.code for c in refusals} >= {"agent_not_found", "agent_unavailable", "run_busy"}
    for cls in refusals:
        assert "status" in vars(cls), cls.__name__
    assert from_agent_error(AgentNotFoundError("x", ["default"])).status == 404
    assert from_agent_error(AgentUnavailableError("no model")).status == 503
    assert from_agent_error(RunBusyError("t")).headers == {"Retry-After": "2"}


def test_a_new_agent_refusal_cannot_leave_its_status_out() -> None:
    """The status table gave any code it did not know a 409: a refusal that means 'gone' or
    'not yours' was answered as a conflict. Now a refusal without its status is no class."""
    with pytest.raises(TypeError, match="HTTP status"):

        class QuotaError(AgentError):  # no status
            code = "quota_exceeded"

    class GoneError(AgentError):
        code = "thread_gone"
        status = 410

    refusal = from_agent_error(GoneError("The thread is gone."))
    assert (refusal.status, refusal.code) == (410, "thread_gone")


def test_the_hosts_own_refusals_are_coded_and_have_one_home() -> None:
    for refusal in (
        grant_not_found("g-1"),
        oauth_state_mismatch(),
        oauth_state_unknown(),
        host_not_allowed(),
        unauthorized(),
        route_not_found(),
        invalid_message("turnIds must be a list"),
    ):
        body = refusal.to_json()
        assert body["code"] == refusal.code and body["message"].endswith(".")
        assert 400 <= refusal.status < 500
    assert unauthorized().headers == {"WWW-Authenticate": 'Token realm="gth-jupyter"'}
