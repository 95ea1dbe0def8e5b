"""The Datasets page's "Add a dataset" form (a folder or archive on the server, or an
uploaded archive) and the remove button of an added dataset. One target_core call
each (through resources, which clears the cached dataset lists); errors show as
st.error and change nothing."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from pages._ui import resources, url
from pages._ui.text import plain
from target_core.actions.datasets import Upload
from target_core.errors import TargetError

_DONE = "add-dataset-done"  # the message to show after the rerun that lists the dataset
_ROUND = "add-dataset-round"  # part of the fields' keys: a new round, an empty form
ARCHIVE_TYPES = ["zip", "tar", "gz", "tgz", "bz2", "xz"]


def add_form(current: str | None) -> None:
    """The form in an expander (open when there is no dataset yet), then, when
    `current` is an added dataset, its remove button."""
    if done := st.session_state.pop(_DONE, None):
        st.success(done, icon=":material/check_circle:")
    limit = resources.settings().upload_max_mb
    round_ = st.session_state.get(_ROUND, 0)
    with st.expander("Add a dataset", expanded=current is None, icon=":material/add:"), \
            st.form(f"add-dataset-{round_}", border=False):
        path = st.text_input(
            "Folder or archive on the server", key=f"add-dataset-path-{round_}",
            placeholder="/data/my-dataset  or  /data/my-dataset.zip",
            help="A folder-format or Spider-layout folder (registered where it is), or a "
                 "zip/tar archive of one (unpacked into the workspace).")
        upload = st.file_uploader(
            f"… or upload a zip or tar archive (at most {limit} MB)", type=ARCHIVE_TYPES,
            key=f"add-dataset-upload-{round_}", max_upload_size=limit)
        name = st.text_input("Name (optional)", key=f"add-dataset-name-{round_}",
                             placeholder="default: the name in its dataset.json, else the "
                                         "folder's")
        submitted = st.form_submit_button("Add dataset", type="primary")
    if submitted:
        _add(path.strip(), upload, name.strip() or None)
    if current is not None and current in resources.removable():
        _remove_button(current)


def _add(path: str, upload: UploadedFile | None, name: str | None) -> None:
    if bool(path) == (upload is not None):
        st.error("Give a folder or archive path on the server, or upload an archive "
                 "(one of the two).")
        return
    source = Upload(upload.name, upload) if upload is not None else path
    try:
        with st.spinner("Checking and loading the dataset…"):
            info = resources.add(source, name)
    except TargetError as exc:
        st.error(plain(str(exc)))
        return
    st.session_state[_DONE] = (
        f"Added **{plain(info.name)}**: {info.task}, {info.tables:,} tables, "
        f"{info.queries:,} queries, {info.databases:,} databases. It is selected now and "
        "listed on every page.")
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1
    url.write(dataset=info.name)  # the sidebar picks it on the rerun
    st.rerun()


def _remove_button(name: str) -> None:
    if st.button(f"Remove {name} from the workspace", key="remove-dataset",
                 icon=":material/delete:",
                 help="Forget this added dataset (an uploaded or unpacked archive is "
                      "deleted; a folder added by path is left as it is). Its runs stay."):
        try:
            resources.remove(name)
        except TargetError as exc:
            st.error(plain(str(exc)))
            return
        st.session_state[_DONE] = f"Removed **{plain(name)}**."
        url.drop("dataset")
        st.rerun()
