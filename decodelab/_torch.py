"""Torch's intra-op thread count (the one helper that sets it and restores it), and the wait for
a device's queued work before a timer is read.

A tiny model's decode step is dominated by per-call overhead, and OpenMP threads waiting for
each other on a busy machine make single steps many times slower at random, so the course runs
its tiny models on one thread.
"""

from __future__ import annotations

import contextlib

from ._check import check

__all__ = ["set_threads", "synchronize", "threads"]


def set_threads(n: int, *, name: str = "threads") -> int:
    """``torch.set_num_threads(n)``; returns the previous count. ``name``: the argument's name in
    the error message.

    Raises:
        TypeError: ``n`` not an int. ValueError: ``n < 1``.
    """
    import torch

    n = check(name, n, "torch 스레드 수", low=1, integer=True, hint="작은 모델은 1이 가장 빠름")
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    return old


@contextlib.contextmanager
def threads(n: int | None, *, name: str = "threads"):
    """Run the ``with`` block with ``n`` torch threads, then restore the previous count;
    ``None`` leaves torch's setting alone. Raises as :func:`set_threads`."""
    import torch

    if n is None:
        yield
        return
    old = set_threads(n, name=name)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def synchronize(device) -> None:
    """Wait until ``device`` (a ``torch.device`` or its name) has finished the work queued on it.

    CUDA and MPS run kernels asynchronously: a timer read right after a forward pass on them
    measures only the launch, not the pass. On the CPU this does nothing.
    """
    import torch

    kind = torch.device(device).type
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
