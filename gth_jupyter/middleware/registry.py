"""The middleware an agent runs with, resolved from its command's configuration.

:func:`build_middleware` returns the approvals gate first (so it wraps any tool-call middleware
that follows, and a retry never re-asks the person), then each entry of ``middleware`` in the
order written (after the injection of ``run_python``'s and ``insert_cell``'s images, on
wherever ``run_python`` is): the
predefined names (``named.py``, ``frontend-image-injection``, ``binary-content-injection``) and
middleware objects from a ``.gsloth.config.py``. ``binary-content-injection`` is added at the end
when ``binaryFormats`` is a non-empty list and the entries do not name it, as Gaunt Sloth does.
An unknown name, or one that fails to build, is reported as a warning and skipped, as Gaunt Sloth
does.

The rater (``approvals.rater``) is the session model unless it names an identity profile: the
config in ``.gsloth/.gsloth-settings/<name>/`` (looked up from the working directory upwards,
then in ``~/.gsloth``) whose ``llm`` rates instead. A name that does not resolve is a
:class:`~gth_jupyter.config.ConfigError`. Only ``assisted`` and ``auto`` consult it.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel

from gth_jupyter.config.effective import EffectiveConfig
from gth_jupyter.config.errors import ConfigError, report
from gth_jupyter.config.live import LiveObjects, is_marker
from gth_jupyter.config.loader import CONFIG_FILE_NAMES, SETTINGS_DIR, load_config
from gth_jupyter.middleware.approvals import ApprovalsMiddleware
from gth_jupyter.middleware.binary_injection import NAME as BINARY_INJECTION
from gth_jupyter.middleware.binary_injection import BinaryContentInjectionMiddleware
from gth_jupyter.middleware.image_injection import (
    FrontendImageInjectionMiddleware,
    ToolImageInjectionMiddleware,
)
from gth_jupyter.middleware.named import anthropic_prompt_caching, live_model, summarization
from gth_jupyter.middleware.rater import Rater
from gth_jupyter.tools.notebook_tools import INSERT_CELL

__all__ = ["build_middleware", "rater_model"]


def _profile_config(name: str, cwd: Path) -> Path | None:
    folders = [d / SETTINGS_DIR / name for d in (cwd.resolve(), *cwd.resolve().parents)]
    folders.append(Path.home() / ".gsloth" / ".gsloth-settings" / name)
    for folder in folders:
        for file_name in CONFIG_FILE_NAMES:
            if (folder / file_name).is_file():
                return folder / file_name
    return None


def rater_model(
    rater: str | None, *, session: BaseChatModel, cwd: Path, live: LiveObjects
) -> BaseChatModel:
    """The model that rates shell commands (see the module docstring)."""
    wrong = ConfigError("approvals.rater is not a chat model", key_path="approvals.rater")
    if (found := live_model(rater, session, live, wrong)) is not None:
        return found
    assert rater is not None  # live_model answers for no rater
    file = _profile_config(rater, cwd)
    if file is None:
        raise ConfigError(
            f"approvals.rater names the identity profile '{rater}', but no "
            f".gsloth/.gsloth-settings/{rater}/ config was found",
            key_path="approvals.rater",
        )
    profile = load_config(file)
    if isinstance(profile.live.llm, BaseChatModel):
        return profile.live.llm
    from gth_jupyter.models.resolve import resolve_model

    llm = profile.llm.model_dump(by_alias=True, exclude_none=True) if profile.llm else None
    return resolve_model(llm)


def build_middleware(
    effective: EffectiveConfig,
    *,
    model: BaseChatModel,
    cwd: Path,
    answers_approvals: bool,
    tool_names: Collection[str] = (),
) -> list[AgentMiddleware]:
    """The approvals gate, the image injection of ``run_python`` (and ``insert_cell``) when
    ``run_python`` is among ``tool_names``, then the configured middleware (see the module
    docstring)."""
    approvals = effective.approvals
    rater = None
    if approvals.mode in ("assisted", "auto", None):
        judge = rater_model(approvals.rater, session=model, cwd=cwd, live=effective.live)
        rater = Rater(judge, timeout_ms=approvals.rater_timeout_ms)
    out: list[AgentMiddleware] = [
        ApprovalsMiddleware(
            approvals,
            rater=rater,
            answers=answers_approvals,
            command=effective.command,
            cwd=str(cwd),
        )
    ]
    if "run_python" in tool_names:
        # With the kernel tools, the notebook page's insert_cell returns a cell it ran in
        # run_python's shape: its plots reach the model once, as images, the same way.
        out.append(
            ToolImageInjectionMiddleware(provider=_provider(effective, model), also=[INSERT_CELL])
        )
    for entry in effective.middleware:
        name = str(entry.get("name"))
        built: AgentMiddleware | None = None
        try:
            if is_marker(entry):
                found = effective.live.get(entry)
                if isinstance(found, AgentMiddleware):
                    built = found
                else:
                    report(f"Middleware {name} from .gsloth.config.py is not an AgentMiddleware")
            elif name == "frontend-image-injection":
                built = FrontendImageInjectionMiddleware(
                    provider=_provider(effective, model),
                    tool_name=str(entry.get("toolName") or "capture_image"),
                )
            elif name == BINARY_INJECTION:
                built = BinaryContentInjectionMiddleware(provider=_provider(effective, model))
            elif name == "summarization":
                built = summarization(entry, model, effective.live)
            elif name == "anthropic-prompt-caching":
                built = anthropic_prompt_caching(entry, model)
            else:
                report(f"Unknown middleware: {name}")
        except Exception as exc:  # Gaunt Sloth: a middleware that fails to build only warns
            report(f"Middleware {name} could not be built and is skipped: {exc}")
        if built is not None:
            out.append(built)
    named = any(str(entry.get("name")) == BINARY_INJECTION for entry in effective.middleware)
    if effective.binary_formats and not named:
        out.append(BinaryContentInjectionMiddleware(provider=_provider(effective, model)))
    return out


def _provider(effective: EffectiveConfig, model: BaseChatModel) -> str:
    """The provider whose image block shape the image injections must write."""
    from gth_jupyter.models.resolve import describe_model

    llm = effective.llm.model_dump(by_alias=True, exclude_none=True) if effective.llm else None
    return describe_model(llm, model).provider
