""".aiignore matching: gitignore-like, erring toward hiding."""

from __future__ import annotations

from pathlib import Path

import pytest

from gth_jupyter.tools.fs.aiignore import AiIgnore


@pytest.mark.parametrize(
    ("pattern", "hidden", "visible"),
    [
        ("*.key", ["a.key", "deep/er/b.key", ".secret.key"], ["a.keys", "key"]),
        ("secrets/", ["secrets", "secrets/a.txt", "x/secrets/b/c.txt"], ["secretsx/a"]),
        ("/config/prod.env", ["config/prod.env"], ["x/config/prod.env", "config/dev.env"]),
        ("build/out", ["build/out", "build/out/x"], ["src/build/out"]),
        ("**/cache/*.bin", ["cache/a.bin", "a/b/cache/c.bin"], ["cache/a.txt"]),
        ("*.{pem,crt}", ["a.pem", "b/c.crt"], ["a.pub"]),
        ("id_[rd]sa", ["id_rsa", "x/id_dsa"], ["id_ecdsa"]),
        ("!keep.txt", ["!keep.txt"], ["keep.txt"]),
        ("///", [], ["anything", "a/b"]),
    ],
)
def test_patterns(pattern: str, hidden: list[str], visible: list[str]) -> None:
    rules = AiIgnore([pattern])
    assert [p for p in hidden if not rules.hides(p)] == []
    assert [p for p in visible if rules.hides(p)] == []


def test_file_config_and_switch(tmp_path: Path) -> None:
    (tmp_path / ".aiignore").write_text("# comment\n\n*.env\n")
    assert AiIgnore.load(tmp_path).hides("x/.env")
    assert not AiIgnore.load(tmp_path, ["*.pem"]).hides("x/.env")
    assert not AiIgnore.load(tmp_path, enabled=False).hides("x/.env")
    assert not AiIgnore.load(tmp_path / "missing").hides("x/.env")
