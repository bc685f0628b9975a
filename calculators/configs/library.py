"""Asking the real libraries (DeepSpeed, Transformers, Accelerate) for their verdict on a config.

Why: hand-written key tables and rules cannot keep up with upstream (issue #13). The
libraries' own config code is pure Python and runs here without a GPU, so the doctor
calls it and quotes what it raises. This module holds what the per-format adapters
share:

* :class:`LibraryVerdict` - what one library path said (passed, or the exception
  type and its exact text), and which versions said it;
* :func:`load` - a lazy, bounded import (never at ``import calculators`` time; a
  library that is missing, fails, or takes too long to import degrades to our own
  checks with a visible note, never a traceback);
* :data:`LOCK` - the library calls patch process-wide state (DeepSpeed's rank /
  world-size lookup, Accelerate's environment variables, transformers' global
  DeepSpeed config weakref), so they run one at a time.

No process group is started and no op is built.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import io
import logging
import os
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

LOCK = threading.RLock()
IMPORT_TIMEOUT_S = 60.0
MAX_MESSAGE = 2_000

_imported: dict[str, Any] = {}
_failed: dict[str, str] = {}
_import_lock = threading.Lock()


class LibraryVerdict(BaseModel):
    """One library path's verdict on a config at one data-parallel world size."""

    available: bool = Field(description="False when a library could not be imported: no verdict, our checks only.")
    passed: bool = False
    path: str = Field("", description="What was run, e.g. 'deepspeed.runtime.config.DeepSpeedConfig'.")
    step: str = Field("", description="The call on that path that raised (empty when it passed).")
    world_size: int = 1
    exception: str = Field("", description="The exception's class name, e.g. 'AssertionError'.")
    message: str = Field("", description="The exception's exact text (clipped to 2,000 characters).")
    versions: dict[str, str] = Field(default_factory=dict, description="Library name → installed version.")
    note_en: str = ""
    note_zh: str = ""
    filled: dict[str, Any] | None = Field(None, description="The DeepSpeed config as it reached DeepSpeedConfig.")

    @property
    def failed(self) -> bool:
        return self.available and not self.passed

    def versions_text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.versions.items()))


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load(module: str) -> Any | None:
    """Import ``module`` once, in a worker thread bounded by :data:`IMPORT_TIMEOUT_S`; None when it fails."""
    with _import_lock:
        if module in _imported:
            return _imported[module]
        if module in _failed:
            return None
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                with quiet():
                    box["mod"] = importlib.import_module(module)
            except BaseException as exc:  # noqa: BLE001 - any import failure degrades to our own checks
                box["err"] = f"{type(exc).__name__}: {exc}"

        t = threading.Thread(target=work, name=f"import-{module}", daemon=True)
        t.start()
        t.join(IMPORT_TIMEOUT_S)
        if "mod" in box:
            _imported[module] = box["mod"]
            return box["mod"]
        _failed[module] = box.get("err", f"import took longer than {IMPORT_TIMEOUT_S:.0f} s")
        return None


def loaded(module: str) -> Any:
    """The module :func:`load` already imported; callers check ``load(module) is not None`` first."""
    mod = load(module)
    if mod is None:
        raise ImportError(f"{module} is not available: {import_error(module)}")
    return mod


def import_error(module: str) -> str:
    return _failed.get(module, "")


def unavailable(module: str, path: str, world_size: int) -> LibraryVerdict:
    """The verdict when ``module`` cannot be imported: our own checks only, said visibly."""
    why = import_error(module) or "not installed"
    dist = module.split(".")[0]
    return LibraryVerdict(
        available=False,
        path=path,
        world_size=world_size,
        versions={dist: version(dist)},
        note_en=f"{dist} could not be loaded here ({why[:200]}), so this verdict comes from our own checks only, "
        "not from the library itself.",
        note_zh=f"此处无法加载 {dist}（{why[:200]}），因此结论只来自本工具自己的检查，而不是该库本身。",
    )


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence the libraries' prints, warnings and log lines while they judge a config."""
    sink = io.StringIO()
    loggers = [logging.getLogger(n) for n in ("DeepSpeed", "deepspeed", "accelerate", "transformers")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, lvl in zip(loggers, levels, strict=True):
            lg.setLevel(lvl)


@contextlib.contextmanager
def environment(values: dict[str, str], clear_prefix: str = "ACCELERATE_") -> Iterator[None]:
    """Set ``values`` (and drop other ``clear_prefix`` variables) in os.environ; hold :data:`LOCK` around it."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(clear_prefix) or k in values}
    try:
        for k in list(os.environ):
            if k.startswith(clear_prefix):
                del os.environ[k]
        os.environ.update(values)
        yield
    finally:
        for k in list(os.environ):
            if k.startswith(clear_prefix) or k in values:
                del os.environ[k]
        os.environ.update(saved)


class _RankZeroOf:
    """Stands in for ``deepspeed.comm`` inside DeepSpeedConfig: rank 0 of ``world_size``, no process group."""

    def __init__(self, world_size: int) -> None:
        self.world_size = world_size

    def get_rank(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def get_world_size(self, *args: Any, **kwargs: Any) -> int:
        return self.world_size


def deepspeed_config(config: dict[str, Any], world_size: int) -> Any:
    """``DeepSpeedConfig(config)`` as rank 0 of ``world_size`` data-parallel ranks (caller holds :data:`LOCK`).

    Passing an ``mpu`` is not enough: DeepSpeedConfig calls ``dist.get_rank()`` first and,
    without a process group, silently falls back to world size 1. So the module's
    ``dist`` is replaced for the duration of the call.
    """
    cfgmod = _imported["deepspeed.runtime.config"]
    old = cfgmod.dist
    cfgmod.dist = _RankZeroOf(world_size)
    try:
        return cfgmod.DeepSpeedConfig(config)
    finally:
        cfgmod.dist = old


_OUR_DIR = os.path.dirname(os.path.abspath(__file__))


def raised_by_library(exc: BaseException) -> bool:
    """True when the innermost frame of ``exc`` is outside this package: a library's verdict, not our bug."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is None or not os.path.abspath(last.tb_frame.f_code.co_filename).startswith(_OUR_DIR)


class MirroredError(Exception):
    """Raised by :func:`mirrored`: a library line we repeat (it cannot be called alone) raised ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def mirrored(compute: Any) -> Any:
    """Run one line repeated verbatim from a library (e.g. accelerate's ``micro * GA * num_processes``);
    what it raises is that library's verdict, not our bug."""
    try:
        return compute()
    except Exception as exc:  # noqa: BLE001
        raise MirroredError(exc) from None


def failure(exc: BaseException, **kw: Any) -> LibraryVerdict:
    """A verdict from an exception a library raised: its class name and exact text.

    An exception raised by our own adapter code is re-raised instead, so that a bug here
    is never reported as the library's verdict.
    """
    if isinstance(exc, MirroredError):
        exc = exc.cause
    elif not raised_by_library(exc):
        raise exc
    text = str(exc)
    if type(exc).__name__ == "ValidationError":  # pydantic: drop the trailing "For further information" URLs
        text = "\n".join(ln for ln in text.splitlines() if "errors.pydantic.dev" not in ln)
    if isinstance(exc, KeyError) and exc.args:
        text = repr(exc.args[0])
    return LibraryVerdict(available=True, passed=False, exception=type(exc).__name__, message=text[:MAX_MESSAGE], **kw)
