"""Run a step that needs torch in a child process, so the build's own process never holds it.

torch, transformers and sentence-transformers take ~480 MB once imported, and embedding
leaves more behind (oneDNN's kernels, the allocator's arenas) that dropping the model does
not give back. A build that embeds in its own process carries all of it through the topic
fits, next to a worker process per core (consensus.py): on ICML 2013-2019 the build's
process held ~1,000 MB during the fits with it, ~840 MB without. So the encoder probe
(encoder_choice.decide), the embedding and the query encoder's export run in a forked
child, which writes what it computes to the cache (embeddings, the ONNX export) and sends
back only a small result; this process reads the cache afterwards, as after any build.

Forking copies nothing up front (the corpus's pages are shared until written), and is safe
here because the child is forked before this process has imported torch (whose OpenMP
thread pool does not survive a fork) or Ray (whose gRPC threads can leave a forked child
waiting forever on a lock: `--engine ray` builds hung so, now and then). Where either is
already imported (a test that loaded the model, a reused run's export, a Ray build) or the
platform cannot fork, the step runs in this process instead: the same code, the same results.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import TypeVar

from explorer.errors import ExplorerError

T = TypeVar("T")
# Modules whose threads make a fork of this process unsafe once imported.
FORK_UNSAFE = ("torch", "ray")


def in_child(function: Callable[..., T], *args: object) -> T:
    """`function(*args)` in a forked child when this process has imported none of
    FORK_UNSAFE, else here. Its result comes back (it must pickle); an ExplorerError it raises is raised here
    with the same message; a child that dies says how."""
    if any(name in sys.modules for name in FORK_UNSAFE) or not hasattr(os, "fork"):
        return function(*args)
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, function, args), daemon=True)
    child.start()
    send.close()
    try:
        status, value = receive.recv()
    except EOFError:  # killed (out of memory, a signal) before it could answer
        status, value = "died", None
    except BaseException:  # an interrupt here: the child goes too
        child.terminate()
        child.join()
        raise
    finally:
        receive.close()
    child.join()
    if status == "died":
        raise ExplorerError(
            f"the embedding process ended without a result (exit code {child.exitcode})"
        )
    if status == "ok":
        return value
    if status == "explorer":
        raise value
    raise RuntimeError(f"the embedding process failed:\n{value}")


def _child(send, function: Callable, args: tuple) -> None:
    """The child's whole life: run, send ("ok", result) or why not, leave without cleanup
    of the parent's state (os._exit: no atexit handlers, no flushing of inherited files)."""
    code = 0
    try:
        message = ("ok", function(*args))
    except (ExplorerError, OSError) as exc:  # one-line errors: raised again as they came
        message, code = ("explorer", exc), 2
    except BaseException:  # a bug or an interrupt: its traceback, for the parent to raise
        message, code = ("crash", traceback.format_exc()), 1
    try:
        send.send(message)
    except Exception:  # an exception that does not pickle: its text, as an ExplorerError
        send.send(("explorer", ExplorerError(str(message[1]))))
    finally:
        send.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
