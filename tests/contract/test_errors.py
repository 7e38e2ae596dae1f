"""One coded-error base: every error family a caller matches on reads the same three fields."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.agui.errors import ProtocolError, from_agent_error
from gth_jupyter.config import ConfigError
from gth_jupyter.contract.errors import CodedError, RunBusyError
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
