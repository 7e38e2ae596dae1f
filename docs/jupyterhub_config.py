# gth-jupyter on JupyterHub: a sample jupyterhub_config.py (see docs/deployment.md, "JupyterHub
# deployment"). The single-user image has `pip install 'gth-jupyter[hub,anthropic]'`; the
# extension enables itself. Adapt the spawner and the places secrets come from to your Hub.
#
# The Hub's environment (never a user server's):
#   GTH_JUPYTER_ADMIN_DATABASE_URL  a PostgreSQL superuser URL, used only to provision users
#   GTH_JUPYTER_ADMIN_REDIS_URL     a URL of the Redis the servers share for run journals, as a
#                                   Redis user allowed ACL SETUSER, used only to provision users
#
# That Redis must not be open to everyone: its `default` user off (`user default off` in
# redis.conf or its ACL file) or password-protected (`requirepass`). Each server gets a Redis
# user that may touch only its own user's keys (gth:{<role>}:*) with the journal's commands.
import os
from pathlib import Path

from gth_jupyter.store.provision import provision_user
from gth_jupyter.store.redis_users import provision_redis_user

c = get_config()  # noqa: F821

ADMIN_URL = os.environ["GTH_JUPYTER_ADMIN_DATABASE_URL"]
ADMIN_REDIS_URL = os.environ["GTH_JUPYTER_ADMIN_REDIS_URL"]
# One file per user, readable by the Hub alone (a secret store serves as well).
PROVIDER_KEYS = Path("/srv/jupyterhub/provider-keys")


async def gth_services(spawner):
    """Before each spawn: the user's own database role and schema and their own Redis user
    (fresh passwords every time), and those two URLs for this server only. The server removes
    them from the environment its kernels inherit and makes itself non-dumpable; a user who
    reads them anyway (their own jupyter_server_config.py runs first) holds only their own."""
    name = spawner.user.name
    spawner.environment = {
        **spawner.environment,
        "GTH_JUPYTER_DATABASE_URL": await provision_user(ADMIN_URL, name),
        "GTH_JUPYTER_REDIS_URL": await provision_redis_user(ADMIN_REDIS_URL, name),
    }


def anthropic_key(spawner):
    """The user's own provider key: the user's kernels may see it, it is theirs."""
    path = PROVIDER_KEYS / spawner.user.name
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


c.Spawner.pre_spawn_hook = gth_services
c.Spawner.args = [
    "--GthJupyterApp.checkpointer=postgres",
    # May read (never run) every user's threads on the servers they can reach.
    "--GthJupyterApp.admin_users=ops",
]
c.Spawner.environment = {
    # No shared GTH_JUPYTER_REDIS_URL here: the hook gives each server its own.
    "ANTHROPIC_API_KEY": anthropic_key,
}

# JupyterHub 5+ sharing: each user may share their own servers with users they name
# (POST /hub/api/shares/{owner}/{server} with {"user": "..."}). A visitor on a shared server
# sees none of the owner's threads, and the owner none of the visitor's.
c.JupyterHub.load_roles = [
    {"name": "user", "scopes": ["self", "shares!user", "read:users:name"]},
]
