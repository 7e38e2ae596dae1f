"""``run_python``: run code on the kernel's main shell and shape what it produced for a model.

The code runs as a cell would (on the main thread, where matplotlib and most user code expect to
be) but without entering the history or bumping the execution count, and with ``stop_on_error``
off so a failure never aborts the user's queued cells. The answer separates what a model reads
(stdout, stderr, the last expression's ``text/plain``, the error and its traceback with ANSI
escapes stripped) from images (``image/png`` as base64, kept apart so the text never carries
them). An image is kept once however many outputs carry the same bytes (with the inline backend
a figure left as the last expression is both the result and a display). Text is capped keeping
its head and tail. A timeout interrupts the kernel and says so. The escapes, the caps and the
image types are ``contract/spec/output.json``'s, which insert_cell's run in the browser reads too.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from gth_jupyter.contract.spec import spec
from gth_jupyter.contract.text import cap, strip_ansi
from gth_jupyter.kernel.client import Execution, KernelClient

# One spec with insert_cell's run in the browser (js/src/tools/notebook_summary.js).
_OUTPUT = spec("output")
MAX_TEXT: int = _OUTPUT["run"]["maxText"]
MAX_IMAGES: int = _OUTPUT["run"]["maxImages"]
#: A display's ``text/plain`` and an error's value are capped shorter than the run's text.
DISPLAY_CHARS: int = _OUTPUT["run"]["displayChars"]
#: The image types a run keeps for the model, the first one an output holds.
IMAGE_TYPES: tuple[str, ...] = tuple(_OUTPUT["run"]["imageTypes"])
# How base64 may be wrapped: ASCII white space, as the browser reads it.
_WRAP = re.compile(r"[\t\n\v\f\r ]+")
Status = Literal["ok", "error", "timeout"]


@dataclass
class Image:
    """A rich output image: its MIME type and base64 data, kept apart from the text."""

    mime_type: str
    data: str


@dataclass
class RunResult:
    """What ``run_python`` returns: text for the model, images apart, and how the run ended."""

    status: Status
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    """The last expression's value (``execute_result`` ``text/plain``)."""
    displays: list[str] = field(default_factory=list)
    """``text/plain`` of ``display_data`` outputs (for a figure: ``<Figure size ...>``)."""
    images: list[Image] = field(default_factory=list)
    error: dict[str, Any] | None = None
    """``{"ename", "evalue", "traceback"}``, the traceback ANSI-free and capped."""
    timed_out: bool = False
    interrupted: bool = False
    note: str = ""
    elapsed: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form (images included)."""
        return asdict(self)


def shape(execution: Execution, *, max_text: int = MAX_TEXT) -> RunResult:
    """Turns a main-shell :class:`Execution` into a :class:`RunResult`."""
    stdout: list[str] = []
    stderr: list[str] = []
    result: str | None = None
    displays: list[str] = []
    images: list[Image] = []
    seen: set[str] = set()
    error: dict[str, Any] | None = None
    dropped = 0
    for output in execution.outputs:
        kind, content = output["msg_type"], output["content"]
        if kind == "stream":
            (stderr if content.get("name") == "stderr" else stdout).append(content["text"])
        elif kind in ("execute_result", "display_data"):
            data = content.get("data", {})
            mime = next((t for t in IMAGE_TYPES if data.get(t)), None)
            b64 = _WRAP.sub("", str(data[mime])) if mime else ""
            if mime and b64 and b64 not in seen:  # a figure as the last value is also displayed
                seen.add(b64)
                if len(images) < MAX_IMAGES:
                    images.append(Image(mime, b64))
                else:
                    dropped += 1
            text = data.get("text/plain")
            if kind == "execute_result":
                result = cap(strip_ansi(str(text)), max_text) if text is not None else None
            elif text is not None:
                displays.append(cap(strip_ansi(str(text)), DISPLAY_CHARS))
        elif kind == "error":
            error = _error(content, max_text)
    reply = execution.reply
    if error is None and reply.get("status") == "error":
        error = _error(reply, max_text)
    status: Status = "timeout" if execution.timed_out else ("error" if error else "ok")
    notes = [execution.note] if execution.note else []
    if dropped:
        notes.append(f"{dropped} more image(s) left out")
    return RunResult(
        status=status,
        stdout=cap(strip_ansi("".join(stdout)), max_text),
        stderr=cap(strip_ansi("".join(stderr)), max_text),
        result=result,
        displays=displays,
        images=images,
        error=error,
        timed_out=execution.timed_out,
        interrupted=execution.interrupted,
        note="; ".join(notes),
        elapsed=execution.elapsed,
    )


def _error(content: dict[str, Any], max_text: int) -> dict[str, Any]:
    traceback = "\n".join(strip_ansi(str(line)) for line in content.get("traceback", []))
    return {
        "ename": strip_ansi(str(content.get("ename", ""))),
        "evalue": cap(strip_ansi(str(content.get("evalue", ""))), DISPLAY_CHARS),
        "traceback": cap(traceback, max_text),
    }


#: How long agent code may wait behind the user's running and queued cells before it starts.
QUEUE_TIMEOUT = 600.0


async def run_python(
    client: KernelClient,
    code: str,
    *,
    timeout: float = 60.0,
    max_text: int = MAX_TEXT,
    queue_timeout: float = QUEUE_TIMEOUT,
) -> RunResult:
    """Runs ``code`` on the main shell, after the cells queued before it (as a cell would:
    up to ``queue_timeout``); ``timeout`` counts from its start, and interrupts the kernel
    (which is reported)."""
    execution = await client.execute(
        code, shell="main", silent=False, timeout=timeout, queue_timeout=queue_timeout
    )
    return shape(execution, max_text=max_text)
