"""The one way dsfields writes a file or swaps in a folder, and takes a lock: atomic where that is safe, never
destructive.

Every writer (``migrate -o``/``--in-place``, ``schema -o``, snapshots and indexes through
:func:`dsfields.model.store.write_atomic`, the docs site's swap-in) comes here, because renaming a temp
file over "the path" is only right when the path names an ordinary, singly linked, writable file:

* a symlink is followed and its target written (the link stays a link);
* a character device or FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written into, never replaced;
  ``/dev/stdout``, ``/dev/fd/N`` and ``/proc/self/fd/N`` write to the open descriptor itself;
  block devices, sockets and directories are refused;
* a file with several hard links, or without write permission (even for root), is refused unless
  ``force``: a rename would break the links or ignore the permission; forced, a hard-linked file is
  rewritten in place so that every link sees the new text;
* a replaced file keeps its mode and owner; a new one gets ``0666 & ~umask``;
* one locking rule for writers (issue 43): a replace holds the target's lock (:func:`target_lock`, a
  ``flock`` on the target itself, taken again when a racing writer swapped the file in the meantime, so no
  lock file is ever left), and its temp file (``.NAME.BOOT-PID-XXXXXXXX.tmp`` beside the target) is owned by
  its writer from the moment it exists: its name carries the boot id and pid of its writer, and it is
  locked at once.
  It is removed on any error and on every signal that can be caught; a temp file is a leftover only when no
  live writer owns it (its boot id is another boot or its pid is gone, *and* nobody holds its lock), and
  only leftovers are swept by the next write into that folder (each folder once per process).

Refusals are :class:`UnsafeTarget` (a :class:`DsfieldsError` and an :class:`OSError`): one line, exit 2.

Locks live here too: :func:`lock_file` (a named lock file, through ``filelock``) for the extractor's builds
and caches, :func:`exclusive_lock` for a file that must not be written to be locked (``mkdocs.yml``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator

from dsfields.model.errors import DsfieldsError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs start-up milliseconds; annotations are strings anyway
    from pathlib import Path
    from types import FrameType


class UnsafeTarget(DsfieldsError, OSError):
    """The target is of a kind dsfields will not write (or not without ``--force``): one line, exit 2."""

    def __init__(self, path: str, reason: str) -> None:
        OSError.__init__(self, errno.EPERM, reason, path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


TEMP_SUFFIX = ".tmp"
_TEMP_NAME = r"\.(?P<name>.+)\.(?P<boot>[0-9a-f]{8})-(?P<pid>[1-9][0-9]{0,9})-[a-z0-9]{8}\.tmp"
"""A temp file's name: ``.NAME.`` + the writer's boot id (8 hex digits) and pid + 8 random letters + ``.tmp``."""
_SIGNALS = ("SIGHUP", "SIGTERM", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU", "SIGXFSZ",
            "SIGVTALRM", "SIGPROF", "SIGPWR")
"""Signals whose default kills the process and that a handler may catch (SIGINT is KeyboardInterrupt)."""


def umask() -> int:
    """The process's umask, read without changing it where Linux tells it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _descriptor(path: str) -> int | None:
    """The open descriptor a path like ``/dev/stdout`` or ``/proc/self/fd/3`` names, else None."""
    names = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
    absolute = os.path.normpath(os.path.abspath(path))
    if absolute in names:
        fd = names[absolute]
    else:
        for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
            if absolute.startswith(prefix) and absolute[len(prefix):].isdigit():
                fd = int(absolute[len(prefix):])
                break
        else:
            return None
    try:
        os.fstat(fd)
    except OSError:
        return None
    return fd


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a FIFO")):
        if test(mode):
            return name
    return "of an unknown kind"


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _into_stream(fd: int, text: str, encoding: str) -> None:
    """Write into an open descriptor; a terminal gets the text through the guarded (escaping) stream."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    if os.isatty(fd) and fd in (1, 2):
        stream = sys.stdout if fd == 1 else sys.stderr
        stream.write(text)
        stream.flush()
        return
    from dsfields.model.termsafe import escape

    _write_fd(fd, (escape(text) if os.isatty(fd) else text).encode(encoding))


def _write_special(path: str, text: str, encoding: str) -> None:
    """Write into a character device or FIFO, opened without blocking (a FIFO nobody reads is refused)."""
    import fcntl

    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UnsafeTarget(path, "a FIFO that nobody reads; start its reader first") from None
        raise
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        from dsfields.model.termsafe import escape

        _write_fd(fd, (escape(text) if os.isatty(fd) else text).encode(encoding))
    finally:
        os.close(fd)


_SWEPT: set[str] = set()
"""Folders swept by this process: once is enough (a render writes thousands of pages into a few folders)."""


def boot_id() -> str:
    """The first 8 hex digits of this boot's id (``00000000`` where the kernel does not tell it)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            digits = handle.read().strip().replace("-", "")[:8].lower()
    except OSError:
        return "00000000"
    return digits if re.fullmatch("[0-9a-f]{8}", digits) else "00000000"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's live process (or a number we cannot ask about): not ours to judge
    return True


def temp_name(name: str) -> str:
    """A fresh temp name for the target ``name``, naming this writer (boot id, pid)."""
    import secrets

    letters = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
    return f".{name}.{boot_id()}-{os.getpid()}-{letters}{TEMP_SUFFIX}"


def owned_by_a_live_writer(entry: str) -> bool | None:
    """For a temp name dsfields makes: whether the writer it names still runs on this boot; None otherwise."""
    match = re.fullmatch(_TEMP_NAME, entry)
    if match is None:
        return None
    return match["boot"] == boot_id() and _alive(int(match["pid"]))


def owner_tag() -> str:
    """``BOOT-PID-`` of this process: the part of a temp file's or staging folder's name that says who owns it."""
    return f"{boot_id()}-{os.getpid()}-"


def owner_alive(name: str) -> bool | None:
    """For a name holding an :func:`owner_tag` (a staging folder ``.site.build-BOOT-PID-XXXX``): whether that
    process runs on this boot; None for a name without one (made by an older dsfields)."""
    match = re.search(r"-(?P<boot>[0-9a-f]{8})-(?P<pid>[1-9][0-9]{0,9})-", name)
    if match is None:
        return None
    return match["boot"] == boot_id() and _alive(int(match["pid"]))


# ---------------------------------------------------------------- child processes die with us


def parent_death_signal() -> Callable[[], None]:
    """A ``preexec_fn`` (or pool initializer) making the child die (SIGKILL) when this process dies, however it
    dies, SIGKILL included: Linux ``prctl(PR_SET_PDEATHSIG)``; elsewhere nothing. Call it in the parent: it
    remembers the parent, and a child whose parent is already gone exits at once."""
    parent = os.getpid()

    def die_with_parent() -> None:
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                import signal

                libc = ctypes.CDLL(None, use_errno=True)
                libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
            except (OSError, AttributeError):
                pass
        if os.getppid() != parent:  # the parent died before the prctl: nobody waits for us
            os._exit(1)

    return die_with_parent


_CHILDREN: set[int] = set()
"""Process groups of children a caught fatal signal kills before this process dies (mkdocs and its helpers)."""


@contextlib.contextmanager
def killed_on_signal(group: int) -> Iterator[None]:
    """Within: a caught fatal signal kills the process group ``group`` (a child started in its own session)."""
    _install_handlers()
    _CHILDREN.add(group)
    try:
        yield
    finally:
        _CHILDREN.discard(group)


_LOCK_FDS: set[int] = set()
"""Descriptors holding a tree's or target's ``flock``: a forked child (a render worker) must not keep the lock."""


def _drop_inherited_locks() -> None:
    """After a fork, in the child: point the descriptors that hold our flocks at /dev/null (the descriptor numbers
    stay valid for the code that will close them; the lock stays with the parent alone and goes when it dies)."""
    _HELD.clear()  # the child holds none of the parent's target locks
    if not _LOCK_FDS:
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    for fd in list(_LOCK_FDS):
        with contextlib.suppress(OSError):
            os.dup2(null, fd, inheritable=False)
    os.close(null)
    _LOCK_FDS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


_SWEPT: set[str] = set()
"""Folders swept by this process: once is enough (a render writes thousands of pages into a few folders)."""


def sweep_leftovers(directory: str) -> None:
    """Remove the temp files killed writers left in ``directory`` (once per process): a temp file whose writer
    (boot id, pid) is alive stays, and so does one whose lock is held (a writer in another pid namespace)."""
    import fcntl

    key = os.path.realpath(directory)
    if key in _SWEPT:
        return
    _SWEPT.add(key)
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        if owned_by_a_live_writer(entry) is not False:  # not our name, or its writer runs
            continue
        candidate = os.path.join(directory, entry)
        try:
            fd = os.open(candidate, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a writer is still at work
            with contextlib.suppress(OSError):
                os.unlink(candidate)
        except OSError:
            continue
        finally:
            os.close(fd)


_HELD: dict[tuple[int, int], int] = {}
"""Targets whose lock this process holds (device, inode) → depth: :func:`target_lock` nests."""


@contextlib.contextmanager
def target_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Within: no other dsfields writer replaces ``path`` (its symlink's target); nothing when it does not exist.

    The lock is a ``flock`` on the target file itself (opened read-only, so a read-only file locks too); a
    writer that waited finds the name swapped for the file its predecessor wrote and locks that one instead.
    No lock file is made, and the kernel drops the lock of a writer that dies.
    """
    import fcntl

    target = os.path.realpath(os.fspath(path))
    fd = -1
    key: tuple[int, int] | None = None
    try:
        while True:
            try:
                fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:
                fd = -1
                break  # absent, or not a file we can open: the rename alone decides
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                fd = -1
                break
            key = (st.st_dev, st.st_ino)
            if key in _HELD:  # this process holds it already (migrate --in-place, then its write)
                os.close(fd)
                fd = -1
                _HELD[key] += 1
                break
            _LOCK_FDS.add(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:  # a file system without flock (ENOLCK): the rename alone decides, as before
                _LOCK_FDS.discard(fd)
                os.close(fd)
                fd, key = -1, None
                break
            try:
                now = os.stat(target)
            except OSError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == key:
                _HELD[key] = 1
                break
            _LOCK_FDS.discard(fd)
            os.close(fd)  # replaced while we waited: lock the file that is there now
            fd, key = -1, None
        yield
    finally:
        if key is not None and key in _HELD:
            _HELD[key] -= 1
            if not _HELD[key]:
                del _HELD[key]
        if fd >= 0:
            _LOCK_FDS.discard(fd)
            os.close(fd)


_LIVE: set[str] = set()
"""Temp files and staging folders that exist right now: a fatal signal removes them before the process dies."""
_PREVIOUS: dict[int, object] = {}
"""The handlers there were before ours (installed once per process, on the first write)."""


def _on_fatal_signal(signum: int, frame: FrameType | None) -> None:
    import shutil
    import signal

    for group in list(_CHILDREN):  # first the children, so that none writes into what is removed next
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    _CHILDREN.clear()
    for path in list(_LIVE):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(path)
    _LIVE.clear()
    previous = _PREVIOUS.get(signum)
    if callable(previous):  # someone else's handler (a test harness, an embedding program) still runs
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # die of the signal, as without us


def _install_handlers() -> bool:
    """Our handler for every fatal signal not ignored (nohup), once; False off the main thread (then only
    the lock lets the next run clean up)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return False
    for name in _SIGNALS:
        number = getattr(signal, name, None)
        if number is None or number in _PREVIOUS:
            continue
        with contextlib.suppress(OSError, ValueError):
            current = signal.getsignal(number)
            _PREVIOUS[number] = current
            if current is not signal.SIG_IGN and current is not _on_fatal_signal:
                signal.signal(number, _on_fatal_signal)
    return True


@contextlib.contextmanager
def removed_on_signal(path: str) -> Iterator[None]:
    """Within: a caught fatal signal removes ``path`` (a file or a folder) and then kills the process with
    that same signal (or runs the handler that was there before)."""
    _install_handlers()
    _LIVE.add(path)
    try:
        yield
    finally:
        _LIVE.discard(path)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Within: SIGINT and the fatal signals wait (blocked), so a clean-up runs to its end."""
    import signal

    wanted = {getattr(signal, name) for name in ("SIGINT", *_SIGNALS) if hasattr(signal, name)}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_text(path: str | os.PathLike[str], text: str, *, force: bool = False, durable: bool = True,
               encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` as described in the module docstring; ``text`` is written byte for byte
    (no newline translation: the caller decides the line endings).

    ``durable``: fsync the temp file before the rename (a crash leaves the old file or the new, never half).
    Failures are one-line :class:`OSError`\\ s naming the path; refusals :class:`UnsafeTarget`.
    """
    if not isinstance(text, str):
        raise TypeError(f"write_text() writes str, not {type(text).__name__}")
    given = os.fspath(path)
    try:
        data = text.encode(encoding)
        how, target, st = _plan(given, force)
        if how == "descriptor":
            _into_stream(int(target), text, encoding)
        elif how == "special":
            _write_special(target, text, encoding)
        elif how == "in place":
            _rewrite_in_place(target, data)
        else:
            _replace(target, data, st, durable)
    except DsfieldsError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: NUL in the name; UnicodeError: unencodable text
        raise write_failure(given, exc) from None


def check_target(path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Refuse now what :func:`write_text` would refuse, before a command reports what it is about to write."""
    given = os.fspath(path)
    try:
        _plan(given, force)
    except DsfieldsError:
        raise
    except (OSError, ValueError) as exc:
        raise write_failure(given, exc) from None


def _plan(given: str, force: bool) -> tuple[str, str, os.stat_result | None]:
    """How ``given`` is written: ``("descriptor", fd, None)``, ``("special", target, st)`` (written into),
    ``("in place", target, st)`` (forced, hard-linked) or ``("replace", target, st or None)``; or refused."""
    fd = _descriptor(given)
    if fd is not None:
        return "descriptor", str(fd), None
    target = os.path.realpath(given)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is None:
        return "replace", target, None
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "special", target, st
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", target)
        raise UnsafeTarget(target, f"is {_kind(st.st_mode)}; dsfields writes regular files, character "
                                   "devices and FIFOs only")
    if st.st_nlink > 1:
        if not force:
            raise UnsafeTarget(target, f"has {st.st_nlink} hard links; replacing it would break them "
                                       "(--force rewrites it in place, for every link)")
        return "in place", target, st
    if not force and not _writable(target, st):
        raise UnsafeTarget(target, f"is read-only (mode {stat.filemode(st.st_mode)}); --force replaces it anyway")
    if st.st_uid != os.geteuid() and os.geteuid() != 0:  # a new file would be ours: only root can give it back
        if not force:
            raise UnsafeTarget(target, "belongs to another user, and a replacement would belong to you "
                                       "(--force rewrites it in place)")
        return "in place", target, st
    return "replace", target, st


def _writable(target: str, st: os.stat_result) -> bool:
    """Writable by its mode for us: root's bypass of the permission bits does not count."""
    if os.geteuid() == 0:
        return bool(st.st_mode & 0o222)
    return os.access(target, os.W_OK)


def _rewrite_in_place(target: str, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_NOCTTY)
    try:
        _write_fd(fd, data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_temp(directory: str, name: str) -> tuple[int, str]:
    """A temp file for ``name`` in ``directory``, owned by us from the moment it exists: its name carries our
    boot id and pid (the sweep leaves a live writer's file alone), and it is locked at once (which covers a
    writer the pid cannot be asked about, in another pid namespace)."""
    import fcntl

    tmp = os.path.join(directory, temp_name(name))
    fd = os.open(tmp, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_CREAT | os.O_EXCL, 0o600)
    with contextlib.suppress(OSError):  # no flock on this file system (ENOLCK): the name alone says who owns it
        fcntl.flock(fd, fcntl.LOCK_EX)
    return fd, tmp


def _fill(fd: int, target: str, data: bytes, st: os.stat_result | None, durable: bool) -> None:
    """The temp file's bytes, mode and owner (those of the file it replaces, or new-file ones)."""
    _write_fd(fd, data)
    if st is None:
        os.fchmod(fd, 0o666 & ~umask())
    else:
        if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except PermissionError:
                raise UnsafeTarget(target, "belongs to another user; dsfields cannot keep its owner "
                                           "when it replaces it") from None
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
    if durable:
        os.fsync(fd)


def _replace(target: str, data: bytes, st: os.stat_result | None, durable: bool) -> None:
    directory, name = os.path.split(target)
    directory = directory or "."
    os.makedirs(directory, exist_ok=True)
    sweep_leftovers(directory)
    with target_lock(target):
        if st is not None:  # another writer may have replaced it while we waited: keep what is there now
            with contextlib.suppress(OSError):
                st = os.stat(target)
        fd, tmp = _open_temp(directory, name)
        done = False
        try:
            with removed_on_signal(tmp):
                _fill(fd, target, data, st, durable)
                os.replace(tmp, target)
                done = True
        finally:
            os.close(fd)
            if not done:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def write_failure(path: str, exc: BaseException) -> OSError:
    """One line naming ``path`` and why it could not be written (the blocker for a parent that is a file)."""
    from pathlib import Path

    where = Path(path)
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        blocker = next((p for p in where.parents if p.exists() and not p.is_dir()), None)
        reason = f"{blocker} is not a directory" if blocker else (exc.strerror or str(exc))
    elif isinstance(exc, IsADirectoryError):
        reason = "it is a directory"
    elif isinstance(exc, UnicodeError):
        reason = f"the text cannot be encoded ({exc.reason})"
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
    else:
        reason = f"not a usable file name ({exc})"
    return OSError(getattr(exc, "errno", None) or errno.EINVAL, f"cannot write ({reason})", path)


# ---------------------------------------------------------------- folders (the docs site) and locks


def folder_target(path: Path) -> Path:
    """Where a folder that replaces ``path`` goes: the symlink's target; refused unless a folder or nothing."""
    from pathlib import Path

    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeTarget(str(target), f"is {_kind(st.st_mode)}, not a folder; give a folder (or a new name)")
    return target


def folder_mode(existing: Path) -> int:
    """The mode for a folder replacing ``existing``: its own, or ``0777 & ~umask`` for a new one."""
    try:
        return stat.S_IMODE(os.stat(existing).st_mode)
    except OSError:
        return 0o777 & ~umask()


def take_over(new: Path, existing: Path) -> None:
    """Give the folder ``new`` the mode (and, as root, the owner) of the folder it replaces."""
    os.chmod(new, folder_mode(existing))
    try:
        st = os.stat(existing)
    except OSError:
        return
    if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        os.chown(new, st.st_uid, st.st_gid)


@contextlib.contextmanager
def lock_file(path: Path | str) -> Iterator[None]:
    """Hold the lock file ``path`` (made if absent), across processes and this process's threads.

    ``filelock`` takes a ``flock`` the kernel drops when the holder dies, so a killed build or download never
    blocks the next one; its folder is made here.
    """
    from filelock import FileLock

    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    with FileLock(os.fspath(path)):
        yield


@contextlib.contextmanager
def exclusive_lock(path: Path, waiting: str | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the existing file ``path``; ``waiting`` is said on stderr if it is held.

    A plain ``flock`` on the file itself, not :func:`lock_file`: the file is a user's (``mkdocs.yml``, perhaps
    read-only), which ``filelock`` would open for writing and truncate, and no lock file is left in their tree.
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): nothing is serialised
        yield
        return
    with open(path, "rb") as handle:
        _LOCK_FDS.add(handle.fileno())  # a forked render worker does not inherit the lock
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting:
                    print(waiting, file=sys.stderr)
                fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            _LOCK_FDS.discard(handle.fileno())
