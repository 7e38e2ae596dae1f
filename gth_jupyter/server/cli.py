"""The ``gth-jupyter`` command: ``serve`` starts the standalone AG-UI server."""

from __future__ import annotations

import argparse
import asyncio
import gc
import ipaddress
import os
import secrets
import signal
import sys
from collections.abc import Sequence

from ..agent import AgentRegistry, CheckpointStore
from ..config import ConfigError, load_config
from .standalone import make_app

__all__ = ["API_COMMAND", "main"]

API_COMMAND = "api"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gth-jupyter", description=__doc__)
    commands = parser.add_subparsers(dest="subcommand", required=True)
    serve = commands.add_parser("serve", help="Serve the AG-UI endpoint outside Jupyter.")
    serve.add_argument("--host", default="127.0.0.1", help="Interface (default: loopback).")
    serve.add_argument("--port", type=int, help="Port (default: commands.api.port or 3000).")
    serve.add_argument(
        "--token",
        default=os.environ.get("GTH_JUPYTER_TOKEN"),
        help="Token clients must send (default: $GTH_JUPYTER_TOKEN, else a generated one).",
    )
    serve.add_argument("-c", "--config", help="A .gsloth.config.json(c) file to use.")
    serve.add_argument(
        "--memory", action="store_true", help="Keep threads in memory, not in SQLite."
    )
    serve.add_argument("--checkpoint-path", help="SQLite file for threads.")
    serve.add_argument(
        "--command",
        dest="config_command",
        default=API_COMMAND,
        help="The configuration command to run as (default: api, which answers no approvals; "
        "notebook asks the client through AG-UI interrupts).",
    )
    return parser


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"gth-jupyter: {exc}", file=sys.stderr)
        return 2
    store = CheckpointStore("memory" if args.memory else "sqlite", args.checkpoint_path)
    registry = AgentRegistry(config, command=args.config_command, store=store)
    if registry.build_error is not None:
        print(f"gth-jupyter: {registry.build_error}", file=sys.stderr)
        return 2
    effective = registry.effective
    port = args.port if args.port is not None else effective.port
    token = args.token or secrets.token_urlsafe(24)
    app = make_app(registry, token=token, max_body_bytes=effective.max_body_bytes)
    server = app.listen(port, address=args.host, max_body_size=effective.max_body_bytes * 2)
    info = registry.info()
    print(
        f"gth-jupyter AG-UI server on http://{args.host}:{port} "
        f"(model: {info['model']}, provider: {info['provider']})",
        flush=True,
    )
    if not args.token:
        print(f"Token: {token}", flush=True)
    if not _is_loopback(args.host):
        print("Warning: listening beyond loopback; anyone with the token can run tools.")
    # Everything imported so far lives as long as the server: keep it out of the collector's
    # full passes, which otherwise cost ~100 ms per long streamed answer.
    gc.collect()
    gc.freeze()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.stop()
    await registry.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.subcommand == "serve":
        return asyncio.run(serve(args))
    return 2  # pragma: no cover - argparse enforces the subcommand


if __name__ == "__main__":
    sys.exit(main())
