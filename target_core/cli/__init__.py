"""The command line, `python -m target_core ...`: thin over the read models and the engine."""

from target_core.cli.main import COMMANDS, main

__all__ = ["COMMANDS", "main"]
