"""What each student sees: choices and ordering items in a per-student order, under positional labels.

No structural hint survives into the student's view:

- **Per-student order.** The widget shows the choices of a question (and the items of an ordering
  question) in an order drawn from ``sha256(shuffle key, question id)``: stable for that student
  (every reopening shows the same order) and different between students. The shuffle key is the
  student id the student gave (or, before the student ever entered one, a random key made once on
  that computer); it is saved in the answers folder and written into the submission file
  (``shuffle_key``), so the lecturer reproduces what a student saw with :func:`student_view`.
- **Positional labels.** The widget labels the shown options by position (``1``, ``2``, ... for
  choices; ``가``, ``나``, ... for ordering items), never with the ids of the quiz file, so a key
  letter ("always a") or an id order ("sort the ids") carries no information. What is saved and
  exported is still the id of the option (what the grader needs).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any, Sequence

from .schema import CHOICE_LABELS, ITEM_LABELS

__all__ = ["CHOICE_LABELS", "ITEM_LABELS", "choice_order", "labels_for", "student_view"]


def choice_order(question_id: str, shuffle_key: str, ids: Sequence[str]) -> list[str]:
    """The order in which a student with ``shuffle_key`` sees the options ``ids`` of a question.

    Deterministic: the same (question id, shuffle key, ids) always gives the same order, on every
    computer and Python version (seeded from SHA-256, shuffled with :class:`random.Random`).

    Args:
        question_id: e.g. ``"01-decode-definition"``.
        shuffle_key: the student's key (the submission's ``shuffle_key``; for a submission without
            one, its ``student_id``).
        ids: the option ids in file order.

    Returns:
        The ids in the order shown (position 0 is labelled ``1`` / ``가``).
    """
    digest = hashlib.sha256(f"decodelab-order\0{shuffle_key}\0{question_id}".encode()).digest()
    out = list(ids)
    random.Random(int.from_bytes(digest[:16], "big")).shuffle(out)
    return out


def labels_for(question: Any, shuffle_key: str) -> dict[str, str]:
    """Option id -> the positional label the student saw (choices ``1``.., items ``가``..);
    ``{}`` for a question without options."""
    ids, labels = [o.id for o in question.options], question.option_labels
    return {oid: labels[k] for k, oid in enumerate(choice_order(question.id, shuffle_key, ids))}


def student_view(question: Any, shuffle_key: str) -> list[tuple[str, str, str]]:
    """What a student saw of a question's options, for the lecturer: ``(label, id, text)`` in the
    shown order (``[]`` for short and numeric questions).

    Works on keyed questions and on what the widget shows of them (``decodelab quiz view QID KEY``
    prints it).

    Example::

        >>> from decodelab.assess.quiz import get_question, student_view
        >>> student_view(get_question("01-decode-definition"), "2026-12345")  # doctest: +SKIP
        [('1', 'c', '...'), ('2', 'a', '...'), ('3', 'd', '...'), ('4', 'b', '...')]
    """
    opts, labels = question.options, question.option_labels
    text = {o.id: o.text for o in opts}
    order = choice_order(question.id, shuffle_key, [o.id for o in opts])
    return [(labels[k], oid, text[oid]) for k, oid in enumerate(order)]
