"""Gaunt Sloth's own settings load silently; a typo next to them is still reported."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from gth_jupyter.config import load_config
from gth_jupyter.config.gaunt_sloth_keys import is_gaunt_sloth_only

# ``DEFAULT_CONFIG`` of gaunt-sloth-assistant@1.4.1 (dist/config.js), as a user would copy it.
DEFAULT_CONFIG = {
    "contentProvider": "file",
    "requirementsProvider": "file",
    "projectGuidelines": ".gsloth.guidelines.md",
    "includeCurrentDateAfterGuidelines": False,
    "projectReviewInstructions": ".gsloth.review.md",
    "filesystem": "read",
    "debugLog": False,
    "consoleLevel": "info",
    "commands": {
        "pr": {
            "contentProvider": "github",
            "requirementsProvider": "github",
            "rating": {"enabled": True, "passThreshold": 6, "minRating": 0, "maxRating": 10},
        },
        "review": {"rating": {"enabled": True, "passThreshold": 6, "errorOnReviewFail": True}},
        "code": {"filesystem": "all", "devTools": {"run_tests": "npm test"}},
        "api": {"port": 3000, "cors": {"allowOrigin": "http://localhost:3000"}},
    },
    "streamOutput": True,
    "writeOutputToFile": True,
    "writeBinaryOutputsToFile": True,
    "useColour": True,
    "streamSessionInferenceLog": True,
    "canInterruptInferenceWithEsc": True,
    "aiignore": {"enabled": True},
}


def loaded_warnings(tmp_path: Path, config: dict[str, object]) -> list[str]:
    file = tmp_path / ".gsloth.config.json"
    file.write_text(json.dumps(config))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_config(file, cwd=tmp_path, home=tmp_path)
    return [str(w.message) for w in caught]


def test_gaunt_sloths_default_config_loads_without_a_warning(tmp_path: Path) -> None:
    config = {
        "llm": {"type": "demo"},
        **DEFAULT_CONFIG,
        "requirementsProviderConfig": {"jira": {"cloudId": "x"}},
        "contentProviderConfig": {},
    }

    assert loaded_warnings(tmp_path, config) == []


def test_a_typo_beside_them_is_still_reported(tmp_path: Path) -> None:
    config = {
        "llm": {"type": "demo"},
        **DEFAULT_CONFIG,
        "streamOutptu": True,
        "commands": {"pr": {"ratting": {}}},
    }

    found = loaded_warnings(tmp_path, config)

    assert [m.split(" in ")[0] for m in found] == [
        "Unknown configuration key 'streamOutptu'",
        "Unknown configuration key 'commands.pr.ratting'",
    ]


def test_command_patterns_match_any_command_but_dev_tools_only_under_code() -> None:
    assert is_gaunt_sloth_only(("commands", "review", "rating", "passThreshold"))
    assert is_gaunt_sloth_only(("commands", "code", "devTools"))
    assert not is_gaunt_sloth_only(("commands", "chat", "devTools"))
    assert not is_gaunt_sloth_only(("commandz",))
