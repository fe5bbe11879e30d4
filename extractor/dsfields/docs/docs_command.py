"""``dsfields docs build|serve``: render the snapshots into Markdown, then build or serve the site with mkdocs.

mkdocs runs in a child process (``python -m mkdocs``) so a failed strict build is an exit code,
not an exception inside our process, and so the base install without the ``docs`` extra still
renders the pages (``--no-mkdocs``) and says which extra is missing.

Atomic and concurrent-safe: the whole render-and-build holds an exclusive lock on mkdocs.yml (a
second build in the same tree waits), the render writes each page via a temp file and a rename,
and mkdocs builds into a fresh ``.site.build-*`` folder beside ``site/`` that replaces it in one
step (``renameat2(RENAME_EXCHANGE)`` on Linux, else two renames with recovery on the next build).
Ctrl-C or a failed build removes the temp folder; a SIGKILL leaves one behind, removed by the next
build. ``site/`` is never empty nor half-written.

``docs build --release V`` is the exception: it renders V's pages only and rebuilds them into the
existing ``site/`` in place (``dsfields.docs.partial``, English and Chinese side by side), producing
the files a full build would; a failure there leaves the site partly updated, and says to run a full build.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from dsfields.model.errors import MissingExtra, UsageError
from dsfields.model.safewrite import (
    exclusive_lock,
    folder_target,
    killed_on_signal,
    owner_alive,
    owner_tag,
    parent_death_signal,
    removed_on_signal,
    signals_held,
    take_over,
)
from dsfields.model.store import SnapshotError, available_versions, repo_generated_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    rendered = "Render every snapshot into docs/<version>/ and docs/releases/, then"
    build = actions.add_parser("build", help="render the pages and build the site with mkdocs --strict",
                               description=f"{rendered} build the site with mkdocs --strict.")
    serve = actions.add_parser("serve", help="render the pages and serve the site locally (mkdocs serve)",
                               description=f"{rendered} serve it (mkdocs serve).")
    for sub in (build, serve):
        sub.add_argument("--config-file", type=Path, default=None,
                         help="mkdocs.yml (default: the checkout's, found from the current folder upwards)")
        sub.add_argument("--generated", type=Path, default=None,
                         help="snapshot folder (default: $DSFIELDS_GENERATED or the checkout's generated/)")
    build.add_argument("-o", "--site-dir", type=Path, default=None,
                       help="output folder (default: site/ next to mkdocs.yml; in an installed dsfields without a "
                            "checkout, site/ in the current folder)")
    build.add_argument("--no-mkdocs", action="store_true", help="only render the Markdown pages")
    build.add_argument("--release", metavar="VERSION", default=None,
                       help="rebuild only this release's pages (both languages) into the existing site (after a "
                            "full build; see README \"Docs site\")")
    serve.add_argument("--dev-addr", default="127.0.0.1:8000", help="address to serve on (default: %(default)s)")


def find_config(explicit: Path | None) -> Path | None:
    """The mkdocs.yml to use: explicit, else the first one from the current folder up, else the checkout's."""
    if explicit:
        return explicit if explicit.is_file() else None
    here = Path.cwd().resolve()
    checkout = Path(__file__).resolve().parents[3]
    for folder in (here, *here.parents, checkout):
        if (folder / "mkdocs.yml").is_file():
            return folder / "mkdocs.yml"
    return None


@contextlib.contextmanager
def tree_lock(config: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``config`` (mkdocs.yml): one render/build per tree at a time."""
    with exclusive_lock(config, waiting="dsfields docs: another build of this tree is running; waiting for it"):
        yield


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _leftovers(site_dir: Path, kind: str) -> list[Path]:
    return sorted(site_dir.parent.glob(f".{site_dir.name}.{kind}-*"))


def recover_site(site_dir: Path) -> None:
    """Under the tree lock: undo what a killed build left (a site moved aside, staging folders). Only what no
    live builder owns (the boot id and pid in its name): another tree's build into the same site folder (two
    installed-wheel builds into ./site lock two scratch trees) keeps its own."""
    def leftovers(kind: str) -> list[Path]:
        return [p for p in _leftovers(site_dir, kind) if owner_alive(p.name) is not True]

    moved = [folder / "site" for folder in leftovers("old") if (folder / "site").is_dir()]
    if not site_dir.exists() and moved:
        os.rename(max(moved, key=lambda p: p.stat().st_mtime), site_dir)
    for stale in [*leftovers("old"), *leftovers("build")]:
        shutil.rmtree(stale, ignore_errors=True)


def swap_in(new: Path, site_dir: Path) -> None:
    """Make ``new`` the site: one atomic exchange where possible, else two renames and a cleanup."""
    if not site_dir.exists() and not site_dir.is_symlink():
        os.rename(new, site_dir)
        return
    if _exchange(new, site_dir):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the previous site
        return
    old = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.old-{owner_tag()}", dir=site_dir.parent))
    os.rename(site_dir, old / "site")
    os.rename(new, site_dir)
    shutil.rmtree(old, ignore_errors=True)


def build_into(site_dir: Path, build: Callable[[Path], int]) -> int:
    """Run ``build(folder)`` on a fresh folder beside ``site_dir``; on success it replaces ``site_dir``.

    ``site_dir`` may be a symlink (its target is replaced) and must be a folder or nothing: a regular file
    there is the user's, never turned into the site. The new site keeps the old one's mode (a new one
    gets ``0777 & ~umask``). The staging folder goes on failure, Ctrl-C and every catchable signal.
    """
    site_dir = folder_target(site_dir)
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    recover_site(site_dir)
    staging: Path | None = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.build-{owner_tag()}",
                                                 dir=site_dir.parent))
    try:
        with removed_on_signal(str(staging)):
            code = build(staging)
            if code:
                return code
            take_over(staging, site_dir)  # mkdtemp makes 0700; the site keeps its mode (and owner)
            swap_in(staging, site_dir)
            staging = None
        return 0
    finally:
        if staging is not None:
            with signals_held():  # a second Ctrl-C must not leave half a staging folder behind
                shutil.rmtree(staging, ignore_errors=True)


def packaged_sources() -> Path | None:
    """The docs sources an installed wheel carries (``dsfields/site_src``: mkdocs*.yml and docs/), or None."""
    folder = Path(__file__).resolve().parents[1] / "site_src"
    return folder if (folder / "mkdocs.yml").is_file() else None


@contextlib.contextmanager
def packaged_tree(sources: Path) -> Iterator[Path]:
    """A scratch copy of the packaged docs sources to render into (the installed package is never written):
    its mkdocs.yml, with the hooks module where mkdocs.yml names it (``extractor/dsfields/docs/hooks.py``)."""
    with tempfile.TemporaryDirectory(prefix="dsfields-docs-") as scratch:
        root = Path(scratch) / "src"
        shutil.copytree(sources, root)
        hooks = root / "extractor" / "dsfields" / "docs"
        hooks.mkdir(parents=True)
        shutil.copyfile(Path(__file__).with_name("hooks.py"), hooks / "hooks.py")
        yield root / "mkdocs.yml"


def run(args: argparse.Namespace) -> int:
    config = find_config(args.config_file)
    if config is None and args.config_file is None and (sources := packaged_sources()) is not None:
        # An installed dsfields without a checkout: build from the sources the wheel carries, into ./site.
        if args.docs_action == "build" and getattr(args, "site_dir", None) is None:
            args.site_dir = Path.cwd() / "site"
        with packaged_tree(sources) as scratch_config:
            return _run(args, scratch_config)
    if config is None:
        raise UsageError("no mkdocs.yml found (run from the dsfields checkout or pass --config-file)")
    return _run(args, config)


def _run(args: argparse.Namespace, config: Path) -> int:
    if args.docs_action == "serve":
        check_address(args.dev_addr)  # before the render: a port in use costs no 26 s of pages
    started = time.perf_counter()
    with tree_lock(config):
        code = _render_and_build(args, config, started)
    if code is not None:
        return code
    # serve: the pages are rendered; mkdocs serves (and rebuilds) them without holding the lock.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "serve", "--config-file", str(config), "--dev-addr", args.dev_addr]
    crashes: list[str] = []
    code = run_mkdocs(command, config.parent, env, crashes)
    if code and crashes:  # mkdocs raised: its traceback as one line
        print(f"dsfields docs: mkdocs serve failed: {crashes[-1]}", file=sys.stderr)
    return code


def check_address(address: str) -> None:
    """``--dev-addr HOST:PORT`` is one mkdocs can serve on: a port in use (or a host that is not this machine's)
    is one line now, not mkdocs' traceback after the render."""
    import socket

    host, colon, port = address.rpartition(":")
    host = host.strip("[]")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise UsageError(f"--dev-addr {address}: give HOST:PORT (e.g. 127.0.0.1:8000)")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        family, kind, proto, _, where = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as mkdocs' server does
            probe.bind(where)
    except (OSError, IndexError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise UsageError(f"--dev-addr {address}: cannot serve there ({reason})") from None


def _render_and_build(args: argparse.Namespace, config: Path, started: float) -> int | None:
    """Render, then build (``docs build``): the exit code; None when ``docs serve`` may start serving."""
    from dsfields.docs.planning import LANDING_SNIPPET
    from dsfields.docs.views import load_site
    from dsfields.docs.writing import generated_folders, inputs_digest, remember_render, render, render_is_current

    root = config.parent
    release = getattr(args, "release", None)
    generated = args.generated or repo_generated_dir()
    site_dir = (getattr(args, "site_dir", None) or root / "site").resolve()
    if args.docs_action == "build" and release is None:
        site_dir = folder_target(site_dir)  # a regular file there is refused now, not after the render
    if not getattr(args, "no_mkdocs", False) and importlib.util.find_spec("mkdocs") is not None:
        problem = config_problem(config)  # before the render: an invalid mkdocs.yml costs no 26 s of pages
        if problem:
            raise UsageError(f"{config}: {problem}")
    digest = inputs_digest(generated, root / "docs") if release is None and generated.is_dir() else None
    page_count = render_is_current(root / "docs", digest) if digest else None
    if page_count is not None:
        print(f"dsfields docs: {page_count} pages already rendered from these inputs (snapshots, package, "
              "hand-written pages unchanged)")
        return _build(args, config, root, site_dir, page_count, started)
    try:
        versions = available_versions(generated)
        # One release: only its changes and the next release's (releases/changes.json) are diffed again.
        after = versions[versions.index(release) + 1:][:1] if release in versions else []
        site = load_site(generated, changes_of={release, *after} if release else None)
    except FileNotFoundError as exc:
        raise SnapshotError(str(exc)) from None
    if release is not None and release not in site.versions:
        raise SnapshotError(f"no snapshot of {release} (releases: {site.versions[0]} … {site.newest})")
    if release is not None and not (site_dir / "404.html").is_file():  # the theme writes it in every build
        raise UsageError(f"--release updates a built site; {site_dir} has none: run a full build first")
    before = _data_files(root / "docs") if release is not None else {}
    pages = render(site, root / "docs", only=release)
    rendered = time.perf_counter() - started
    # Hand-written pages are the .md files outside the generated folders; the landing snippet is not a page.
    folders = set(generated_folders(root / "docs"))
    hand_written = [p for p in (root / "docs").rglob("*.md") if not folders & set(p.parents)]
    page_count = sum(page.path != LANDING_SNIPPET for page in pages) + len(hand_written)
    # A release's render leaves the other releases' pages as they were: no record of a full render.
    remember_render(root / "docs", digest, page_count)
    print(f"dsfields docs: rendered {page_count} pages for {len(site.versions)} release(s) in {rendered:.1f} s")
    if release is not None and args.docs_action == "build" and not args.no_mkdocs:
        _need_mkdocs()
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        return _build_release(root, config, site_dir, release, before, started, env)
    return _build(args, config, root, site_dir, page_count, started)


def _need_mkdocs() -> None:
    """:class:`MissingExtra` naming the ``docs`` extra when mkdocs or its Material theme cannot be imported."""
    for package, module in (("mkdocs", "mkdocs"), ("mkdocs-material", "material")):
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(package, "docs")


def _build(args: argparse.Namespace, config: Path, root: Path, site_dir: Path, page_count: int,
           started: float) -> int | None:
    """mkdocs on the rendered pages (``docs build``), or None when ``docs serve`` may start serving."""
    if args.docs_action == "build" and args.no_mkdocs:
        return 0
    _need_mkdocs()
    if args.docs_action == "serve":
        return None
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs"]
    # No --quiet: it hides warnings from mkdocs' strict-mode counter, and a broken link would pass.
    command += ["build", "--strict", "--config-file", str(config), "--site-dir"]
    crashes: list[str] = []
    code = build_into(site_dir, lambda folder: run_mkdocs([*command, str(folder)], root, env, crashes)
                      or _agent_files(root / "docs", folder))
    if code:
        if crashes:  # mkdocs raised: its traceback as one line
            print(f"dsfields docs: mkdocs build failed: {crashes[-1]}", file=sys.stderr)
        else:
            print("dsfields docs: mkdocs build --strict failed (see its messages above)", file=sys.stderr)
        return 1
    print(f"dsfields docs: built {page_count} pages into {site_dir} in {time.perf_counter() - started:.1f} s")
    return 0


def _agent_files(docs_dir: Path, folder: Path) -> int:
    """The Markdown twins and llms.txt files (issue 41) into the freshly built site ``folder``: exit code 0."""
    from dsfields.docs.twins import write_agent_files

    write_agent_files(docs_dir, folder)
    return 0


_VALIDATE = """
import logging, sys
errors = []
class Keep(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.ERROR:
            errors.append(record.getMessage())
logging.getLogger("mkdocs").addHandler(Keep())
logging.getLogger("mkdocs").propagate = False
from mkdocs.config import load_config
try:
    load_config(sys.argv[1])
except BaseException as exc:
    message = errors[0] if errors else (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    print(" ".join(message.split()))
    sys.exit(1)
"""
"""mkdocs' own loader on the config alone (its schema, hooks, plugins and theme), in a child like the build."""


def config_problem(config: Path) -> str | None:
    """Why mkdocs would refuse ``config`` (one line), found in about a second instead of after the render."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _VALIDATE, str(config)], cwd=config.parent, env=env,
                              capture_output=True, text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return "mkdocs did not finish reading it in 120 s"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return f"not a usable mkdocs config: {lines[-1] if lines else _last_line(done.stderr)}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "mkdocs failed without a message"


def run_mkdocs(command: list[str], cwd: Path, env: dict[str, str], crashes: list[str]) -> int:
    """mkdocs in its own process group: its messages relayed to stderr, each traceback as its last line
    (appended to ``crashes``); on Ctrl-C or any error here the whole group is killed before we go on."""
    child = subprocess.Popen(command, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True, errors="replace",
                             start_new_session=True, preexec_fn=parent_death_signal())
    try:
        assert child.stderr is not None
        with killed_on_signal(child.pid):  # a SIGTERM to us kills mkdocs (and its zh build) first
            relay_messages(child.stderr, crashes)
            return child.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        raise
    finally:
        if child.stderr is not None:
            child.stderr.close()


def relay_messages(lines: Iterator[str] | io.TextIOBase, crashes: list[str]) -> None:
    """Copy mkdocs' messages to stderr, a Python traceback replaced by its exception's line (the last one
    of a chain): mkdocs' KeyboardInterrupt or PermissionError is one line, not forty."""
    inside = False
    pending: str | None = None
    for line in lines:
        text = line.rstrip("\n")
        if text.startswith("Traceback (most recent call last):"):
            inside, pending = True, None
            continue
        if inside:
            if text.startswith((" ", "\t")) or not text.strip():
                continue
            inside, pending = False, text.strip()
            continue
        if pending is not None:
            if not text.strip() or text.startswith(("During handling of the above", "The above exception")):
                continue  # a chained exception follows: its own traceback gives the last line
            crashes.append(pending)
            pending = None
        print(text, file=sys.stderr)
    if pending is not None:
        crashes.append(pending)


DATA_FILES = ("nav.json", "stubs.json", "site-data.json", "changes.json", "errors.json")
"""The render's files that every release's pages depend on (hooks.py, assets/dsfields.js)."""


def _data_files(docs_dir: Path) -> dict[Path, bytes | None]:
    paths = [docs_dir / "releases" / name for name in DATA_FILES]
    paths += [docs_dir / "zh" / "releases" / name for name in DATA_FILES]
    return {path: path.read_bytes() if path.is_file() else None for path in paths}


def _build_release(root: Path, config: Path, site_dir: Path, release: str, before: dict[Path, bytes | None],
                   started: float, env: dict[str, str]) -> int:
    """mkdocs on one release's pages of the built site: English and Chinese side by side (two processes)."""
    sites = [(config, site_dir)]
    zh_config = config.with_name("mkdocs.zh.yml")
    if zh_config.is_file() and (root / "docs" / "zh" / "releases" / "nav.json").is_file():
        sites.append((zh_config, site_dir / "zh"))
    for _, out in sites:  # a read-only site is one line now, not a traceback from each child later
        for folder in (out, out / release):
            if folder.is_dir():
                try:
                    tempfile.TemporaryFile(dir=folder).close()
                except OSError as exc:
                    raise UsageError(f"{folder}: cannot write ({exc.strerror or exc}); --release rewrites "
                                     f"{release}'s pages of the built site in place") from None
    package_root = str(Path(__file__).resolve().parents[2])  # the children import this dsfields, not another one
    path = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    env = {**env, "DSFIELDS_DOCS_CHILD": "1", "PYTHONPATH": path}
    crashes: list[str] = []
    with contextlib.ExitStack() as stack:
        logs = [stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")) for _ in sites]
        children = [subprocess.Popen([sys.executable, "-m", "dsfields.docs.partial", "--config-file", str(conf),
                                      "--site-dir", str(out), "--release", release], cwd=root, env=env,
                                     stderr=log, start_new_session=True, preexec_fn=parent_death_signal())
                    for (conf, out), log in zip(sites, logs, strict=True)]
        for child in children:  # they die with us, and a SIGTERM to us kills them first
            stack.enter_context(killed_on_signal(child.pid))
        try:
            codes = [child.wait() for child in children]
        except BaseException:
            for child in children:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
            raise
        for log in logs:  # their messages, each traceback as its last line
            log.seek(0)
            relay_messages(log, crashes)
    if any(codes):
        why = f": {crashes[-1]}" if crashes else " (see the messages above)"
        print(f"dsfields docs: rebuilding {release} failed{why}; the site may be partly updated: run a full build",
              file=sys.stderr)
        return 1
    _agent_files(root / "docs", site_dir)  # the release's twins and llms.txt, as a full build writes them
    changed = [path.relative_to(root / "docs").as_posix() for path, text in _data_files(root / "docs").items()
               if text != before.get(path)]
    if changed:
        print(f"dsfields docs: {', '.join(changed)} changed: pages of other releases may show it only after a "
              "full build", file=sys.stderr)
    print(f"dsfields docs: rebuilt {release} into {site_dir} in {time.perf_counter() - started:.1f} s")
    return 0
