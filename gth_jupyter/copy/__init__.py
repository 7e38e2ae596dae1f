"""The static copy of a ``%gth`` turn: what a saved notebook shows where no widget runs.

GitHub, nbviewer, nbconvert and a notebook reopened without its kernel show an output's other
mimetypes instead of its widget view, so each ``%gth`` output carries its turn as ``text/html``,
``text/markdown`` and ``text/plain`` (:func:`render_static_copy`; "waiting for the agent…" until
the turn ends, :func:`waiting_copy`). What the model, the kernel or the browser wrote is made
inert on the way (``markdown.py``: the agent's Markdown as safe HTML and safe Markdown).

Pure: a turn's view in, mimetypes out. Nothing here imports IPython, reads the kernel's state
or builds an agent (``tests/test_layers.py`` keeps it so). Both hosts render it, below them:
the server for the turns it ran, from the thread it holds (:func:`served_copy`, what
``GET gth/threads/{id}?copy=1`` adds), the kernel for the turns it ran itself
(:mod:`gth_jupyter.notebook`: the comm transport, headless runs).
"""

from ._tools import PHOTO_NOTE
from .markdown import markdown_to_html, markdown_to_markdown
from .render import MAX_CELL_BYTES, render_static_copy, served_copy, waiting_copy

__all__ = [
    "MAX_CELL_BYTES",
    "PHOTO_NOTE",
    "markdown_to_html",
    "markdown_to_markdown",
    "render_static_copy",
    "served_copy",
    "waiting_copy",
]
