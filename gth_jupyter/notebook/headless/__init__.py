"""Headless ``%gth`` turns: the turn run in the kernel where no front end renders a widget.

nbconvert, papermill, nbclient and scheduled jobs run a notebook with no page to show a chat, so
there ``%gth <prompt>`` runs its turn on the kernel's own agent (``host/``), blocks until it ends,
and leaves the turn's static copy (:mod:`gth_jupyter.copy`) as the cell's output
(:func:`run_headless`). What only a browser or a person could answer is answered at once so a
run never hangs (``_answers.py``), the browser tools are declared as a widget would declare
them (``_tools.py``), and ``run_python`` runs on the main thread the cell holds
(``_kernel.py``).
"""

from .run import (
    DEFAULT_TIMEOUT_S,
    HeadlessOutcome,
    headless_thread_id,
    new_headless_thread,
    run_headless,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HeadlessOutcome",
    "headless_thread_id",
    "new_headless_thread",
    "run_headless",
]
