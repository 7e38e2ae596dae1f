"""Issue 8, item 6: read_file must not load whole files.

A fresh Python process runs the real tools on a 300 MB file of text lines and reports how much its
peak RSS grew. The file is sparse (real lines at the start and the end, a hole between them), so it
costs no disk; the hole reads as one 300 MB line of NUL bytes, which also proves that a long line
is cut without being held.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SIZE = 300 * 1024 * 1024
START = "".join(f"line {i}\n" for i in range(1, 6))  # lines 1-5; the hole is line 6
END = "\nend 1\nend 2\nend 3\n"  # lines 7-9

RUNNER = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    from pathlib import Path
    from gth_jupyter.tools.fs._read import make_read_tools
    from gth_jupyter.tools.fs.workspace import Workspace

    tools = {t.name: t for t in make_read_tools(
        Workspace.at(Path(sys.argv[1])), {"read_file", "read_multiple_files"})}
    calls = [
        ("head", "read_file", {"path": "big.txt", "head": 3}),
        ("tail", "read_file", {"path": "big.txt", "tail": 3}),
        ("window", "read_file", {"path": "big.txt", "offset": 7, "limit": 2}),
        ("both", "read_file", {"path": "big.txt", "head": 2, "tail": 2}),
        ("whole", "read_file", {"path": "big.txt"}),
        ("many", "read_multiple_files", {"paths": ["big.txt", "small.txt"]}),
    ]

    async def main() -> None:
        await tools["read_file"].ainvoke({"path": "small.txt", "head": 1})  # warm up the path
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = {label: await tools[name].ainvoke(args) for label, name, args in calls}
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"growth_kb": after - before, "out": out}))

    asyncio.run(main())
    """
)


def test_reading_a_300_mb_file_grows_peak_rss_by_under_20_mb(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.write(START.encode())
        f.truncate(SIZE - len(END))
        f.seek(SIZE - len(END))
        f.write(END.encode())
    assert big.stat().st_size == SIZE
    assert big.stat().st_blocks * 512 < 10 * 1024 * 1024  # sparse: the hole takes no disk
    (tmp_path / "small.txt").write_text("tiny\n")

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    report = json.loads(done.stdout)
    out = report["out"]
    assert out["head"] == "line 1\nline 2\nline 3"
    assert out["tail"] == "end 1\nend 2\nend 3"
    assert out["window"] == "end 1\nend 2"
    assert out["both"] == "line 1\nline 2\n... [5 lines skipped] ...\nend 2\nend 3"
    hole = "\0" * 2000 + "... (line truncated to 2000 chars)"
    assert out["whole"] == f"{START}{hole}{END}"
    assert out["many"] == f"big.txt:\n{START}{hole}{END}\n\n---\nsmall.txt:\ntiny\n\n"
    assert report["growth_kb"] < 20 * 1024, report["growth_kb"]
