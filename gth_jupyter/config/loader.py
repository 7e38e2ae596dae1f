"""Finding, reading and layering ``.gsloth.config.json`` files.

Lookup, as Gaunt Sloth 2 does it: starting in the working directory and walking up to the
filesystem root, the first directory holding a config wins. In each directory
``.gsloth.config.json`` is tried before ``.gsloth.config.jsonc``, and for each name the
``.gsloth/.gsloth-settings/`` folder before the directory itself. Files are JSONC (comments
and trailing commas allowed); ``.gsloth.config.py`` comes last and is Python (see
``python_config.py``), its live objects collected in ``GthConfig.live``.

Layers: the global ``~/.gsloth/.gsloth.config.json`` (or ``.jsonc``) loads first and the project
file is deep-merged over it. Objects merge key by key; arrays and scalars replace, except
``approvals.deny`` and ``approvals.escalate`` (at the root or in a command block) and
``aiignore.patterns``, which concatenate and drop duplicates, so a project can add prohibitions
but not lift the user's.
An explicit path (``gth -c FILE``) loads that file alone.

Errors name the file (and the line, or the key path) at fault; unknown keys are reported as
:class:`~gth_jupyter.config.errors.GthConfigWarning` naming the file they came from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gth_jupyter.config import _jsonc
from gth_jupyter.config.effective import unknown_built_in_tools
from gth_jupyter.config.errors import ConfigError, format_key_path, report
from gth_jupyter.config.gaunt_sloth_keys import is_gaunt_sloth_only
from gth_jupyter.config.gth_config import GthConfig
from gth_jupyter.config.live import LiveObjects, is_marker
from gth_jupyter.config.python_config import read_python_layer
from gth_jupyter.config.schema import iter_unknown_keys

__all__ = ["CONFIG_FILE_NAMES", "find_config_file", "global_config_file", "load_config"]

#: Names tried in each directory, highest precedence first (Gaunt Sloth: json, jsonc, then code).
CONFIG_FILE_NAMES: tuple[str, ...] = (
    ".gsloth.config.json",
    ".gsloth.config.jsonc",
    ".gsloth.config.py",
)
SETTINGS_DIR = Path(".gsloth", ".gsloth-settings")
GLOBAL_DIR = ".gsloth"
#: (parent key, key) of the arrays that concatenate across layers instead of replacing.
_ADDITIVE = frozenset({("approvals", "deny"), ("approvals", "escalate"), ("aiignore", "patterns")})

KeyPath = tuple[Any, ...]
Origins = dict[KeyPath, Path]


def find_config_file(start: Path) -> Path | None:
    """The project config for ``start``: the nearest one in ``start`` or a parent directory."""
    start = start.resolve()
    for directory in (start, *start.parents):
        for name in CONFIG_FILE_NAMES:
            for candidate in (directory / SETTINGS_DIR / name, directory / name):
                if candidate.is_file():
                    return candidate
    return None


def global_config_file(home: Path | None = None) -> Path | None:
    """The user's global config, ``~/.gsloth/.gsloth.config.json`` (or ``.jsonc``), if any."""
    folder = (home if home is not None else Path.home()) / GLOBAL_DIR
    for name in CONFIG_FILE_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def load_config(
    path: Path | str | None = None,
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    files: Sequence[Path] | None = None,
) -> GthConfig:
    """Load the configuration in effect for ``cwd`` (default: the current directory).

    Args:
        path: an explicit config file (relative to ``cwd``), loaded alone; missing is an error.
        cwd: where the project lookup starts.
        home: the home directory holding ``.gsloth/`` (default :meth:`Path.home`).
        files: exactly these files, layered in order, instead of a lookup (what a server
            hands its kernels, see ``handover.py``); a missing one is an error.

    Returns:
        The validated config; ``GthConfig()`` (no ``llm``: the offline demo model) when there is
        no file at all. ``config.sources`` lists the files read, lowest precedence first.

    Raises:
        ConfigError: a file is missing (explicit ``path``), unreadable, not JSONC, or invalid,
            or a ``.gsloth.config.py`` fails to run (``config_python_error``).
    """
    base = cwd if cwd is not None else Path.cwd()
    if files is not None:
        for file in files:
            if not file.is_file():
                raise ConfigError("no such file", code="config_not_found", file=file)
        files = list(files)
    elif path is not None:
        explicit = Path(path).expanduser()
        explicit = explicit if explicit.is_absolute() else base / explicit
        if not explicit.is_file():
            raise ConfigError("no such file", code="config_not_found", file=explicit)
        files = [explicit]
    else:
        found = [global_config_file(home), find_config_file(base)]
        files = [file for i, file in enumerate(found) if file and file not in found[:i]]

    merged: dict[str, Any] = {}
    origins: Origins = {}
    live = LiveObjects()
    for file in files:
        merged = _merge(merged, _read_layer(file, live), (), file, origins)
    if is_marker(merged.get("llm")):  # a chat model object: kept live, not validated
        live.llm = live.get(merged.pop("llm"))
    try:
        config = GthConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError.from_validation_error(
            exc, merged, lambda key_path: _origin(key_path, origins)
        ) from exc
    config._sources = files
    config._live = live
    _report_unknown(config, origins)
    return config


def _read_layer(file: Path, live: LiveObjects) -> dict[str, Any]:
    """Parse one config file into plain data; a ``.py`` file's objects go to ``live``."""
    if file.suffix == ".py":
        return read_python_layer(file, live)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeError) as exc:
        raise ConfigError(str(exc), code="config_unreadable", file=file) from exc
    try:
        data = _jsonc.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            exc.msg, code="config_invalid_json", file=file, line=exc.lineno, column=exc.colno
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a JSON object", file=file)
    return data


def _merge(base: Any, over: Any, path: KeyPath, file: Path, origins: Origins) -> Any:
    """Deep-merge ``over`` (from ``file``) onto ``base``, recording where each value came from."""
    if path and path[-1] == "approvals":  # a mode name is shorthand for {"mode": name}
        base = {"mode": base} if isinstance(base, str) and isinstance(over, dict) else base
        over = {"mode": over} if isinstance(over, str) and isinstance(base, dict) else over
    if (
        isinstance(base, dict)
        and isinstance(over, dict)
        and not (is_marker(base) or is_marker(over))
    ):
        merged = dict(base)
        for key, value in over.items():
            if key in base:
                merged[key] = _merge(base[key], value, (*path, key), file, origins)
            else:
                merged[key] = value
                _tag(value, (*path, key), file, origins)
        origins[path] = file
        return merged
    if isinstance(base, list) and isinstance(over, list) and tuple(path[-2:]) in _ADDITIVE:
        items: list[tuple[Any, Path]] = []
        for index, item in enumerate(base):
            items.append((item, origins.get((*path, index), file)))
        items.extend((item, file) for item in over)
        kept: list[tuple[Any, Path]] = []
        for item, source in items:
            if all(item != seen for seen, _ in kept):
                kept.append((item, source))
        _tag([], path, file, origins)
        for index, (item, source) in enumerate(kept):
            _tag(item, (*path, index), source, origins)
        return [item for item, _ in kept]
    _tag(over, path, file, origins)
    return over


def _tag(value: Any, path: KeyPath, file: Path, origins: Origins) -> None:
    """Record ``file`` as the origin of ``value`` at ``path`` and of everything inside it."""
    for stale in [key for key in origins if key[: len(path)] == path]:
        del origins[stale]
    stack: list[tuple[KeyPath, Any]] = [(path, value)]
    while stack:
        at, node = stack.pop()
        origins[at] = file
        if isinstance(node, dict):
            stack.extend(((*at, key), item) for key, item in node.items())
        elif isinstance(node, list):
            stack.extend(((*at, index), item) for index, item in enumerate(node))


def _origin(path: KeyPath, origins: Origins) -> Path | None:
    """The file that supplied ``path``, or its nearest existing parent."""
    for length in range(len(path), -1, -1):
        if path[:length] in origins:
            return origins[path[:length]]
    return None


def _is_service_url(key_path: KeyPath) -> bool:
    """A key that looks like a database or Redis URL (``databaseUrl``, ``redis_url``...)."""
    key = str(key_path[-1]).lower().replace("_", "").replace("-", "")
    services = ("database", "db", "postgres", "postgresql", "pg", "redis", "checkpointer")
    return any(key in (f"{s}url", f"{s}uri", f"{s}dsn") for s in services)


def _report_unknown(config: GthConfig, origins: Origins) -> None:
    """Warn about keys the schema does not define and names that are not built-in tools.

    Gaunt Sloth's own settings that do not apply here (``gaunt_sloth_keys.py``) are not reported.
    """
    for key_path in iter_unknown_keys(config):
        if is_gaunt_sloth_only(key_path):
            continue
        if _is_service_url(key_path):
            report(
                f"'{format_key_path(key_path)}' in {_origin(key_path, origins)} is ignored: "
                "database and Redis URLs carry credentials, which belong in the environment "
                "($GTH_JUPYTER_DATABASE_URL, $GTH_JUPYTER_REDIS_URL), not in a project file"
            )
            continue
        file = _origin(key_path, origins)
        report(f"Unknown configuration key '{format_key_path(key_path)}' in {file}")
    settings: list[tuple[KeyPath, Any]] = [(("builtInTools",), config.built_in_tools)]
    for name, block in config.commands.items():
        settings.append((("commands", name, "builtInTools"), block.built_in_tools))
    for key_path, setting in settings:
        for tool in unknown_built_in_tools(setting):
            report(f"Unknown built-in tool: {tool} (in {_origin((*key_path, tool), origins)})")
