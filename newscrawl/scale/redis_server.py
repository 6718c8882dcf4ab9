"""Start a throwaway redis-server on a free loopback port (tests and `newscrawl bench scale`).

Production runs point workers at a Redis someone operates; this only exists so the distributed
mode can be exercised on one machine with Debian's ``redis-server`` binary.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["LocalRedis", "free_port", "redis_server_binary"]


def redis_server_binary() -> str | None:
    return shutil.which("redis-server")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LocalRedis:
    """A redis-server child process bound to 127.0.0.1 with its files in `workdir`.

    `persist=True` turns on the append-only file with fsync on every write, so a restart (even
    after SIGKILL) keeps the queue; with `persist=False` nothing is written to disk.
    """

    def __init__(self, workdir: str | Path, *, port: int | None = None, persist: bool = False):
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError("redis-server not found (Debian: apt-get install redis-server)")
        self.binary = binary
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.persist = persist
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.persist
            else ["--appendonly", "no"]
        )
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.workdir),
            "--save", "",
            *persistence,
            "--protected-mode", "yes",
            "--logfile", str(self.workdir / "redis.log"),
        ]  # fmt: skip

    def start(self, timeout: float = 10.0) -> LocalRedis:
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.workdir / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited at start:\n{log}")
            if self._answers():
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} in {timeout}s")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """Stop the server abruptly (SIGKILL), as a crash or a lost machine would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def __enter__(self) -> LocalRedis:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
