"""`serve`: the dashboard, as `streamlit run` of the app.py this package carries (the
repository's, or the copy in an installed wheel: config.APP_DIR), from any directory,
through pages/_ui/launch.py (no legacy pages-folder mode on a first deep link)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

from target_core.cli import options
from target_core.config import APP_DIR
from target_core.errors import ConfigError


def serve_command(args: argparse.Namespace) -> list[str]:
    """The command line `serve` replaces itself with."""
    app, launcher = APP_DIR / "app.py", APP_DIR / "pages" / "_ui" / "launch.py"
    for path in (app, launcher):
        if not path.is_file():
            raise ConfigError(f"the dashboard is missing: {path} not found "
                              "(reinstall the package)")
    if importlib.util.find_spec("streamlit") is None:
        raise ConfigError("streamlit is not installed in this Python environment "
                          f"({sys.executable})")
    command = [sys.executable, str(launcher),
               "--server.port", str(args.port), "--server.address", args.address]
    if args.headless:
        command += ["--server.headless", "true"]
    return command


def cmd_serve(args: argparse.Namespace) -> int:
    command = serve_command(args)
    if args.workspace:  # the app reads its settings, as every reader, through config
        os.environ["TARGET_WORKSPACE"] = str(Path(args.workspace).resolve())
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, command)  # Ctrl-C and signals reach Streamlit itself


SERVE_ARGUMENTS: options.CommandArguments = {"serve": ("port", "address", "headless")}


SERVE_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "serve": ("serve the dashboard (streamlit run of the installed app.py)", cmd_serve),
}
