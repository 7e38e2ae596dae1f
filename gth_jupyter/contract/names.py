"""Names every layer shares, in a module that imports nothing but the spec reader: the kernel's
``%gth`` needs them without loading the agent stack, and tools and middleware read the same marks
the protocol layer writes."""

from __future__ import annotations

from .spec import spec

__all__ = [
    "CELL_KEY",
    "DEFAULT_AGENT",
    "IMAGES_FOR",
    "INJECTED_MARK",
    "NOTEBOOK_TOOLS",
    "OWNER_KEY",
    "PHOTO_PLACEHOLDER",
    "RUN_META_KEY",
    "TURN_KEY",
]

#: The agent a host serves when a request names none.
DEFAULT_AGENT = "default"

#: ``additional_kwargs`` key of messages middleware added for the model only (a captured frame).
INJECTED_MARK = "gth_image_injected"
#: ``additional_kwargs`` key of an injected message holding a tool's images: that tool call's id
#: (so a transcript can show the images in the tool's card, where the result no longer has them).
IMAGES_FOR = "gth_images_for"
#: How the result of a photo moved out for the model (``frontend-image-injection``) begins, so a
#: transcript can tell it and put the photo back into the ``capture_image`` card.
PHOTO_PLACEHOLDER = "[image captured: "
#: ``configurable`` key of a run's config naming the user it runs for (the thread's owner), so
#: middleware can scope what a user granted to that user.
OWNER_KEY = "gth_owner"
#: ``additional_kwargs`` key naming the turn a user message starts: the widget (a ``%gth``
#: cell) that sent it. Everything after it, up to the next user message, belongs to that turn.
TURN_KEY = "gth_turn"
#: ``additional_kwargs`` key naming the notebook cell a user message's turn ran for
#: (``forwardedProps.gth.cellId``): running that cell again replaces the turn.
CELL_KEY = "gth_cell"
#: Checkpoint metadata key: the run (AG-UI ``runId``) that wrote a checkpoint, so the checkpoint
#: a run ended on (a ``parentRunId``) can be found again.
RUN_META_KEY = "gth_run_id"
#: The browser tools that read and change the notebook: gated by approvals although the browser
#: runs them, with the schema and kind ``tools/notebook_tools.py`` gives them by name. The
#: widget declares them by the same names (``contract/spec/browser_tools.json``).
NOTEBOOK_TOOLS: tuple[str, ...] = tuple(spec("browser_tools")["notebook"])
