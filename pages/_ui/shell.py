"""frame(): the first call of every page, so that it runs inside app.py's navigation.

Why a private flag. Streamlit 1.67 decides per server process, not per session,
whether the app is a legacy `pages/` directory app: the first PagesManager built in a
process (runtime/pages_manager.py, PagesManager.__init__) sets the class attribute
`PagesManager.uses_pages_directory` to whether a `pages/` folder sits next to the main
script, and only st.navigation (commands/navigation.py) sets it back to False. While it
is True, the ScriptRunner (runtime/scriptrunner/script_runner.py) runs `_mpa_v1()`
instead of app.py: a navigation built from the `pages/*.py` files, which runs the
requested page file alone. So the first session of a freshly started server that
deep-links to a page (`/query?run=...`) gets that page without app.py (no navigation,
no shared sidebar) until some session calls st.navigation.

Streamlit offers no supported way out while the page files stay in `pages/`: no config
option reads the flag (client.showSidebarNavigation only hides the legacy menu), and
declaring pages differently in app.py (st.Page with callables) cannot help, because
app.py is not what runs. Streamlit's maintainers advise naming the folder anything but
`pages/`; here the name is fixed. launch.py, which `make run` and `serve` use, sets the
flag before the first session, so frame() only reroutes under a plain `streamlit run`.
tests/test_shell.py pins the flag's meaning in the
installed Streamlit and checks a deep link into a fresh server, so an upgrade that
changes any of this fails loudly instead of silently bringing the legacy mode back.
"""

from __future__ import annotations

import streamlit as st

from pages._ui import url

_REROUTED = "_target_rerouted"


def frame() -> None:
    """Make sure the page runs inside app.py's navigation; call first on every page.

    Switching the flag off and rerunning routes through app.py; pages hash by url_path
    in both modes, so the rerun lands on the same page. That can only happen on a
    session's first run, before any widget was used, so the rerun loses nothing;
    rerouting at most once per session keeps it that way (AppTest resets the flag before
    every run, and a second rerun would swallow a button click).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if not st.session_state.get(_REROUTED):
            st.session_state[_REROUTED] = True
            st.rerun()
    url.begin()  # after any reroute: tells a link's parameters from the page's own
