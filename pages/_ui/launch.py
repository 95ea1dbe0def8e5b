"""`python pages/_ui/launch.py [streamlit flags]`: `streamlit run app.py`, in this process,
with Streamlit's legacy `pages/` directory mode switched off before the first session.

Why: see shell.py's docstring. A fresh server decides on its first session whether the
app is a legacy `pages/` app; a deep link as that first session draws the pages folder's
file names as navigation and runs the page file alone until frame() reroutes it through
app.py, a few seconds later (the page's imports come first). Setting the flag here,
before any session exists, means no session ever sees the legacy mode. Plain
`streamlit run app.py` still works: frame() reroutes, with that flash. `make run` and
`python -m target_core serve` start the dashboard through this file; tests/test_shell.py
checks both ways against the pinned Streamlit.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent.parent / "app.py"


def main(flags: list[str]) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False  # what app.py's st.navigation would set
    sys.argv = ["streamlit", "run", str(APP), *flags]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
