"""The demo mode's spawner: every demo student's server as one unprivileged system user.

JupyterHub's ``SimpleLocalProcessSpawner`` runs each server as the hub's own user: a hub started
as root (as a class-mode hub must be) then ran the demo students' kernels as uid 0, and a student
could read the hub's environment (the lecturer's password), its database and its cookie secret.
:class:`DemoSpawner` keeps that spawner's per-student homes (``home_dir_template``) but starts
every server as the system user :attr:`DemoSpawner.system_user` (``decodelab-demo``: no login
shell, no password, created by the hub's pre-spawn hook, :func:`decodelab.classroom.hub.pre_spawn_hook`),
never as the hub's user. So a demo student's processes can read neither the hub's
``/proc/<pid>/environ`` nor its memory nor the course folder (mode 0700, the hub's), and a
single-user server never runs as root. The demo students still share that one system user with
each other (lecturer/classroom.md, "데모 모드").

Needs a hub running as root (it must switch users); the demo's ``jupyterhub_config.py`` refuses to
start otherwise (:func:`decodelab.classroom.hub.require_root_for_demo`).
"""

from __future__ import annotations

import os

from jupyterhub.spawner import SimpleLocalProcessSpawner, set_user_setuid
from traitlets import Unicode

__all__ = ["DEMO_USER", "DemoSpawner"]

#: the system user every demo student's server runs as
DEMO_USER = "decodelab-demo"


class DemoSpawner(SimpleLocalProcessSpawner):
    """``SimpleLocalProcessSpawner`` (one home per student from ``home_dir_template``) whose
    servers run as :attr:`system_user`, never as the hub's user."""

    system_user = Unicode(DEMO_USER, config=True,
                          help="The unprivileged system user every demo student's server runs as.")

    def make_preexec_fn(self, name):
        """setgid/setgroups/setuid to :attr:`system_user` (JupyterHub's ``set_user_setuid``), then
        change into the student's home (made by the pre-spawn hook, owned by that user)."""
        become = set_user_setuid(self.system_user, chdir=False)
        home = self.home_dir

        def preexec() -> None:
            become()
            os.chdir(home)

        return preexec

    def user_env(self, env: dict) -> dict:
        """``USER`` the hub login (what JupyterLab shows), ``HOME`` the student's home."""
        env["USER"] = self.user.name
        env["HOME"] = self.home_dir
        env["SHELL"] = "/bin/bash"
        return env
