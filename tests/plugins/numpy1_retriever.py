"""Retrievers that need numpy 1, run by the tests from a second venv (.venv-plugin, made
by `make plugin-venv`) through `pyenv:` specs: our own environment has numpy 2, so
building any of them in-process fails on purpose. No import of this project."""

import os
import re
import sys

import numpy as np

WORD = re.compile(r"\w+")


def _words(text):
    return set(w for w in WORD.findall(str(text).lower()) if len(w) > 1)


def _need_numpy1():
    assert np.__version__.startswith("1."), f"numpy {np.__version__}, not 1.x"


class Numpy1Retriever:
    """This project's protocol: a table's score is the share of the query's words in
    its text. `fail` makes a method raise ("search") or the process die ("die")."""

    def __init__(self, fail=""):
        _need_numpy1()
        self.fail = fail
        self.texts = []

    def index(self, texts, *, corpus_key, progress=None):
        print("indexing with numpy", np.__version__)  # must not disturb the protocol
        if self.fail == "die":
            sys.stderr.write("dying now\n")
            sys.stderr.flush()
            os._exit(7)
        self.texts = [_words(t) for t in texts]
        for done in range(1, len(texts) + 1, max(1, len(texts) // 3)):
            if progress is not None:
                progress(done, len(texts), "numpy1 index")
        return {"n_texts": len(texts), "seconds": 0.0, "details": {"numpy": np.__version__}}

    def score_all(self, query):
        words = _words(query)
        return np.array([len(words & t) / (len(words) or 1) for t in self.texts],
                        dtype=np.float32)

    def search(self, queries, *, top_k):
        if self.fail == "search":
            raise ValueError("no good query")
        hits = []
        for query in queries:
            scores = self.score_all(query)
            order = np.lexsort((np.arange(len(scores)), -scores))[:top_k]
            hits.append([(i, scores[i]) for i in order])  # numpy ints and floats
        return hits


class Numpy1Embedder:
    """TARGET's standard embedding shape: a hashed bag of words per table and query."""

    def __init__(self, dimension=64):
        _need_numpy1()
        self.dimension = dimension

    def _vector(self, text):
        vector = np.zeros(self.dimension)
        for word in _words(text):
            vector[sum(map(ord, word)) % self.dimension] += 1.0
        return vector + 1e-6

    def embed_corpus(self, dataset_name, entry):
        rows = entry["table"]
        return self._vector(" ".join([str(entry["context"])] + [" ".join(r) for r in rows]))

    def embed_query(self, query, dataset_name):
        return self._vector(query)


class Numpy1Target:
    """TARGET's custom shape: batches of tables in, (database_id, table_id) pairs out."""

    def __init__(self):
        _need_numpy1()
        self.tables = {}
        self.batches = 0

    def embed_corpus(self, dataset_name, corpus):
        for batch in corpus:
            self.batches += 1
            for db, tid, table in zip(batch["database_id"], batch["table_id"], batch["table"],
                                      strict=True):
                self.tables[(db, tid)] = _words(" ".join(" ".join(row) for row in table))

    def retrieve(self, query, dataset_name, top_k, **kwargs):
        words = _words(query)
        keys = list(self.tables)
        scores = np.array([len(words & self.tables[k]) for k in keys])
        return [keys[i] for i in np.argsort(-scores, kind="stable")[:top_k]]
