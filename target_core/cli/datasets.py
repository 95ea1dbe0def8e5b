"""`datasets`: list the datasets; `datasets add PATH|ARCHIVE [--name NAME]` and
`datasets remove NAME` change the workspace's added datasets (datasets/add.py)."""

from __future__ import annotations

import argparse
import json
import sys

from target_core.cli import options
from target_core.cli.format import format_rows
from target_core.config import load_settings
from target_core.errors import ConfigError

LIST_COLUMNS = ["name", "task", "tables", "passages", "queries", "databases", "kind", "source"]


DATASETS_ARGUMENTS: options.CommandArguments = {
    "datasets": ("ACTION:datasets", "TARGET:datasets", "name:datasets", "remote"),
}


def cmd_datasets(args: argparse.Namespace) -> int:
    if args.action is None:
        if args.target is not None or args.name is not None:
            raise ConfigError("`datasets` lists; use `datasets add PATH [--name NAME]` or "
                              "`datasets remove NAME`")
        return _list(args)
    if args.target is None:
        raise ConfigError(f"`datasets {args.action}` needs a "
                          f"{'PATH' if args.action == 'add' else 'NAME'}")
    if args.action == "remove" and args.name is not None:
        raise ConfigError("--name is for `datasets add`")
    return _add(args) if args.action == "add" else _remove(args)


def _add(args: argparse.Namespace) -> int:
    from target_core.datasets.add import add_dataset

    info = add_dataset(args.target, load_settings(args.workspace), name=args.name).to_dict()
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        print(f"added {info['name']}: {info['task']}, {info['tables']:,} tables, "
              f"{info['queries']:,} queries, {info['databases']:,} databases "
              f"({info['location']})")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from target_core.datasets.add import remove_dataset

    gone = remove_dataset(args.target, load_settings(args.workspace))
    if args.json:
        print(json.dumps({"name": gone.name, "location": gone.location, "how": gone.how}))
    else:
        kept = " (the folder is left as it is)" if gone.how == "path" else ""
        print(f"removed {gone.name}{kept}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from target_core.datasets import list_datasets

    infos = [i.to_dict() for i in list_datasets(load_settings(args.workspace),
                                                 remote=args.remote)]
    if args.json:
        print(json.dumps(infos, ensure_ascii=False, indent=2))
        return 0
    if not infos:
        print("no datasets found")
        return 0
    print(format_rows(infos, LIST_COLUMNS))
    for info in infos:
        if info["error"]:
            print(f"\n{info['name']}: cannot be loaded: {info['error']}", file=sys.stderr)
    return 0
