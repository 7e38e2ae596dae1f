"""Gaunt Sloth style configuration: ``.gsloth.config.json`` files, validated and layered.

``load_config()`` finds the project file (walking up from the working directory), merges it over
the user's global ``~/.gsloth/.gsloth.config.json`` and returns a :class:`GthConfig`;
``config.for_command("notebook")`` resolves the per-command rules into an
:class:`EffectiveConfig`. Problems raise :class:`ConfigError` naming the file and key path;
ignored keys warn with :class:`GthConfigWarning`.
"""

from gth_jupyter.config.effective import EffectiveConfig
from gth_jupyter.config.errors import ConfigError, GthConfigWarning
from gth_jupyter.config.gth_config import GthConfig
from gth_jupyter.config.loader import find_config_file, load_config
from gth_jupyter.config.schema import LlmConfig

__all__ = [
    "ConfigError",
    "EffectiveConfig",
    "GthConfig",
    "GthConfigWarning",
    "LlmConfig",
    "find_config_file",
    "load_config",
]
