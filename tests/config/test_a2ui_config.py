"""``a2ui.imageHosts``: the hosts whose agent-shown images load without a click."""

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


def test_no_image_host_is_trusted_by_default() -> None:
    assert GthConfig().for_command("notebook").a2ui.image_hosts == []
    assert GthConfig().for_command("api").a2ui.model_dump(by_alias=True) == {"imageHosts": []}


def test_root_image_hosts_reach_every_command(tmp_path: Path) -> None:
    config = load(tmp_path, {"a2ui": {"imageHosts": ["cdn.example.com", "*.images.example.org"]}})

    for command in ("notebook", "api", "chat"):
        assert config.for_command(command).a2ui.image_hosts == [
            "cdn.example.com",
            "*.images.example.org",
        ]


def test_a_command_block_replaces_the_root_list(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "a2ui": {"imageHosts": ["cdn.example.com"]},
            "commands": {
                "notebook": {"a2ui": {"imageHosts": ["plots.internal"]}},
                "api": {"a2ui": {"imageHosts": []}},
            },
        },
    )

    assert config.for_command("notebook").a2ui.image_hosts == ["plots.internal"]
    assert config.for_command("api").a2ui.image_hosts == []  # an empty list trusts none
    assert config.for_command("chat").a2ui.image_hosts == ["cdn.example.com"]


def test_hosts_are_normalised(tmp_path: Path) -> None:
    config = load(
        tmp_path, {"a2ui": {"imageHosts": [" CDN.Example.com. ", "[::1]", "10.0.0.5", "*"]}}
    )

    assert config.for_command("notebook").a2ui.image_hosts == [
        "cdn.example.com",
        "[::1]",
        "10.0.0.5",
        "*",
    ]


@pytest.mark.parametrize(
    "entry",
    [
        "https://cdn.example.com",
        "cdn.example.com/img",
        "user@cdn.example.com",
        "",
        "a*.example.com",
        "cdn.example.com:8443",
    ],
)
def test_an_entry_that_is_not_a_host_is_refused(tmp_path: Path, entry: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"a2ui": {"imageHosts": [entry]}})

    assert "imageHosts" in str(info.value)


def test_a2ui_keys_are_not_reported_as_unknown(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    load(
        tmp_path,
        {"a2ui": {"imageHosts": ["cdn.example.com"]}, "commands": {"notebook": {"a2ui": {}}}},
    )

    assert [str(w.message) for w in recwarn.list] == []
