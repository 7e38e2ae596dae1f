# gth-jupyter on JupyterHub: a sample jupyterhub_config.py (see README.md, "JupyterHub
# deployment"). The single-user image has `pip install 'gth-jupyter[hub,anthropic]'`; the
# extension enables itself. Adapt the spawner and the places secrets come from to your Hub.
#
# The Hub's environment (never a user server's):
#   GTH_JUPYTER_ADMIN_DATABASE_URL  a PostgreSQL superuser URL, used only to provision users
#   GTH_JUPYTER_REDIS_URL           the Redis the servers share for run journals
import os
from pathlib import Path

from gth_jupyter.store.provision import provision_user

c = get_config()  # noqa: F821

ADMIN_URL = os.environ["GTH_JUPYTER_ADMIN_DATABASE_URL"]
# One file per user, readable by the Hub alone (a secret store serves as well).
PROVIDER_KEYS = Path("/srv/jupyterhub/provider-keys")


async def gth_database(spawner):
    """Before each spawn: the user's own role and schema (a fresh password every time), and
    that role's URL for this server only. The server removes it from the environment its
    kernels inherit and makes itself non-dumpable."""
    url = await provision_user(ADMIN_URL, spawner.user.name)
    spawner.environment = {**spawner.environment, "GTH_JUPYTER_DATABASE_URL": url}


def anthropic_key(spawner):
    """The user's own provider key: the user's kernels may see it, it is theirs."""
    path = PROVIDER_KEYS / spawner.user.name
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


c.Spawner.pre_spawn_hook = gth_database
c.Spawner.args = [
    "--GthJupyterApp.checkpointer=postgres",
    # May read (never run) every user's threads on the servers they can reach.
    "--GthJupyterApp.admin_users=ops",
]
c.Spawner.environment = {
    "GTH_JUPYTER_REDIS_URL": os.environ["GTH_JUPYTER_REDIS_URL"],
    "ANTHROPIC_API_KEY": anthropic_key,
}

# JupyterHub 5+ sharing: each user may share their own servers with users they name
# (POST /hub/api/shares/{owner}/{server} with {"user": "..."}). A visitor on a shared server
# sees none of the owner's threads, and the owner none of the visitor's.
c.JupyterHub.load_roles = [
    {"name": "user", "scopes": ["self", "shares!user", "read:users:name"]},
]
