"""The course for a class: JupyterHub (identity from the login) and nbgrader (graded assignments).

- :mod:`decodelab.classroom.hub`: ``jupyterhub_config.py`` for one server, demo mode, the hub wrapper.
- :mod:`decodelab.classroom.assignments`: nbgrader ``nbgrader_config.py`` and ``source/`` assignments
  built from the exam bank (``classroom/exam/`` of the repository, never in the package), and the
  ``variant`` command;
- :mod:`decodelab.classroom.bank`: loading the exam bank, a student's variant, the hidden tests'
  grading calls (lecturer's side: they refuse outside a course directory);
- :mod:`decodelab.classroom.student`: the student's side of an exam notebook (own numbers, answer widgets);
- :mod:`decodelab.classroom.review`: the autograde step that fills formgrader's review queue;
- :mod:`decodelab.classroom.lms`: Canvas / Moodle grade files from nbgrader's gradebook (``export``; nbgrader's ExportPlugin ``LmsExport``).
- :mod:`decodelab.classroom.polls`: the class poll, a hub service that collects the students' committed
  predictions; :mod:`decodelab.classroom.polls_view`: the lecturer's live widget of it.

The command is ``decodelab classroom init|hub|variant|export`` (:mod:`decodelab.classroom.cli`).
"""
