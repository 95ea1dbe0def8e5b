"""Build step (the rest is pyproject.toml): a wheel carries the dashboard and the bundled
data. app.py, pages/ and data/ stay at the top of the repository; building copies app.py,
.streamlit/config.toml (Streamlit reads it beside the app it runs), pages/, data/demo/
and data/benchgen/ into target_core/_app/, where target_core.config finds them once
installed (config.INSTALLED)."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("app.py", ".streamlit/config.toml", "pages", "data/demo", "data/benchgen")


class BuildWithApp(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "target_core" / "_app"
        for name in BUNDLED:
            source, copy = ROOT / name, target / name
            if source.is_dir():
                shutil.copytree(source, copy, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)


setup(cmdclass={"build_py": BuildWithApp})
