"""Active-learning exercises in the notebooks: predict then run, written answers, change-the-code tasks.

Notebook API (``from decodelab.assess import exercises as ex``)::

    ex.predict("01-predict-kv-step")             # question + input + '예측 확정' (before the measuring cell)
    ex.hold("01-predict-kv-step")                # first line of the measuring cell: what it prints is held back
    ex.reveal("01-predict-kv-step", measured_ms) # last line: the value (and the held lines) open once the
                                                 # prediction is committed or the student presses '예측 없이 보기'
    ex.written("01-written-decode-definition")   # text box + '제출'; then the model answer and the rubric
    ok = ex.check("04-task-low-acceptance", rate) # goal reached? shows the success text or the hint

Each call displays its widget itself (``IPython.display.display``; ipywidgets 8, no custom JS) and
returns ``None`` (``check`` returns the bool). A measured value is never shown before the student has
committed a prediction or chosen to skip it (:class:`RevealView`), so running every cell first (Run
All) loses no prediction. Everything is saved at once in the student's answers
folder, next to the quiz answers (:class:`decodelab.assess.quiz.store.AnswerStore`, quiz set ``course``,
``$DECODELAB_ANSWERS_DIR`` or ``~/.decodelab/answers``), so it survives a kernel restart, and goes into
the quiz widget's submission file (``exercises``); on a JupyterHub each record carries the student's
hub login (``$JUPYTERHUB_USER``, see :func:`decodelab.assess.quiz.store.hub_user`), never a typed
id. The practice report (``decodelab grade``) shows predictions next to the revealed values,
written answers as text (never scored) and task results.

Definitions live in ``quizzes/exercises/NN.yaml`` (NN = 01..07; the quiz folder is found as in
:func:`decodelab.assess.quiz.loading.quizzes_dir`)::

    notebook: "01"
    predictions:
      - id: 01-predict-kv-step      # NN-lowercase-words, unique across all quiz and exercise files
        prompt: "..."               # asked BEFORE the measuring cell runs
        kind: number                # number | choice
        unit: "ms"                  # number only (shown next to the input and the values)
        choices:                    # choice only, >= 2
          - {id: a, text: "..."}
        why: "..."                  # one line shown at the reveal
    written:
      - id: 01-written-decode-definition
        prompt: "..."
        rubric: ["...", "..."]      # >= 2 points a full answer mentions
        model_answer: "..."
    tasks:
      - id: 04-task-low-acceptance
        goal: "..."                 # what to achieve, not how
        check: {op: "<", value: 0.3} # <, <=, >, >=, ==, !=, between ([lo, hi], inclusive), in ([...])
        success: "..."
        hint: "..."                 # never gives the solution away

Every problem of a definition file is reported at once, in Korean, naming the file, the id and the
field (:class:`ExerciseError`).

Two modules: :mod:`.schema` (the definitions, loading, reading a typed number, a task's check; no
widgets) and :mod:`.views` (what the notebooks display and save). This package re-exports both.
"""

from __future__ import annotations

from .schema import (COUNTERS, OPS, ExerciseError, ExerciseFile, Prediction, Task, TaskCheck, Written, evaluate,
                     exercise_kind, exercises_dir, get_exercise, load_exercise_file, load_exercises, parse_number)
from .views import (PredictView, RevealView, WrittenView, check, check_record, hold, predict, reveal, reveal_record,
                    written)

__all__ = [
    "ExerciseError",
    "ExerciseFile",
    "OPS",
    "PredictView",
    "Prediction",
    "RevealView",
    "Task",
    "TaskCheck",
    "Written",
    "WrittenView",
    "check",
    "check_record",
    "evaluate",
    "exercise_kind",
    "exercises_dir",
    "get_exercise",
    "hold",
    "load_exercise_file",
    "load_exercises",
    "parse_number",
    "COUNTERS",
    "predict",
    "reveal",
    "reveal_record",
    "written",
]
