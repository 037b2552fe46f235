"""The course for a class: JupyterHub (identity from the login) and nbgrader (graded assignments).

- :mod:`decodelab.classroom.hub`: ``jupyterhub_config.py`` for one server, demo mode, the hub wrapper.
- :mod:`decodelab.classroom.assignments`: nbgrader ``source/`` assignments built from the course,
  the exam bank and its per-student (parametric) items, the LMS export.

The command is ``decodelab classroom init|hub|variant|export`` (:mod:`decodelab.classroom.cli`).
"""
