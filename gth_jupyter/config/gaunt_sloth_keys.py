"""Gaunt Sloth settings that are known here but do not apply, so loading is silent about them.

A ``.gsloth.config.json`` is shared with the ``gsloth`` CLI, whose defaults
(``gaunt-sloth-assistant@1.4.1``, ``dist/config.js``, ``DEFAULT_CONFIG``, and the ``GthConfig``
interface beside it) hold settings for its terminal, its output files and its review commands.
They mean nothing to a notebook agent, yet they are not typos: the loader reports unknown keys
except these. Each entry is a key path; ``*`` matches any command name, and a match covers
everything below the key.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["GAUNT_SLOTH_ONLY_KEYS", "is_gaunt_sloth_only"]

GAUNT_SLOTH_ONLY_KEYS: tuple[tuple[str, ...], ...] = (
    # Where ``gsloth review`` / ``pr`` get their diff and requirements.
    ("contentProvider",),
    ("contentProviderConfig",),
    ("requirementsProvider",),
    ("requirementsProviderConfig",),
    # Prompt files and profiles of the CLI.
    ("projectGuidelines",),
    ("projectReviewInstructions",),
    ("includeCurrentDateAfterGuidelines",),
    ("organization",),
    ("noDefaultPrompts",),
    ("identityProfile",),
    # The terminal and the output files.
    ("streamOutput",),
    ("streamSessionInferenceLog",),
    ("writeOutputToFile",),
    ("writeBinaryOutputsToFile",),
    ("useColour",),
    ("canInterruptInferenceWithEsc",),
    ("debugLog",),
    ("consoleLevel",),
    # The review commands and the coding session's dev tools.
    ("commands", "*", "contentProvider"),
    ("commands", "*", "requirementsProvider"),
    ("commands", "*", "rating"),
    ("commands", "*", "logWorkForReviewInSeconds"),
    ("commands", "code", "devTools"),
)


def is_gaunt_sloth_only(key_path: Sequence[str | int]) -> bool:
    """True if ``key_path`` is, or lies under, a Gaunt Sloth setting that does not apply here."""
    for known in GAUNT_SLOTH_ONLY_KEYS:
        if len(key_path) >= len(known) and all(
            part == "*" or part == key_path[index] for index, part in enumerate(known)
        ):
            return True
    return False
