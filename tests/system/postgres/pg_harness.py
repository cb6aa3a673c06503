"""A throwaway PostgreSQL cluster for the server-store tests (the harness; conftest.py has the
fixtures) and for ``bench/annotation_stores.py`` (Debian's ``postgresql`` package).

:func:`throwaway`: ``initdb`` into a temporary folder, ``pg_ctl start`` on a free loopback port
with its Unix socket in that folder, stopped and removed after (one per test session). PostgreSQL
refuses to run as root, so as root the cluster runs as the ``postgres`` user (the folder is given
to it). Local (socket) logins are trusted; TCP logins need the password, so tests can check a
wrong one. Without PostgreSQL (:func:`missing`) every test here is skipped with one line saying
how to install it, and the benchmark says it skipped the server half, and why.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

INSTALL = "PostgreSQL is not installed: apt-get install -y postgresql (Debian) to run the server-store tests"
#: The superuser's password (TCP logins only).
PASSWORD = "s3cret-" + secrets.token_hex(4)


def _bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """A running throwaway cluster."""

    bin: Path
    folder: Path
    port: int
    as_user: list[str]

    @property
    def socket_dir(self) -> Path:
        return self.folder / "sock"

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, cwd="/")

    def start(self) -> None:
        """Start the server and wait until it takes connections (after a crash, until its WAL is
        replayed: up to 5 minutes on a busy machine); a failure says the end of the server's log."""
        options = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=on"
        try:
            self._run(
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.folder / "data"),
                "-l",
                str(self.folder / "log"),
                "-o",
                options,
                "-w",
                "-t",
                "300",
                "start",
            )
        except subprocess.CalledProcessError as exc:
            log = self.folder / "log"
            tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
            raise RuntimeError(
                f"pg_ctl start failed ({exc.stderr.decode(errors='replace').strip()}); the server's log ends:\n"
                + "\n".join(tail)
            ) from None

    def checkpoint(self) -> None:
        """Write every change to the data files now (a crash after it replays only what follows)."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute("CHECKPOINT")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: a clean shutdown with a checkpoint, up to 5 minutes on a busy
        machine; ``immediate``: a crash)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", mode, "-w", "-t", "300", "stop")

    def url(self, database: str) -> str:
        """A URL over the Unix socket (trusted: no password)."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def tcp_url(self, database: str, *, user: str = "postgres") -> str:
        """A URL over loopback TCP (the password comes from PGPASSWORD)."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name


def missing() -> str | None:
    """Why no throwaway cluster can be started here (one line with the fix), or None."""
    if _bin() is None:
        return INSTALL
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install 'psycopg[binary]'"
    return None


@contextmanager
def throwaway() -> Iterator[Cluster]:
    """A new cluster, running until the block ends, then stopped and its folder removed
    (call :func:`missing` first)."""
    bin_dir = _bin()
    assert bin_dir is not None, INSTALL
    folder = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    (folder / "pw").write_text(PASSWORD + "\n")
    if as_user:
        os.chown(folder / "pw", pwd.getpwnam("postgres").pw_uid, -1)
    cluster = Cluster(bin_dir, folder, _free_port(), as_user)
    try:
        cluster._run(
            str(bin_dir / "initdb"),
            "-D",
            str(folder / "data"),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={folder / 'pw'}",
        )
        cluster._run("mkdir", str(cluster.socket_dir))
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
