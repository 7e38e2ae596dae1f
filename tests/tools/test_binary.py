"""gth_read_binary: Gaunt Sloth's formats, result string and error texts, confined like the
other file tools (working directory after symlinks, ``.aiignore``), size checked before reading."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from langchain_core.tools import ToolException

from gth_jupyter.config.schema import BinaryFormatConfig
from gth_jupyter.tools.fs._read import READ_TOOLS
from gth_jupyter.tools.fs._write import WRITE_TOOLS
from gth_jupyter.tools.fs.binary import (
    DEFAULT_MAX_SIZE,
    DENIED,
    NOT_CONFIGURED,
    format_for,
    make_read_binary_tool,
    mime_type,
    parse_binary_content,
    placeholder,
    read_binary,
    restore,
)
from gth_jupyter.tools.fs.tools import filesystem_tool_names, make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from tests.tools.conftest import run_call, write

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def formats(*entries: dict[str, Any]) -> list[BinaryFormatConfig]:
    return [BinaryFormatConfig.model_validate(e) for e in entries]


FORMATS = formats(
    {"type": "image", "extensions": ["png", "jpg", "heic"], "mimeTypes": {"heic": "image/heic"}},
    {"type": "file", "extensions": ["pdf"], "maxSize": 8},
    {"type": "audio", "extensions": ["mp3"]},
    {"type": "binary", "extensions": ["bin", "png"]},
)


@pytest.fixture
def ws(tree: Path) -> Workspace:
    write(tree / "pics" / "dot.png", PNG)
    write(tree / "pics" / "a;b c.png", PNG)
    write(tree / "doc.pdf", b"%PDF-1.")
    write(tree / "big.pdf", b"%PDF-1.4 and more")
    write(tree / "song.mp3", b"ID3")
    write(tree / "photo.heic", b"heic")
    write(tree / "notes.xyz", b"x")
    write(tree / "secrets" / "face.png", PNG)
    write(tree / ".hidden" / "face.png", PNG)
    write(tree.parent / "outside" / "face.png", PNG)
    os.symlink(tree.parent / "outside" / "face.png", tree / "face_link.png")
    return Workspace.at(tree)


def test_the_result_is_gaunt_sloths_string(ws: Workspace) -> None:
    out = read_binary(ws, FORMATS, "pics/dot.png")
    path = quote(str(ws.root / "pics" / "dot.png"), safe="")
    assert out == (
        f"gth_read_binary;type:image;path:{path};data:image/png;base64,"
        f"{base64.b64encode(PNG).decode()}"
    )
    parsed = parse_binary_content(out)
    assert parsed is not None
    assert (parsed.format_type, parsed.mime_type, parsed.name) == ("image", "image/png", "dot.png")
    assert parsed.size == len(PNG)
    assert base64.b64decode(parsed.data) == PNG


def test_a_path_with_semicolons_and_spaces_survives_the_round_trip(ws: Workspace) -> None:
    parsed = parse_binary_content(read_binary(ws, FORMATS, "pics/a;b c.png"))
    assert parsed is not None and parsed.path == str(ws.root / "pics" / "a;b c.png")


def test_formats_types_and_mime_types(ws: Workspace) -> None:
    assert ";type:file;" in read_binary(ws, FORMATS, "doc.pdf")
    assert ";data:application/pdf;" in read_binary(ws, FORMATS, "doc.pdf")
    assert ";type:audio;" in read_binary(ws, FORMATS, "song.mp3")
    assert ";data:audio/mpeg;" in read_binary(ws, FORMATS, "song.mp3")
    assert ";data:image/heic;" in read_binary(ws, FORMATS, "photo.heic")  # mimeTypes override
    assert ";type:binary;" in read_binary(ws, FORMATS, "blob.bin")
    assert ";data:application/octet-stream;" in read_binary(ws, FORMATS, "blob.bin")


def test_binary_is_the_fallback_and_a_hint_chooses_the_type() -> None:
    assert format_for("png", FORMATS) is FORMATS[0]  # "binary" lists png too, but comes last
    assert format_for("bin", FORMATS) is FORMATS[3]
    assert format_for("png", FORMATS, "file") is None
    assert format_for("pdf", FORMATS, "file") is FORMATS[1]
    assert format_for("", FORMATS) is None
    assert format_for("PNG".lower(), formats({"type": "image", "extensions": [".PNG"]})) is not None
    assert mime_type("webm", FORMATS[0]) == "video/webm"
    assert mime_type("xyz", FORMATS[0]) == "application/octet-stream"


@pytest.mark.parametrize(
    ("path", "hint", "msg"),
    [
        ("notes.xyz", None, "Extension '.xyz' is not configured for any binary format type. "),
        ("README.md", None, "Extension '.md' is not configured"),
        ("pics/dot.png", "audio", "Extension '.png' is not configured"),
        ("big.pdf", None, "Error reading binary file: File size (17 bytes) exceeds maximum "),
        ("missing.png", None, "Error reading binary file: "),
        ("pics.png", None, "Error reading binary file: "),
    ],
)
def test_gaunt_sloths_error_texts(ws: Workspace, path: str, hint: str | None, msg: str) -> None:
    (ws.root / "pics.png").mkdir()

    with pytest.raises(ToolException) as raised:
        read_binary(ws, FORMATS, path, hint)
    assert str(raised.value).startswith(msg)


def test_the_size_message_is_gaunt_sloths(ws: Workspace) -> None:

    with pytest.raises(ToolException, match=r"^Error reading binary file: File size \(17 bytes\) "
                       r"exceeds maximum allowed \(8 bytes\) for big\.pdf$"):  # fmt: skip
        read_binary(ws, FORMATS, "big.pdf")
    assert FORMATS[0].max_size is None and DEFAULT_MAX_SIZE == 10 * 1024 * 1024


@pytest.mark.parametrize(
    "path",
    [
        "secrets/face.png",  # .aiignore of the tree
        "SeCrets/../secrets/face.png",
        "face_link.png",  # a link inside pointing outside
        "../outside/face.png",
        str(Path("/etc/hostname")),
        "",
    ],
)
def test_confined_to_the_working_directory_and_aiignore(ws: Workspace, path: str) -> None:

    with pytest.raises(ToolException) as raised:
        read_binary(ws, FORMATS, path)
    assert str(raised.value) == DENIED


def test_aiignore_patterns_from_the_config(tree: Path, ws: Workspace) -> None:

    assert read_binary(ws, FORMATS, ".hidden/face.png").startswith("gth_read_binary;")
    with pytest.raises(ToolException, match=r"^Path is not within"):
        read_binary(Workspace.at(tree, ["*.png"]), FORMATS, ".hidden/face.png")


def test_not_configured(ws: Workspace) -> None:

    for configs in (None, []):
        with pytest.raises(ToolException) as raised:
            read_binary(ws, configs, "pics/dot.png")
        assert str(raised.value) == NOT_CONFIGURED


def test_the_read_tools_include_it_only_when_formats_are_configured(ws: Workspace) -> None:
    assert filesystem_tool_names("read") == list(READ_TOOLS)
    assert filesystem_tool_names("read", binary=True) == [*READ_TOOLS, "gth_read_binary"]
    every = [*READ_TOOLS, "gth_read_binary", *WRITE_TOOLS]
    assert filesystem_tool_names("all", binary=True) == every
    assert filesystem_tool_names(["gth_read_binary"]) == []
    assert filesystem_tool_names(["gth_read_binary"], binary=True) == ["gth_read_binary"]
    assert filesystem_tool_names(["write_file"], binary=True) == ["write_file"]

    def names(*args: Any) -> list[str]:
        return [t.name for t in make_filesystem_tools(*args)]

    assert "gth_read_binary" not in names("read", ws)
    assert "gth_read_binary" not in names("read", ws, [])
    assert "gth_read_binary" in names("read", ws, FORMATS)
    assert "gth_read_binary" not in names("none", ws, FORMATS)
    (tool,) = [t for t in make_filesystem_tools("all", ws, FORMATS) if t.name == "gth_read_binary"]
    assert tool.metadata == {"gth_kind": "read"}
    assert set(tool.args) == {"path", "formatHint"}


async def test_through_a_graph_an_error_is_an_error_result(ws: Workspace) -> None:
    tool = make_read_binary_tool(ws, FORMATS)
    ok = await run_call([tool], "gth_read_binary", {"path": "pics/dot.png"})
    assert ok.message.status == "success"
    assert str(ok.message.content).startswith("gth_read_binary;type:image;")
    bad = await run_call([tool], "gth_read_binary", {"path": "secrets/face.png"})
    assert bad.message.status == "error" and bad.message.content == DENIED


def test_placeholder_and_restore(ws: Workspace) -> None:
    out = read_binary(ws, FORMATS, "pics/dot.png")
    parsed = parse_binary_content(out)
    assert parsed is not None
    short = placeholder(out, parsed)
    assert parsed.data not in short and ";base64," not in short
    assert short.startswith(out.partition(";base64,")[0] + f";size:{len(PNG)};omitted")
    assert parse_binary_content(short) is None  # never injected again
    assert restore(short, [("image/png", parsed.data)]) == out
    assert restore(short, [("image/jpeg", parsed.data)]) == short
    assert restore(short, []) == short
    assert restore("plain text", [("image/png", parsed.data)]) == "plain text"


@pytest.mark.parametrize(
    "text",
    [
        "gth_read_binary;type:image;path:x;data:image/png;base64,",
        "gth_read_binary;type:image;data:image/png;base64,QUJD",
        "gth_read_binary;kind:image;path:x;data:image/png;base64,QUJD",
        "read_binary;type:image;path:x;data:image/png;base64,QUJD",
        "Error reading binary file: nope",
    ],
)
def test_other_strings_do_not_parse(text: str) -> None:
    assert parse_binary_content(text) is None
