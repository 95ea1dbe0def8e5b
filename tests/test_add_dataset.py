"""Adding datasets to a workspace (datasets/add.py, added.py, unpack.py): by path or
archive, validated before registering, known by name to every process, removable;
archives unpacked safely (each refusal names the member). CLI: `datasets add|remove`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import query_record, table_record, write_jsonl
from target_core.config import load_settings
from target_core.datasets import discover, list_datasets, load_dataset
from target_core.datasets.add import Upload, add_dataset, remove_dataset
from target_core.datasets.added import read_added, registry_path, upload_dir
from target_core.datasets.unpack import UNPACK_FACTOR, archive_stem, unpack
from target_core.errors import ConfigError, DatasetError, UnknownNameError

ROOT = Path(__file__).resolve().parent.parent
HANDMADE = ROOT / "tests" / "fixtures" / "handmade-qa"


def _folder(root: Path, name: str = "mine", meta_name: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if meta_name:
        (folder / "dataset.json").write_text(json.dumps({"name": meta_name, "task": "qa"}))
    write_jsonl(folder / "corpus.jsonl", [table_record("t1"), table_record("t2")])
    write_jsonl(folder / "queries.jsonl", [query_record("q1", "t1"), query_record("q2", "t2")])
    return folder


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None
         ) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info in members:
            payload = (data or {}).get(info.name)
            if payload is not None:
                info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# --- the registry ------------------------------------------------------------------------

def test_a_folder_added_by_path_resolves_by_name_and_is_listed_as_added(
        tmp_path: Path, settings) -> None:
    folder = _folder(tmp_path)
    info = add_dataset(folder, settings, name="my-data")
    assert (info.name, info.task, info.tables, info.queries, info.source) == (
        "my-data", "qa", 2, 2, "added")
    # another process's view: a fresh Settings reading the same workspace file
    again = load_settings(environ={"TARGET_WORKSPACE": str(settings.workspace)})
    assert discover(again)["my-data"].location == str(folder.resolve())
    assert load_dataset("my-data", again).name == "my-data"
    sources = {i.name: i.source for i in list_datasets(again)}
    assert sources["my-data"] == "added" and sources["demo-qa"] == "demo"
    assert read_added(settings.workspace)["my-data"].how == "path"


def test_the_name_defaults_to_dataset_json_then_the_folder(tmp_path: Path, settings) -> None:
    assert add_dataset(_folder(tmp_path, "a", meta_name="named-in-json"), settings).name \
        == "named-in-json"
    assert add_dataset(_folder(tmp_path, "plain-folder"), settings).name == "plain-folder"


def test_target_datasets_sources_are_marked(tmp_path: Path) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                      "TARGET_DATASETS": str(HANDMADE)})
    entry = discover(settings)["handmade-qa"]
    assert entry.source == "TARGET_DATASETS"


def test_a_bad_dataset_is_never_registered(tmp_path: Path, settings) -> None:
    folder = _folder(tmp_path)
    write_jsonl(folder / "queries.jsonl", [query_record("q1", "t1"), {"query_id": "q2"}])
    with pytest.raises(DatasetError, match=r"queries.jsonl, line 2"):
        add_dataset(folder, settings)
    assert not registry_path(settings.workspace).exists() or not read_added(settings.workspace)
    with pytest.raises(DatasetError, match="not a dataset"):
        add_dataset(tmp_path, settings)  # a folder without corpus.jsonl
    with pytest.raises(DatasetError, match="no such folder"):
        add_dataset(tmp_path / "nowhere", settings)
    assert "mine" not in discover(settings)


def test_taken_and_malformed_names_are_refused(tmp_path: Path, settings) -> None:
    folder = _folder(tmp_path)
    with pytest.raises(ConfigError, match="'demo-qa' is taken"):
        add_dataset(folder, settings, name="demo-qa")
    with pytest.raises(ConfigError, match="dataset name '../x'"):
        add_dataset(folder, settings, name="../x")
    add_dataset(folder, settings, name="once")
    with pytest.raises(ConfigError, match="already dataset 'once'"):
        add_dataset(folder, settings, name="twice")


def test_remove_forgets_an_added_folder_and_leaves_its_files(tmp_path: Path, settings) -> None:
    folder = _folder(tmp_path)
    add_dataset(folder, settings)
    gone = remove_dataset("mine", settings)
    assert gone.how == "path" and (folder / "corpus.jsonl").is_file()
    assert "mine" not in discover(settings)
    with pytest.raises(ConfigError, match="'demo-qa' is not an added one"):
        remove_dataset("demo-qa", settings)
    with pytest.raises(UnknownNameError, match="unknown added dataset 'mine'"):
        remove_dataset("mine", settings)


def test_a_damaged_registry_file_is_named(settings) -> None:
    settings.workspace.mkdir(parents=True)
    registry_path(settings.workspace).write_text("{not json")
    with pytest.raises(ConfigError, match="datasets.json is damaged"):
        discover(settings)


# --- archives ---------------------------------------------------------------------------

def test_a_zip_with_one_top_folder_is_unpacked_registered_and_removed(
        tmp_path: Path, settings) -> None:
    files = _files(_folder(tmp_path / "src"))
    archive = _zip(tmp_path / "upload.zip", {f"top/{n}": d for n, d in files.items()}
                   | {"__MACOSX/top/._corpus.jsonl": b"junk"})
    info = add_dataset(Upload("upload.zip", archive.open("rb")), settings)
    assert (info.name, info.tables, info.queries) == ("top", 2, 2)
    location = Path(discover(settings)["top"].location)
    assert location == upload_dir(settings.workspace) / "top"
    assert sorted(p.name for p in location.iterdir()) == ["corpus.jsonl", "queries.jsonl"]
    assert read_added(settings.workspace)["top"].how == "upload"
    remove_dataset("top", settings)
    assert not location.exists()
    assert [p.name for p in upload_dir(settings.workspace).iterdir()] == []  # no leftovers


def test_files_at_the_archive_root_take_the_archive_name(tmp_path: Path, settings) -> None:
    files = _files(_folder(tmp_path / "src"))
    archive = tmp_path / "flat-data.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    info = add_dataset(archive, settings)  # an archive on this machine, by path
    assert info.name == "flat-data" and info.tables == 2
    assert read_added(settings.workspace)["flat-data"].how == "archive"


def test_a_bad_dataset_in_an_archive_is_named_inside_it_and_nothing_stays(
        tmp_path: Path, settings) -> None:
    files = _files(_folder(tmp_path / "src"))
    files["queries.jsonl"] += b'{"query_id": "q3", "query": "x", "answer": "y", ' \
                              b'"table_id": "missing", "database_id": "wiki"}\n'
    archive = _zip(tmp_path / "bad.zip", {f"bad/{n}": d for n, d in files.items()})
    with pytest.raises(DatasetError, match=r"^bad.zip:queries.jsonl, line 3"):
        add_dataset(Upload("bad.zip", archive.open("rb")), settings)
    assert "bad" not in discover(settings)
    assert [p.name for p in upload_dir(settings.workspace).iterdir()] == []


@pytest.mark.parametrize(("member", "message"), [
    ("../evil.txt", r"member '../evil.txt' has '..' in its path"),
    ("top/../../evil.txt", r"member 'top/../../evil.txt' has '..'"),
    ("/etc/evil.txt", r"member '/etc/evil.txt' has an absolute path"),
    ("C:/evil.txt", r"member 'C:/evil.txt' has an absolute path"),
])
def test_zip_paths_leaving_the_folder_are_refused(tmp_path: Path, member: str,
                                                  message: str) -> None:
    archive = _zip(tmp_path / "evil.zip", {"corpus.jsonl": b"", member: b"x"})
    dest = tmp_path / "out"
    with pytest.raises(DatasetError, match=message):
        unpack(archive, dest, 1_000_000)
    assert not dest.exists() and not (tmp_path / "evil.txt").exists()


def test_a_symlink_in_a_zip_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        info = zipfile.ZipInfo("corpus.jsonl")
        info.external_attr = (0o120777 << 16)  # S_IFLNK
        zipped.writestr(info, "/etc/passwd")
    with pytest.raises(DatasetError, match="member 'corpus.jsonl' is a symbolic link"):
        unpack(archive, tmp_path / "out", 1_000_000)


@pytest.mark.parametrize(("kind", "message"), [
    (tarfile.SYMTYPE, "is a symbolic link"), (tarfile.LNKTYPE, "is a hard link"),
    (tarfile.CHRTYPE, "is a device or special file"),
    (tarfile.FIFOTYPE, "is a device or special file"),
])
def test_links_and_devices_in_a_tar_are_refused(tmp_path: Path, kind: bytes,
                                                message: str) -> None:
    link = tarfile.TarInfo("top/corpus.jsonl")
    link.type = kind
    link.linkname = "/etc/passwd"
    archive = _tar(tmp_path / "links.tar.gz", [link])
    with pytest.raises(DatasetError, match=f"member 'top/corpus.jsonl' {message}"):
        unpack(archive, tmp_path / "out", 1_000_000)
    assert not (tmp_path / "out").exists()


def test_too_big_archives_are_refused(tmp_path: Path, settings) -> None:
    archive = _zip(tmp_path / "big.zip", {"corpus.jsonl": b"x" * 5_000})
    with pytest.raises(DatasetError, match=r"big.zip: is .* over the 0.001 MB limit"):
        unpack(archive, tmp_path / "a", 1_000)
    # small packed, large unpacked (a zip bomb): the declared sizes are summed first
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("corpus.jsonl", b"0" * (UNPACK_FACTOR * 20_000 + 1))
    assert bomb.stat().st_size < 20_000
    with pytest.raises(DatasetError, match=r"unpacks to more than 0.2 MB \(at member "
                                           r"'corpus.jsonl'\)"):
        unpack(bomb, tmp_path / "b", 20_000)
    # an upload larger than TARGET_UPLOAD_MAX_MB is refused while it is saved
    small = load_settings(environ={"TARGET_WORKSPACE": str(settings.workspace),
                                   "TARGET_UPLOAD_MAX_MB": "1"})
    with pytest.raises(DatasetError, match=r"^huge.zip: is over the 1 MB limit"):
        add_dataset(Upload("huge.zip", io.BytesIO(b"0" * 1_000_001)), small)
    assert [p.name for p in upload_dir(settings.workspace).iterdir()] == []


def test_not_an_archive_and_no_dataset_inside(tmp_path: Path, settings) -> None:
    with pytest.raises(DatasetError, match="^notes.zip: not a zip or tar archive"):
        add_dataset(Upload("notes.zip", io.BytesIO(b"just text")), settings)
    archive = _zip(tmp_path / "empty-ish.zip", {"readme.txt": b"hello"})
    with pytest.raises(DatasetError, match="holds no dataset"):
        add_dataset(archive, settings)


def test_archive_stem() -> None:
    assert archive_stem("my-data.tar.gz") == "my-data"
    assert archive_stem("x.TGZ") == "x" and archive_stem("a.b.zip") == "a.b"


# --- the CLI ------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TARGET_")}
    return subprocess.run([sys.executable, "-m", "target_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_add_list_run_remove(tmp_path: Path) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    folder = _folder(tmp_path)
    added = _cli("datasets", "add", str(folder), "--name", "cli-data", "--json", *ws)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["tables"] == 2
    listed = _cli("datasets", *ws)
    assert listed.stdout.splitlines()[0].split()[-1] == "source"
    assert any(line.split()[0] == "cli-data" and line.split()[-1] == "added"
               for line in listed.stdout.splitlines())
    run = _cli("run", "--dataset", "cli-data", "--retriever", "bm25", "--json", *ws)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["n_queries"] == 2
    removed = _cli("datasets", "remove", "cli-data", *ws)
    assert removed.returncode == 0 and "folder is left" in removed.stdout
    again = _cli("datasets", "remove", "cli-data", *ws)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.startswith("error: unknown added dataset 'cli-data'")


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    evil = _zip(tmp_path / "evil.zip", {"../x": b"x"})
    for args, start in [
        (("datasets", "add", str(evil)), f"error: {evil}: member '../x' has '..'"),
        (("datasets", "add"), "error: `datasets add` needs a PATH"),
        (("datasets", "remove", "x", "--name", "y"), "error: --name is for `datasets add`"),
    ]:
        result = _cli(*args, *ws)
        assert result.returncode == 2, args
        assert result.stderr.startswith(start), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# --- the Datasets page (AppTest; uploads are driven in chromium: test_browser_add_dataset) --

def _path_field(at):
    return next(t for t in at.text_input if t.label == "Folder or archive on the server")


def _submit(at, label: str):
    next(b for b in at.button if b.label == label).click()
    return at.run()


def test_the_page_adds_a_folder_selects_it_and_removes_it(app, tmp_path: Path) -> None:
    folder = _folder(tmp_path / "src", "page-data")
    at = app("pages/datasets.py")
    assert "Add a dataset" in [e.label for e in at.expander]
    _path_field(at).set_value(str(tmp_path / "nowhere"))
    at = _submit(at, "Add dataset")
    (error,) = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped
    assert error == f"{tmp_path / 'nowhere'}: no such folder or file"
    _path_field(at).set_value(str(folder))
    at = _submit(at, "Add dataset")
    assert not at.exception and not at.error
    assert "Added **page\\-data**: qa, 2 tables, 2 queries" in at.success[0].value
    assert at.sidebar.selectbox(key="dataset").value == "page-data"
    assert at.title[0].value == "page-data"
    at = _submit(at, "Remove page-data from the workspace")
    assert "Removed **page\\-data**" in at.success[0].value
    assert "page-data" not in at.sidebar.selectbox(key="dataset").options
    assert (folder / "corpus.jsonl").is_file()
    _path_field(at).set_value(str(folder))
    at = _submit(at, "Add dataset")
    assert _path_field(at).value == ""  # emptied after an addition
