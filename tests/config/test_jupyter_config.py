"""``jupyter``: what ``%gth`` cells keep in the notebook (``savePhotos``) and how long a cell run
without a front end waits (``headlessTimeoutSeconds``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config import ConfigError, GthConfig, load_config


def load(tmp_path: Path, data: dict[str, Any]) -> GthConfig:
    file = tmp_path / ".gsloth.config.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    return load_config(file)


def test_photos_are_not_saved_and_a_headless_cell_waits_ten_minutes_by_default() -> None:
    assert GthConfig().jupyter.save_photos is False
    assert GthConfig().jupyter.headless_timeout_seconds == 600


def test_the_file_sets_both(tmp_path: Path) -> None:
    config = load(tmp_path, {"jupyter": {"savePhotos": True, "headlessTimeoutSeconds": 90}})
    assert config.jupyter.save_photos is True
    assert config.jupyter.headless_timeout_seconds == 90
    config = load(tmp_path, {"jupyter": {"headlessTimeoutSeconds": 2.5}})
    assert config.jupyter.headless_timeout_seconds == 2.5 and config.jupyter.save_photos is False


@pytest.mark.parametrize(
    ("setting", "key", "says"),
    [
        ({"savePhotos": "yes"}, "jupyter.savePhotos", "valid boolean"),
        ({"savePhotos": 1}, "jupyter.savePhotos", "valid boolean"),
        ({"headlessTimeoutSeconds": 0}, "jupyter.headlessTimeoutSeconds", "greater than 0"),
        ({"headlessTimeoutSeconds": -1}, "jupyter.headlessTimeoutSeconds", "greater than 0"),
        ({"headlessTimeoutSeconds": "600"}, "jupyter.headlessTimeoutSeconds", "valid number"),
        ({"headlessTimeoutSeconds": True}, "jupyter.headlessTimeoutSeconds", "valid number"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_key(
    tmp_path: Path, setting: dict[str, Any], key: str, says: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"jupyter": setting})
    assert info.value.code == "config_invalid"
    assert f"at {key}: " in str(info.value) and says in str(info.value)


def test_a_misspelt_key_is_a_warning(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match=r"jupyter\.savePhoto'"):
        config = load(tmp_path, {"jupyter": {"savePhoto": True}})
    assert config.jupyter.save_photos is False
