"""ngshare 0.6.0 (nbgrader's exchange as a JupyterHub service) as the course hub runs it:
``python -m decodelab.classroom.ngshare_service [ngshare's options]`` (the ``command`` of the hub's
``ngshare`` service, :func:`decodelab.classroom.exchange.hub_services`).

Two adaptations, nothing else of ngshare changes (same options, same API, same database):

- **SQLAlchemy 2.** ngshare 0.6.0 (its latest release, 2022-12) builds its rows through back
  references (``Assignment(name, course)``, ``Submission(user, assignment)``); SQLAlchemy 2 no longer
  adds an object to the session through a back reference (``cascade_backrefs`` is gone), so a
  released assignment or a submission was silently never stored ("Object of type <Assignment> not
  in session" warnings; ``/assignments`` stayed empty). :func:`adopt_backref_objects` puts an
  object related to one in a session into that session, as SQLAlchemy 1.x did.
- **Loopback.** ngshare listens on all interfaces ("for the proxy"); here it listens on the host
  of its service URL (127.0.0.1), so only the hub's proxy reaches it. Every request is still
  checked against the hub (the token's owner is the user).
"""

from __future__ import annotations

import sys

__all__ = ["adopt_backref_objects", "main"]


def _adopt(target, value, *_args) -> None:
    """Relating a new object to one in a session puts it into that session (either side)."""
    from sqlalchemy.orm import object_session

    if value is None:
        return
    here, there = object_session(target), object_session(value)
    if here is None and there is not None:
        there.add(target)
    elif there is None and here is not None:
        here.add(value)


def adopt_backref_objects(base) -> None:
    """Give every relationship of the declarative ``base``'s classes SQLAlchemy 1.x's
    ``cascade_backrefs``: an object set or appended on either side of a relationship with an object
    that is in a session joins that session (:func:`_adopt`)."""
    from sqlalchemy import event

    for mapper in base.registry.mappers:
        for rel in mapper.relationships:
            attr = getattr(mapper.class_, rel.key)
            event.listen(attr, "append" if rel.uselist else "set", _adopt)


def _listen_on_loopback(ngshare_module) -> None:
    """ngshare's HTTP server binds the host of ``$JUPYTERHUB_SERVICE_URL`` instead of 0.0.0.0."""
    import os
    from urllib.parse import urlparse

    base = ngshare_module.HTTPServer
    host = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "")).hostname or "127.0.0.1"

    class LoopbackHTTPServer(base):
        def listen(self, port, address=None, **kwargs):  # noqa: ARG002 (ngshare passes '0.0.0.0')
            return super().listen(port, host, **kwargs)

    ngshare_module.HTTPServer = LoopbackHTTPServer


def main(argv: list[str] | None = None) -> None:
    from .pins import require

    require("ngshare")  # the two adaptations fit 0.6.0 (lecturer/patches.md)
    require("SQLAlchemy")
    from ngshare import ngshare as ngshare_module
    from ngshare.database.database import Base

    adopt_backref_objects(Base)
    _listen_on_loopback(ngshare_module)
    ngshare_module.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
