"""Scale-out, as README's "Chroma" section documents it: several users share one
`chroma run` server (TARGET_CHROMA_HOST / TARGET_CHROMA_PORT) and one run store on a
shared path (TARGET_WORKSPACE, so one runs.sqlite).

Every user is a real `python -m target_core run` process with `dense:minilm` on the
bundled demo-sql (43 tables; --limit keeps retrieval short). Alice and Bob start at the
same moment with different top-k, so they are two runs over the same texts and embedder,
hence one Chroma collection. They reach the server through `GatedProxy`, which holds
their "create collection" requests until both have sent one and then their "add"
requests until both have sent one: both processes have then surely found the collection
empty, embedded all 43 tables and written the same ids at once, the race a shared server
must survive. Then the server is restarted on its --path and Carol, a third run started
afterwards straight on the server, must embed nothing. Another process then lists the
runs from the shared store. Last, a user whose server is down must fail, not fall back
to a local Chroma in the workspace.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
from chroma_support import HOST, Gate, GatedProxy, free_port, start_chroma
from chromadb.config import Settings as ChromaSettings

from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.embeddings import get_embedder
from target_core.engine.store import RunStore
from target_core.serialize import table_text, texts_fingerprint
from target_core.table_view import TableView
from target_core.vectorstore import collection_name

ROOT = Path(__file__).resolve().parent.parent
DATASET = "demo-sql"
RUN = ("--dataset", DATASET, "--retriever", "dense:minilm", "--limit", "40")
TOP_K = {"alice": 10, "bob": 5, "carol": 3}
COLLECTIONS = "/api/v2/tenants/default_tenant/databases/default_database/collections"


def user_env(workspace: Path, chroma_port: int) -> dict[str, str]:
    """This environment without TARGET_* / OPENAI_* settings, plus one user's: the shared
    workspace and the Chroma server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TARGET_", "OPENAI_"))}
    return env | {"TARGET_WORKSPACE": str(workspace), "TARGET_CHROMA_HOST": HOST,
                  "TARGET_CHROMA_PORT": str(chroma_port)}


@dataclass
class User:
    """One `python -m target_core ARGS --json` process, output in files (no pipe to fill)."""

    name: str
    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    @classmethod
    def start(cls, name: str, folder: Path, env: dict[str, str], *args: str) -> User:
        folder.mkdir(parents=True, exist_ok=True)
        out, err = folder / f"{name}.stdout", folder / f"{name}.stderr"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen([sys.executable, "-m", "target_core", *args, "--json"],
                                       cwd=ROOT, env=env, stdout=stdout, stderr=stderr)
        return cls(name, process, out, err)

    def finish(self, timeout: float = 120) -> Any:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise AssertionError(f"{self.name}: still running after {timeout:g} s:\n"
                                 f"{self.err.read_text(errors='replace')[-3000:]}") from None
        assert code == 0, f"{self.name} exited {code}:\n{self.err.read_text()[-3000:]}"
        return json.loads(self.out.read_text())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def integrity(path: Path) -> str:
    with closing(sqlite3.connect(path)) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def assert_no_local_chroma(workspace: Path) -> None:
    """Server mode must never fall back to the on-disk store in the workspace."""
    assert not (workspace / "chroma").exists()
    assert not list(workspace.rglob("chroma.sqlite3")), sorted(workspace.rglob("*"))


def server_client(port: int) -> Any:
    return chromadb.HttpClient(host=HOST, port=port,
                               settings=ChromaSettings(anonymized_telemetry=False))


def assert_one_vector_per_table(port: int, expected: str, n_tables: int) -> None:
    """The server holds one collection, for these texts + embedder, with exactly one
    unit vector per table: ids 0..n-1, none twice."""
    (collection,) = server_client(port).list_collections()
    assert collection.name == expected
    assert collection.metadata["n_texts"] == n_tables
    assert collection.count() == n_tables
    stored = collection.get(include=["embeddings"])
    assert sorted(stored["ids"], key=int) == [str(i) for i in range(n_tables)]
    vectors = np.asarray(stored["embeddings"], dtype=np.float32)
    assert vectors.shape == (n_tables, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def run_users(folder: Path, env: dict[str, str], *names: str) -> dict[str, Any]:
    """Start one `run` process per user at once; their --json summaries once all end."""
    users = [User.start(name, folder, env, "run", *RUN, "--top-k", str(TOP_K[name]))
             for name in names]
    try:
        return {user.name: user.finish() for user in users}
    finally:
        for user in users:
            user.stop()


def test_users_share_one_chroma_server_and_one_run_store(tmp_path: Path) -> None:
    shared = tmp_path / "shared"  # the shared path: runs.sqlite of every user
    logs = tmp_path / "logs"
    settings = load_settings(shared, environ={})
    dataset = load_dataset(DATASET, settings)
    n_tables = len(dataset.tables)
    texts = [table_text(t, TableView.preset("default")) for t in dataset.tables]
    expected = collection_name(texts_fingerprint(texts),
                               get_embedder("minilm", settings).fingerprint())
    server_path = tmp_path / "chroma-server"

    # 1. Alice and Bob at once, through the gated proxy
    with start_chroma(server_path, logs / "chroma-1.log") as server:
        creates = Gate("create collection", lambda m, p: m == "POST" and p == COLLECTIONS)
        adds = Gate("add", lambda m, p: m == "POST" and p.startswith(COLLECTIONS)
                    and p.endswith("/add"))
        with GatedProxy(server.port, [creates, adds]) as proxy:
            summaries = run_users(logs, user_env(shared, proxy.port), "alice", "bob")
        assert creates.met and adds.met, (
            f"the two processes did not meet at the server (create {creates.arrived}/2, "
            f"add {adds.arrived}/2): {proxy.requests}")
        assert_one_vector_per_table(server.port, expected, n_tables)

    store = RunStore.in_workspace(shared)
    runs = {name: store.get_run(summary["run_id"]) for name, summary in summaries.items()}
    assert runs["alice"].run_id != runs["bob"].run_id
    for name, run in runs.items():
        assert run.status == "complete", (name, run.status, run.error)
        assert run.n_done == run.n_queries == 40, name
        ids = [r.query_id for r in store.iter_results(run.run_id)]
        assert len(ids) == len(set(ids)) == 40, name
        info = run.index_info
        assert info["collection"] == expected, (name, info)
        assert info["store"] == f"Chroma server at {HOST}:{proxy.port}", (name, info)
        # the gates let neither see the other's vectors: both embedded everything
        assert (info["embedded"], info["cached"]) == (n_tables, 0), (name, info)
    assert integrity(shared / "runs.sqlite") == "ok"
    assert_no_local_chroma(shared)

    # 2. the server restarts on its --path; Carol, straight on it, embeds nothing
    with start_chroma(server_path, logs / "chroma-2.log") as server:
        carol = run_users(logs, user_env(shared, server.port), "carol")["carol"]
        runs["carol"] = store.get_run(carol["run_id"])
        info = runs["carol"].index_info
        assert runs["carol"].status == "complete" and runs["carol"].n_done == 40
        assert info["collection"] == expected, info
        assert info["store"] == f"Chroma server at {HOST}:{server.port}", info
        assert (info["embedded"], info["cached"]) == (0, n_tables), info
        assert_one_vector_per_table(server.port, expected, n_tables)
    assert_no_local_chroma(shared)

    # the three users retrieved from the same vectors: the same tables at every k
    for name, run in runs.items():
        k = TOP_K[name]
        for result in store.iter_results(run.run_id):
            tables = [key for key, _ in result.ranked]
            alices = [key for key, _ in
                      store.get_result(runs["alice"].run_id, result.query_id).ranked]
            assert len(tables) == k and tables == alices[:k], (name, result.query_id)

    # 3. anyone on the shared path sees every user's runs, complete
    lister = User.start("lister", logs, user_env(shared, server.port), "runs")
    try:
        listed = {r["run_id"]: r for r in lister.finish(timeout=60)}
    finally:
        lister.stop()
    assert set(listed) == {run.run_id for run in runs.values()}
    for name, run in runs.items():
        row = listed[run.run_id]
        assert (row["status"], row["n_done"], row["n_queries"]) == ("complete", 40, 40), name
        assert row["config"]["top_k"] == TOP_K[name], name
    assert integrity(shared / "runs.sqlite") == "ok"


def test_a_user_whose_server_is_down_fails_and_stores_nothing_locally(
        tmp_path: Path) -> None:
    """No silent fallback: with TARGET_CHROMA_HOST set and nothing listening, a dense run
    fails at once with how to start the server, and neither a local Chroma nor a run is
    left in the shared workspace."""
    shared = tmp_path / "shared"
    RunStore.in_workspace(shared).db.close()  # the shared store exists, empty
    user = User.start("dave", tmp_path / "logs", user_env(shared, free_port()), "run", *RUN)
    try:
        code = user.process.wait(60)
    finally:
        user.stop()
    assert code != 0
    error = user.err.read_text()
    assert "Chroma server" in error and "chroma run --path" in error, error
    assert RunStore.in_workspace(shared).list_runs() == []
    assert_no_local_chroma(shared)
