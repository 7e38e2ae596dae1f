"""Chat models: provider resolution from ``llm`` config, the offline demo, the scripted fake.

``resolve_model(config.llm)`` gives the agent its model; ``describe_model`` what a UI shows about
it. With no configuration the agent runs on ``DemoChatModel`` (``demo/``), which needs no key
or network; tests and teaching notebooks script ``FakeChatModel``.
"""

from gth_jupyter.models.demo import DEMO_MODEL_NAME, DemoChatModel
from gth_jupyter.models.fake import (
    FakeChatModel,
    FakeModelError,
    FakeResponsesExhaustedError,
)
from gth_jupyter.models.resolve import (
    MissingProviderError,
    ModelConfigError,
    ModelInfo,
    describe_model,
    resolve_model,
)

__all__ = [
    "DEMO_MODEL_NAME",
    "DemoChatModel",
    "FakeChatModel",
    "FakeModelError",
    "FakeResponsesExhaustedError",
    "MissingProviderError",
    "ModelConfigError",
    "ModelInfo",
    "describe_model",
    "resolve_model",
]
