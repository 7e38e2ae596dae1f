"""The offline demo: the model a chat runs on when nothing is configured.

:class:`DemoChatModel` (``model.py``) needs no key and no network, streams at a readable pace,
and shows what the chat can do by rules on the last message (``_rules.py``): a streamed Markdown
answer, a webcam photo, an A2UI form (``_form.py``), the data agent's kernel tools
(``_data.py``) and the notebook tools (``_notebook.py``).
"""

from gth_jupyter.models.demo.model import DEMO_MODEL_NAME, DemoChatModel

__all__ = ["DEMO_MODEL_NAME", "DemoChatModel"]
