"""``gth_read_binary {path, formatHint?}``: a binary file as base64, as Gaunt Sloth reads one.

Only the extensions ``binaryFormats`` lists are read; each entry has a ``type`` (``image``,
``file``, ``audio``, ``video``, ``binary``), its ``extensions`` (no dot), an optional ``maxSize``
in bytes (10 MB when omitted) and optional ``mimeTypes`` overrides (``{"heic": "image/heic"}``).
A ``binary`` entry is only matched when no other type lists the extension. The result is the
string Gaunt Sloth's ``binary-content-injection`` middleware parses::

    gth_read_binary;type:<type>;path:<URL-encoded absolute path>;data:<mime>;base64,<data>

The path goes through the :class:`Workspace` (inside the working directory after following
symlinks, not hidden by ``.aiignore``) and is opened without following a symlink swapped in after
that check; the size is checked on the open file before a byte is read, and the read stops one
byte past the limit, so a file that grows meanwhile is refused too. Failures are error
results with Gaunt Sloth's texts.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.config.schema import BinaryFormatConfig
from gth_jupyter.tools._base import make_tool
from gth_jupyter.tools.fs.workspace import PathDenied, Workspace

__all__ = [
    "DEFAULT_MAX_SIZE",
    "DEFAULT_MIME_TYPES",
    "PREFIX",
    "READ_BINARY",
    "BinaryContent",
    "format_for",
    "make_read_binary_tool",
    "mime_type",
    "parse_binary_content",
    "placeholder",
    "read_binary",
    "restore",
]

READ_BINARY = "gth_read_binary"
PREFIX = f"{READ_BINARY};"
DEFAULT_MAX_SIZE = 10 * 1024 * 1024
DEFAULT_MIME_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "ogg": "audio/ogg",
    "mp4": "video/mp4",
    "webm": "video/webm",
}
NOT_CONFIGURED = (
    "Binary formats are not configured. Add binaryFormats to your config to enable this feature."
)
DENIED = "Path is not within allowed directories or is blocked by .aiignore"

FormatHint = Literal["image", "file", "audio", "video"]


class ReadBinaryArgs(BaseModel):
    path: str = Field(description="Path to the binary file to read")
    formatHint: FormatHint | None = Field(
        None,
        description="Optional hint for the format type. If not provided, determined from file "
        "extension via config.",
    )


def _extensions(config: BinaryFormatConfig) -> set[str]:
    return {e.lower().lstrip(".") for e in config.extensions}


def mime_type(ext: str, config: BinaryFormatConfig) -> str:
    """The entry's ``mimeTypes`` override, else the default, else ``application/octet-stream``."""
    overrides = (config.model_extra or {}).get("mimeTypes")
    if isinstance(overrides, dict) and isinstance(overrides.get(ext), str):
        return str(overrides[ext])
    return DEFAULT_MIME_TYPES.get(ext, "application/octet-stream")


def format_for(
    ext: str, configs: Sequence[BinaryFormatConfig], hint: str | None = None
) -> BinaryFormatConfig | None:
    """The entry that reads ``ext``: the hinted type's, else the first non-``binary`` one that
    lists it, else the ``binary`` one (Gaunt Sloth's ``getFormatForExtension``)."""
    if not ext:
        return None
    if hint:
        return next((c for c in configs if c.type == hint and ext in _extensions(c)), None)
    fallback = None
    for config in configs:
        if config.type == "binary":
            fallback = config
        elif ext in _extensions(config):
            return config
    return fallback if fallback is not None and ext in _extensions(fallback) else None


def _read_limited(ws: Workspace, path: Path, max_size: int) -> bytes:
    with ws.open(path) as f:  # no symlink swapped in since the check is followed
        st = os.fstat(f.fileno())  # a regular file: ws.open opens nothing else
        if st.st_size > max_size:
            raise ValueError(_too_big(st.st_size, max_size, path))
        data = f.read(max_size + 1)
    if len(data) > max_size:  # it grew since the stat
        raise ValueError(_too_big(len(data), max_size, path))
    return data


def _too_big(size: int, max_size: int, path: Path) -> str:
    return f"File size ({size} bytes) exceeds maximum allowed ({max_size} bytes) for {path.name}"


def read_binary(
    ws: Workspace, configs: Sequence[BinaryFormatConfig] | None, path: str, hint: str | None = None
) -> str:
    """``gth_read_binary``'s result; raises :class:`ToolException` with Gaunt Sloth's texts."""
    if not configs:
        raise ToolException(NOT_CONFIGURED)
    try:
        real = ws.resolve(path)
    except PathDenied:
        raise ToolException(DENIED) from None
    ext = real.suffix.lower()[1:]
    config = format_for(ext, configs, hint)
    if config is None:
        raise ToolException(
            f"Extension '.{ext}' is not configured for any binary format type. "
            "Configure it in binaryFormats."
        )
    max_size = config.max_size or DEFAULT_MAX_SIZE
    mime = mime_type(ext, config)
    try:
        data = _read_limited(ws, real, max_size)
    except PathDenied:
        raise ToolException(DENIED) from None
    except (OSError, ValueError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ToolException(f"Error reading binary file: {detail}") from None
    encoded = base64.b64encode(data).decode("ascii")
    where = quote(str(real), safe="")
    return f"{PREFIX}type:{config.type};path:{where};data:{mime};base64,{encoded}"


@dataclass(frozen=True)
class BinaryContent:
    """One parsed ``gth_read_binary`` result."""

    format_type: str
    path: str
    mime_type: str
    data: str

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def size(self) -> int:
        """The file's size in bytes, from the base64 length."""
        padding = len(self.data) - len(self.data.rstrip("="))
        return len(self.data) * 3 // 4 - padding


def parse_binary_content(content: object) -> BinaryContent | None:
    """The parts of a ``gth_read_binary`` result string, or ``None`` for anything else."""
    if not isinstance(content, str) or not content.startswith(PREFIX):
        return None
    head, sep, data = content.partition(";base64,")
    parts = head.split(";")
    if not sep or not data or len(parts) != 4:
        return None
    _, kind, where, mime = parts
    if not (kind.startswith("type:") and where.startswith("path:") and mime.startswith("data:")):
        return None
    kind, where, mime = kind[5:], where[5:], mime[5:]
    if not kind or not where or not mime:
        return None
    return BinaryContent(kind, unquote(where), mime, data)


_OMITTED = ";omitted"


def placeholder(result: str, content: BinaryContent) -> str:
    """The tool result without its base64: type, path and MIME type kept, then the size."""
    head = result.partition(";base64,")[0]
    return f"{head};size:{content.size}{_OMITTED} (the content is shown to you in the next message)"


def restore(result: str, images: list[tuple[str, str]]) -> str:
    """For a transcript: a :func:`placeholder` with its image's bytes put back (``images`` is
    what the user message naming its call holds, as ``(mime, base64)``); else ``result``."""
    if not result.startswith(PREFIX) or _OMITTED not in result or not images:
        return result
    head = result.partition(";size:")[0]
    mime, data = images[0]
    if not head.endswith(f";data:{mime}"):
        return result
    return f"{head};base64,{data}"


def make_read_binary_tool(ws: Workspace, configs: Sequence[BinaryFormatConfig]) -> BaseTool:
    """``gth_read_binary`` bound to ``ws`` and the ``binaryFormats`` entries ``configs``."""
    formats = list(configs)

    async def gth_read_binary(path: str, formatHint: FormatHint | None = None) -> str:
        return await asyncio.to_thread(read_binary, ws, formats, path, formatHint)

    return make_tool(
        READ_BINARY,
        "Read a binary file (image, file, audio, video) and return its base64-encoded content. "
        "Only works for file types configured in binaryFormats.",
        ReadBinaryArgs,
        gth_read_binary,
        "read",
    )
