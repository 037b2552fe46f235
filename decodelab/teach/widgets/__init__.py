"""ipywidgets views over the decodelab modules (views only: the logic lives in the modules).

Each view is its own module, e.g. :mod:`decodelab.teach.widgets.latency` (``latency_explorer``).
"""
