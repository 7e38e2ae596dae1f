"""The ``gth-jupyter`` command: ``serve`` starts the standalone AG-UI server; ``db provision``
gives a user a role and schema of their own in the shared database (see
:mod:`gth_jupyter.store.provision`) and, given an admin Redis URL, a Redis user of their own
(:mod:`gth_jupyter.store.redis_users`); ``db migrate-roles`` carries the roles and Redis users
an older gth-jupyter made over to the current names, told every Hub user.

Before anything heavy is imported, ``serve`` hardens its own process (see :mod:`.token`): it
marks itself non-dumpable, reads the token from ``--token-file``, ``$GTH_JUPYTER_TOKEN`` or
``--token`` (refusing one shorter than 16 characters) and, for ``--token``, re-executes itself
with the token out of its command line. It refuses a non-loopback ``--host`` unless
``--allow-remote`` says the user means it.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import secrets
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .token import (
    ENV_VAR,
    TokenError,
    check_token,
    make_non_dumpable,
    read_token_file,
    reexec_without_token,
    take_env_token,
    token_file_path,
    token_in_command_line,
)

if TYPE_CHECKING:
    from ..store.postgres_env import ServiceUrls

__all__ = ["API_COMMAND", "main"]

API_COMMAND = "api"
#: The checkpointer kinds (as gth_jupyter.store.KINDS, without importing the store yet).
KINDS = ("sqlite", "memory", "postgres")
# As in gth_jupyter.store.postgres_env, which imports the store (not before main()'s checks).
DATABASE_URL_VAR = "GTH_JUPYTER_DATABASE_URL"
ADMIN_URL_VAR = "GTH_JUPYTER_ADMIN_DATABASE_URL"
ADMIN_REDIS_URL_VAR = "GTH_JUPYTER_ADMIN_REDIS_URL"
_DESCRIPTION = "The gth-jupyter command: serve starts the standalone AG-UI server."


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gth-jupyter", description=_DESCRIPTION)
    commands = parser.add_subparsers(dest="subcommand", required=True)
    serve = commands.add_parser("serve", help="Serve the AG-UI endpoint outside Jupyter.")
    serve.add_argument("--host", default="127.0.0.1", help="Interface (default: loopback).")
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="Allow a --host beyond loopback, and requests whose Host header is not loopback "
        "(e.g. behind a TLS reverse proxy).",
    )
    serve.add_argument("--port", type=int, help="Port (default: commands.api.port or 3000).")
    serve.add_argument(
        "--token-file",
        help="Read the token clients must send from the first line of this file, which only "
        "its owner may read (chmod 600).",
    )
    serve.add_argument(
        "--token",
        help=f"The token clients must send (visible in the process list until the server "
        f"re-executes itself without it: prefer --token-file or ${ENV_VAR}; default: "
        f"${ENV_VAR}, else a generated one).",
    )
    serve.add_argument("-c", "--config", help="A .gsloth.config.json(c) file to use.")
    serve.add_argument(
        "--memory", action="store_true", help="Keep threads in memory (--checkpointer memory)."
    )
    serve.add_argument(
        "--checkpointer",
        choices=KINDS,
        help=f"Where threads are kept (default: sqlite): an SQLite file, memory, or a "
        f"PostgreSQL database shared by many servers, whose URL comes from "
        f"${DATABASE_URL_VAR} (never from a flag: command lines are visible to every user).",
    )
    serve.add_argument("--checkpoint-path", help="SQLite file for threads.")
    serve.add_argument(
        "--run-lease-seconds",
        type=float,
        help="How long a run's lease on its thread outlives a server that stopped renewing "
        "it (postgres; default: runLeaseSeconds of the configuration, else 30).",
    )
    serve.add_argument(
        "--journal-budget-bytes",
        type=int,
        default=64 * 1024 * 1024,
        help="The most the server keeps in memory of its runs' events, for clients that "
        "re-attach (all runs together; default 64 MiB); past it the oldest finished runs' "
        "events go first.",
    )
    serve.add_argument(
        "--journal-user-budget-bytes",
        type=int,
        default=16 * 1024 * 1024,
        help="The most the server keeps in memory of one user's runs' events (default 16 "
        "MiB); past it that user's oldest finished runs' events go first.",
    )
    serve.add_argument(
        "--command",
        dest="config_command",
        default=API_COMMAND,
        help="The configuration command to run as (default: api, which answers no approvals; "
        "notebook asks the client through AG-UI interrupts).",
    )
    db = commands.add_parser("db", help="Manage the shared PostgreSQL database and Redis.")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    provision = db_commands.add_parser(
        "provision",
        help=f"Create or refresh a user's role and schema (with a new password) and print the "
        f"user's database URL; the superuser URL comes from ${ADMIN_URL_VAR}. With "
        f"${ADMIN_REDIS_URL_VAR} (a Redis URL allowed to run ACL SETUSER), also create or "
        f"refresh the user's Redis user, which reaches that user's run journals alone, and "
        f"print its URL on the next line.",
    )
    provision.add_argument("user", help="The user's name (e.g. their JupyterHub name).")
    migrate_help = (
        f"Carry the roles (with their schemas) and Redis users (with their keys) that an "
        f"older gth-jupyter named (not one name per user) over to the current names, through "
        f"${ADMIN_URL_VAR} and/or ${ADMIN_REDIS_URL_VAR}. Name every user of the Hub: an old "
        f"role two of them shared is left alone, and naming one user alone carries such a "
        f"role over to that user. Prints what was done for each name."
    )
    migrate = db_commands.add_parser("migrate-roles", help=migrate_help, description=migrate_help)
    migrate.add_argument(
        "users",
        nargs="+",
        metavar="USER",
        help="Every JupyterHub user name; '-' reads more names from standard input, one a line.",
    )
    provenance_help = (
        "Print which cells of a notebook the agent wrote or edited (its metadata.gth): in "
        "which turn, by which tool and model, approved by whom, and whether a person changed "
        "them since."
    )
    provenance = commands.add_parser(
        "provenance", help=provenance_help, description=provenance_help
    )
    provenance.add_argument("notebook", metavar="NOTEBOOK.ipynb")
    provenance.add_argument("--json", action="store_true", help="One JSON object, for tools.")
    provenance.add_argument(
        "--strip",
        action="store_true",
        help="Remove that metadata from the file (before sharing it) and say how many cells.",
    )
    return parser


def _provision(user: str) -> int:
    admin = os.environ.get(ADMIN_URL_VAR)
    admin_redis = os.environ.get(ADMIN_REDIS_URL_VAR)
    if not admin and not admin_redis:
        print(
            f"gth-jupyter: set ${ADMIN_URL_VAR} to a superuser database URL (and "
            f"${ADMIN_REDIS_URL_VAR} to a Redis URL allowed to run ACL SETUSER).",
            file=sys.stderr,
        )
        return 2
    if admin:
        from ..store.postgres_env import postgres_missing

        missing = postgres_missing()
        if missing is not None:
            print(f"gth-jupyter: {missing}", file=sys.stderr)
            return 2
        from ..store.provision import RoleTakenError, provision_user

        try:
            print(asyncio.run(provision_user(admin, user)), flush=True)
        except RoleTakenError as exc:
            print(f"gth-jupyter: {exc.code}: {exc.message}", file=sys.stderr)
            return 1
    if admin_redis:
        from ..store.redis_users import provision_redis_user
        from ..store.roles import RoleTakenError

        try:
            url = asyncio.run(provision_redis_user(admin_redis, user))
        except ImportError as exc:
            print(f"gth-jupyter: {exc}", file=sys.stderr)
            return 2
        except RoleTakenError as exc:
            print(f"gth-jupyter: {exc.code}: {exc.message}", file=sys.stderr)
            return 1
        print(url, flush=True)
    return 0


def _migrate_roles(names: Sequence[str]) -> int:
    """``db migrate-roles``: exit 0 where nothing was refused or left alone, else 1."""
    admin = os.environ.get(ADMIN_URL_VAR)
    admin_redis = os.environ.get(ADMIN_REDIS_URL_VAR)
    if not admin and not admin_redis:
        print(f"gth-jupyter: set ${ADMIN_URL_VAR} and/or ${ADMIN_REDIS_URL_VAR}.", file=sys.stderr)
        return 2
    users: list[str] = []
    for name in names:
        if name == "-":
            users += [line.rstrip("\r\n") for line in sys.stdin if line.rstrip("\r\n")]
        else:
            users.append(name)
    reports: list[tuple[str, dict[str, str]]] = []
    if admin:
        from ..store.postgres_env import postgres_missing

        missing = postgres_missing()
        if missing is not None:
            print(f"gth-jupyter: {missing}", file=sys.stderr)
            return 2
        from ..store.provision import carry_over_roles

        reports.append(("database", asyncio.run(carry_over_roles(admin, users))))
    if admin_redis:
        from ..store.redis_users import carry_over_redis_users

        try:
            reports.append(("redis", asyncio.run(carry_over_redis_users(admin_redis, users))))
        except ImportError as exc:
            print(f"gth-jupyter: {exc}", file=sys.stderr)
            return 2
    failed = False
    for where, report in reports:
        for name, outcome in report.items():
            failed |= outcome.startswith(("refused", "left alone"))
            print(f"{json.dumps(name)} {where}: {outcome}", flush=True)
    return 1 if failed else 0


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token(args: argparse.Namespace) -> tuple[str, bool]:
    """The token and whether it was generated; raises :class:`TokenError` for a bad one."""
    if args.token_file and args.token:
        raise TokenError("Give either --token-file or --token, not both.")
    env_token = take_env_token()
    if args.token_file:
        return read_token_file(token_file_path(args.token_file)), False
    if args.token is not None:
        return check_token(args.token, "--token"), False
    if env_token is not None:
        return check_token(env_token, f"${ENV_VAR}"), False
    return secrets.token_urlsafe(24), True


def _checkpointer(args: argparse.Namespace, urls: ServiceUrls) -> str:
    """The checkpointer kind; raises :class:`ValueError` for a choice that cannot work."""
    from ..store.postgres_env import postgres_missing

    if args.memory and args.checkpointer not in (None, "memory"):
        raise ValueError(f"--memory contradicts --checkpointer {args.checkpointer}.")
    kind: str = "memory" if args.memory else (args.checkpointer or "sqlite")
    if args.run_lease_seconds is not None and args.run_lease_seconds < 1:
        raise ValueError("--run-lease-seconds must be at least 1.")
    if kind == "postgres":
        missing = postgres_missing()
        if missing is not None:
            raise ValueError(missing)
        if not urls.database:
            raise ValueError(f"--checkpointer postgres needs ${DATABASE_URL_VAR}.")
    return kind


async def serve(
    args: argparse.Namespace, token: str, generated: bool, urls: ServiceUrls | None = None
) -> int:
    # Imported here, not at the top: the checks in main() run before these ~1.5 s of imports.
    import gc
    import signal

    from ..agent.registry import AgentRegistry
    from ..config.errors import ConfigError
    from ..config.loader import load_config
    from ..runs.journals import make_journals
    from ..store.checkpoint import CheckpointStore
    from ..store.postgres_env import ServiceUrls
    from .identity import server_owner
    from .standalone import make_app

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"gth-jupyter: {exc}", file=sys.stderr)
        return 2
    urls = urls or ServiceUrls(None, None)
    try:
        kind = _checkpointer(args, urls)
    except ValueError as exc:
        print(f"gth-jupyter: {exc}", file=sys.stderr)
        return 2
    lease = args.run_lease_seconds or config.run_lease_seconds
    store = CheckpointStore(kind, args.checkpoint_path, url=urls.database, lease_seconds=lease)
    registry = AgentRegistry(config, command=args.config_command, store=store, kernels=False)
    if registry.build_error is not None:
        print(f"gth-jupyter: {registry.build_error}", file=sys.stderr)
        return 2
    effective = registry.effective
    port = args.port if args.port is not None else effective.port
    journals = make_journals(
        urls.redis,
        server_owner(),
        budget_bytes=args.journal_budget_bytes,
        user_budget_bytes=args.journal_user_budget_bytes,
    )
    app = make_app(
        registry,
        token=token,
        max_body_bytes=effective.max_body_bytes,
        check_host=not args.allow_remote,
        journals=journals,
    )
    server = app.listen(port, address=args.host)
    info = registry.info()
    print(
        f"gth-jupyter AG-UI server on http://{args.host}:{port} "
        f"(model: {info['model']}, provider: {info['provider']})",
        flush=True,
    )
    if generated:
        print(f"Token: {token}", flush=True)
    if not _is_loopback(args.host):
        print("Warning: listening beyond loopback; anyone with the token can run tools.")
    # Everything imported so far lives as long as the server: keep it out of the collector's
    # full passes, which otherwise cost ~100 ms per long streamed answer.
    gc.collect()
    gc.freeze()
    # Many concurrent runs build a large young heap of their own, and the default thresholds
    # then run a full collection (20-230 ms, freeing next to nothing) every few seconds: a tenth
    # as many full passes cut the server's CPU by ~25% at 200 concurrent streams
    # (bench/load.py). Young cycles are still collected as often as before.
    gc.set_threshold(700, 10, 100)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.stop()
    await journals.close()
    await registry.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.subcommand == "provenance":
        from .provenance_cli import provenance

        return provenance(args.notebook, as_json=args.json, strip=args.strip)
    if args.subcommand == "db":
        if args.db_command == "migrate-roles":
            return _migrate_roles(args.users)
        return _provision(args.user)
    if args.subcommand != "serve":
        return 2  # pragma: no cover - argparse enforces the subcommand
    # First of all: the environment this process started with may already hold the token, and
    # an exec (below) makes the new image dumpable again, so it runs this line anew.
    make_non_dumpable()
    if not _is_loopback(args.host) and not args.allow_remote:
        print(
            f"gth-jupyter: --host {args.host} listens beyond loopback, where anyone who can "
            "reach the port and learns the token runs the agent's tools (shell, files) as you, "
            "and plain HTTP carries the token unencrypted. Pass --allow-remote if you mean it "
            "(ideally behind a TLS reverse proxy).",
            file=sys.stderr,
        )
        return 2
    try:
        token, generated = _token(args)
    except TokenError as exc:
        print(f"gth-jupyter: {exc}", file=sys.stderr)
        return 2
    if args.token is not None and token_in_command_line(args.token):
        reexec_without_token(token)  # returns only where it cannot, after a warning
    # After the re-exec (whose new image inherits os.environ): out of the environment of every
    # child (shell tools, MCP servers), and the process is already non-dumpable.
    from ..store.postgres_env import take_service_urls

    urls = take_service_urls()
    return asyncio.run(serve(args, token, generated, urls))


if __name__ == "__main__":
    sys.exit(main())
