"""Writing files: the one atomic replace (temporary file + rename), write-if-changed, and durable append; and
where dashgen keeps what it caches between runs (:func:`cache_dir`).

Every file dashgen writes (dashboards, rule files, release backups, the ledger, the release lock) goes
through here, so the guarantees are stated once: a reader sees the old bytes or the new ones, never a
mix, and with ``fsync=True`` the bytes are on disk before the call returns. Temporary files have a
unique name (``.<name>.<pid>.<random>.tmp``), so two writers of one path never share one, and a failed
write removes its own temporary file and nobody else's.

Every file dashgen reads that a person named (a profile, a dashboard, a contexts file, a bundle, the ledger)
is read through :func:`read_regular_bytes` / :func:`read_regular_text`: a device or folder is refused before
the first read; a pipe (a FIFO, or bash's ``<(git show HEAD:file)``) is read, and never blocks for ever: one
with no writer reads as empty, which is an error naming it, and one whose writer does not finish within
:data:`PIPE_WAIT_SECONDS` is an error naming it too. The TOML or JSON such a file holds is parsed by
:mod:`dashgen.files.parsers`, where nesting too deep to read is one more ``ValueError``.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import select
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dashgen.files.parsers import parse_json

PIPE_WAIT_SECONDS = 60.0  # how long a pipe's writer may take to finish (``<(git show ...)`` takes well under one)
PIPE_BYTE_LIMIT = 256 << 20  # bytes read from a pipe at most (``<(yes)`` would otherwise fill the memory)


class NotARegularFile(OSError):
    """The path to be replaced is a symlink, FIFO, device or folder: replacing it by a regular file would destroy
    what it is (``/dev/stdout`` turned into a file, a symlink's target left stale), so it is refused; or the path
    to be read is a device or folder, whose read could block forever or never end."""


class UnreadablePipe(OSError):
    """The pipe to be read gave nothing (no writer, or a writer that wrote nothing), did not end within
    :data:`PIPE_WAIT_SECONDS`, or gave more than :data:`PIPE_BYTE_LIMIT` bytes."""


def _kind(mode: int) -> str:
    """What a file of ``mode`` is, for a message: ``a FIFO``, ``a folder``, ..."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def refuse_special(path: Path) -> None:
    """Raise :class:`NotARegularFile` naming ``path`` when it exists and is not a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotARegularFile(
            errno.EEXIST,
            f"is {_kind(mode)}, not a regular file: dashgen writes regular files only "
            "(use - for standard output where the option allows it)",
            str(path),
        )


def _open_readable(path: str | os.PathLike[str]) -> tuple[int, bool]:
    """A descriptor of the regular file or pipe at ``path`` (symlinks followed) and whether it is a pipe; a
    device or folder raises :class:`NotARegularFile`.

    Opened non-blocking and checked on the descriptor itself: a plain open of a FIFO waits for a writer that
    may never come, and a check of the path before the open could be raced by a rename. A regular file's
    descriptor is made blocking again; a pipe's stays non-blocking, for :func:`_read_pipe`'s bounded wait.
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISFIFO(mode):
            return descriptor, True
        if not stat.S_ISREG(mode):
            raise NotARegularFile(
                errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                f"is {_kind(mode)}, not a regular file or pipe: dashgen reads regular files and pipes only",
                os.fspath(path),
            )
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, False


def _read_pipe(descriptor: int, path: str | os.PathLike[str], limit: int) -> bytes:
    """All a non-blocking pipe gives until its writer closes it, waiting at most :data:`PIPE_WAIT_SECONDS` in
    all and taking at most ``limit`` bytes; nothing at all (a FIFO nobody writes to reads as at its end at once)
    raises :class:`UnreadablePipe`."""
    deadline = time.monotonic() + PIPE_WAIT_SECONDS
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            chunk = os.read(descriptor, 1 << 16)
        except BlockingIOError:  # a writer, nothing written yet: wait for bytes or the end, until the deadline
            left = deadline - time.monotonic()
            if left <= 0:
                raise UnreadablePipe(
                    errno.ETIMEDOUT,
                    f"a pipe whose writer did not finish within {PIPE_WAIT_SECONDS:g} seconds",
                    os.fspath(path),
                ) from None
            select.select([descriptor], [], [], left)
            continue
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise UnreadablePipe(errno.EFBIG, f"a pipe giving more than {limit} bytes", os.fspath(path))
        chunks.append(chunk)
    if not chunks:
        raise UnreadablePipe(
            errno.ENODATA, "a pipe that gave nothing (no writer, or one that wrote nothing)", os.fspath(path)
        )
    return b"".join(chunks)


def read_regular_bytes(path: str | os.PathLike[str], pipe_limit: int = PIPE_BYTE_LIMIT) -> bytes:
    """The bytes of the regular file or pipe at ``path``: a device or folder raises :class:`NotARegularFile`, a
    pipe that gives nothing, more than ``pipe_limit`` bytes (a reader whose files have a budget of their own passes
    it: a pipe's size is not known before it is read) or does not end in time :class:`UnreadablePipe`."""
    descriptor, pipe = _open_readable(path)
    if pipe:
        try:
            return _read_pipe(descriptor, path, pipe_limit)
        finally:
            os.close(descriptor)
    with open(descriptor, "rb") as handle:
        return handle.read()


def read_regular_text(path: str | os.PathLike[str], pipe_limit: int = PIPE_BYTE_LIMIT) -> str:
    """As ``Path.read_text(encoding="utf-8")`` (universal newlines) for a regular file or pipe only (see above)."""
    return io.TextIOWrapper(io.BytesIO(read_regular_bytes(path, pipe_limit)), encoding="utf-8").read()


def temporary_name(path: Path) -> Path:
    """A fresh temporary path beside ``path``: hidden, unique per process and call."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def atomic_write(path: Path, data: bytes, *, fsync: bool = False) -> None:
    """Replace ``path`` by ``data`` through a unique temporary file beside it and a rename (parents are created).

    With ``fsync``, the temporary file is fsynced before the rename and the directory after it, so a
    crash leaves either the old file or the complete new one.
    """
    refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(path)
    try:
        # O_EXCL: a name collision (never expected) fails instead of sharing a file with another writer
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if fsync:
        _fsync_directory(path.parent)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` only if it does not exist (fsynced); False when it already exists.

    The file appears complete or not at all: it is written under a temporary name and hard-linked into
    place, and the link fails when ``path`` exists.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        return False
    temporary = temporary_name(path)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
    finally:
        temporary.unlink(missing_ok=True)
    _fsync_directory(path.parent)
    return True


def write_if_changed(path: Path, data: bytes, *, fsync: bool = False) -> bool:
    """``atomic_write`` unless ``path`` already holds exactly ``data``; True when it wrote."""
    if path.is_file() and path.read_bytes() == data:
        return False
    atomic_write(path, data, fsync=fsync)
    return True


def write_files_if_changed(files: Iterable[tuple[Path, bytes]]) -> list[Path]:
    """:func:`write_if_changed` for files written together (a build's dashboards, a profile set's rule files, an
    export): every target is checked before the first write, so a folder, FIFO or symlink in a file's place, or a
    file in a folder's, leaves all of them as they were instead of half the set new. Returns the written paths.
    (A disk that fills in the middle still leaves the files before it written, each whole.)"""
    files = list(files)
    for path, _ in files:
        _refuse_file_as_folder(path.parent)
        refuse_special(path)
    return [path for path, data in files if write_if_changed(path, data)]


def _refuse_file_as_folder(folder: Path) -> None:
    """Raise ``NotADirectoryError`` naming the nearest existing ancestor of ``folder`` (itself included) when it
    is not a folder."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            if not candidate.is_dir():
                raise NotADirectoryError(
                    errno.ENOTDIR, "is not a folder: dashgen writes files inside it", str(candidate)
                )
            return


def append_durably(path: Path, text: str) -> None:
    """Append ``text`` (UTF-8) to ``path`` in one write, fsynced; on failure the file is cut back to its old size.

    So a full disk or an I/O error leaves the file as it was (no torn line) and raises ``OSError``; only
    a crash in the middle of the write itself can leave a partial last line behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(descriptor).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(descriptor, data[written:])
            os.fsync(descriptor)
        except OSError:
            try:
                os.ftruncate(descriptor, size)
                os.fsync(descriptor)
            except OSError:
                pass  # the reader quarantines a torn last line
            raise
    finally:
        os.close(descriptor)


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; elsewhere directories cannot be opened)."""
    if os.name != "posix":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# what reading a cache file (read_cache_json) may raise and the reader takes as "no cache" (then computes afresh):
# unreadable, a FIFO or folder in its place, not JSON, or JSON nested past the parser's recursion limit (a ValueError
# of parse_json)
CACHE_READ_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError)


def read_cache_json(path: Path) -> Any:
    """The JSON value of the cache file at ``path``; raises one of :data:`CACHE_READ_ERRORS` when there is none."""
    return parse_json(read_regular_bytes(path))


def cache_dir() -> Path | None:
    """Where dashgen keeps what it caches between runs (the compiled schema validator, the panel index's test
    selectors): ``$DASHGEN_CACHE_DIR``, else the user's cache folder; None when there is none."""
    explicit = os.environ.get("DASHGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or (str(Path.home() / ".cache") if Path.home().is_dir() else "")
    return Path(base) / "dashgen" if base else None
