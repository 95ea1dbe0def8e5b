"""`Gen`: every candidate item (lookup, comparison, superlative, count, aggregate, two-table
comparison) one table supports, in the normal or the paraphrased wording, each with its
answer, its true statement and the false statements that perturb it."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .claims import Claim, Evidence, Item, passes
from .model import Attr, Measure, Tab
from .text import fill, join_names, number_word, ordinal, question, sentence
from .values import cell_text, decimals, jitter, num, pick_threshold, render, threshold_text


class Gen:
    """Builds candidate items for one table in the normal or the paraphrased wording."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    # phrasing helpers
    @staticmethod
    def vals(tab: Tab, para: bool) -> dict[str, str]:
        values = dict(tab.ph)
        values["ent"], values["ents"] = tab.topic.ent
        if para:
            values["ctx"] = tab.ph.get("ctx_para", "")
            values["ent"] = tab.ph.get("ent_para", values["ent"])
            values["ents"] = tab.ph.get("ents_para", values["ents"])
        return values

    @staticmethod
    def name(tab: Tab, row: int, para: bool, key: str | None = None) -> dict[str, str]:
        e = cell_text(tab.cell(row, key or tab.topic.key))
        topic = tab.topic
        short = e.removesuffix(topic.short_suffix) if topic.short_suffix else e
        parts = {"e": e, "s": short, "o": ordinal(e)}
        if para:
            shown = fill(topic.para_name_tpl, parts)
            return {"e": shown, "E": shown, "e_raw": e}
        return {"e": e, "E": fill(topic.name_tpl, parts), "e_raw": e}

    @staticmethod
    def unique_keys(tab: Tab, key: str | None = None) -> bool:
        keys = [cell_text(c) for c in tab.column(key or tab.topic.key)]
        return len(set(keys)) == len(keys)

    # builders
    def lookup(self, tab: Tab, m: Measure, row: int, para: bool) -> Item | None:
        spec = m.para if para else m
        cell = tab.cell(row, m.col)
        if spec is None or cell is None or not self.unique_keys(tab):
            return None
        key = tab.topic.key
        v = cell_text(cell)
        who = self.name(tab, row, para)
        shown = self.vals(tab, para) | who | {"v": v, "unit": m.unit}
        normal = self.vals(tab, False) | self.name(tab, row, False) | {"v": v, "unit": m.unit}
        claim = Claim("cells", tab, cells=((row, key, who["e_raw"]), (row, m.col, v)))
        falsifiers: list[tuple[str, Claim, Evidence | None]] = []
        wrong = cell_text(render(m.style, jitter(self.rng, num(cell) or 0, m.style)))
        if wrong != v:
            falsifiers.append((sentence(fill(spec.s, shown | {"v": wrong})),
                               Claim("cells", tab, cells=((row, key, who["e_raw"]),
                                                          (row, m.col, wrong))), None))
        others = [r for r in range(len(tab.rows))
                  if r != row and tab.cell(r, m.col) is not None
                  and cell_text(tab.cell(r, m.col)) != v]
        if others:
            other = self.rng.choice(others)
            them = self.name(tab, other, para)
            falsifiers.append((sentence(fill(spec.s, shown | them)),
                               Claim("cells", tab, cells=((other, key, them["e_raw"]),
                                                          (other, m.col, v))),
                               [(tab, other, key), (tab, other, m.col)]))
        return Item("lookup", [tab], question(fill(spec.q, shown)), sentence(fill(m.s, normal)),
                    sentence(fill(spec.s, shown)), claim, falsifiers,
                    [(tab, row, key), (tab, row, m.col)], "easy")

    def lookup_attr(self, tab: Tab, a: Attr, row: int, para: bool, standalone: bool = False
                    ) -> Item | None:
        spec = a if standalone else a.para if para else a
        key = a.key or tab.topic.key
        if spec is None or not self.unique_keys(tab, key):
            return None
        if a.only and cell_text(tab.cell(row, key)) not in a.only:
            return None
        texts = [cell_text(tab.cell(row, c)) for c in a.cols]
        if any(not t for t in texts):
            return None
        who = self.name(tab, row, para, key)
        numbered = {str(i): t for i, t in enumerate(texts)}
        shown = self.vals(tab, para) | who | numbered
        normal = self.vals(tab, False) | self.name(tab, row, False, key) | numbered
        answer_tpl = a.a or a.s
        mentions_key = "{e}" in answer_tpl or "{E}" in answer_tpl
        base_cells = [(row, c, t) for c, t in zip(a.cols, texts, strict=True)]
        if mentions_key:
            base_cells.insert(0, (row, key, who["e_raw"]))
        claim = Claim("cells", tab, cells=tuple(base_cells))
        falsifiers: list[tuple[str, Claim, Evidence | None]] = []
        if a.swap and len(texts) > 1 and texts[0] != texts[1]:
            swapped = {"0": texts[1], "1": texts[0]}
            cells = [(row, a.cols[0], texts[1]), (row, a.cols[1], texts[0])]
            falsifiers.append((sentence(fill(spec.s, shown | swapped)),
                               Claim("cells", tab, cells=tuple(cells)), None))
        alternatives = sorted({cell_text(c) for c in tab.column(a.cols[0])} - {*texts, ""})
        if alternatives:
            wrong = self.rng.choice(alternatives)
            falsifiers.append((sentence(fill(spec.s, shown | {"0": wrong})),
                               Claim("cells", tab, cells=((row, a.cols[0], wrong),)), None))
        evidence = [(tab, row, c) for c in a.cols]
        if mentions_key:
            evidence.insert(0, (tab, row, key))
        return Item("lookup", [tab], question(fill(spec.q, shown)),
                    sentence(fill(answer_tpl, normal)), sentence(fill(spec.s, shown)), claim,
                    falsifiers, evidence, "easy" if len(a.cols) == 1 else "medium")

    def extreme(self, tab: Tab, m: Measure, which: str, para: bool) -> Item | None:
        spec = m.para if para else m
        if spec is None or (para and "para_unique" not in tab.ph) or not self.unique_keys(tab):
            return None
        if not (spec.most and spec.least):
            return None
        values = [num(c) for c in tab.column(m.col)]
        present = [v for v in values if v is not None]
        if len(present) < 3:
            return None
        best = max(present) if which == "max" else min(present)
        if present.count(best) > 1:
            return None
        row = values.index(best)
        phrase = {"max": spec.most, "min": spec.least}
        opposite = "min" if which == "max" else "max"
        v = cell_text(tab.cell(row, m.col))
        shown = self.vals(tab, para) | self.name(tab, row, para) | {"most": phrase[which]}
        nphrase = {"max": m.most, "min": m.least}
        normal = (self.vals(tab, False) | self.name(tab, row, False)
                  | {"most": nphrase[which], "v": v, "unit": m.unit})
        ordered = sorted((r for r, x in enumerate(values) if x is not None and r != row),
                         key=lambda r: -values[r] if which == "max" else values[r])  # type: ignore
        runner = ordered[0] if self.rng.random() < 0.6 else self.rng.choice(ordered)
        key = tab.topic.key
        cells = [(tab, row, key), (tab, row, m.col)]
        other_end = (max if opposite == "max" else min)(
            (r for r, x in enumerate(values) if x is not None), key=lambda r: values[r])
        falsifiers: list[tuple[str, Claim, Evidence | None]] = [
            (sentence(fill(spec.s_max, shown | self.name(tab, runner, para))),
             Claim("extreme", tab, m.col, rows=((tab, runner),), op=which),
             [(tab, runner, key), (tab, runner, m.col), *cells]),
            (sentence(fill(spec.s_max, shown | {"most": phrase[opposite]})),
             Claim("extreme", tab, m.col, rows=((tab, row),), op=opposite),
             [*cells, (tab, other_end, key), (tab, other_end, m.col)]),
        ]
        answer = sentence(fill(m.s_max, normal) + ", " + fill(m.with_, normal))
        return Item("superlative", [tab], question(fill(spec.q_max, shown)), answer,
                    sentence(fill(spec.s_max, shown)),
                    Claim("extreme", tab, m.col, rows=((tab, row),), op=which), falsifiers,
                    cells, "medium")

    def compare(self, tab: Tab, m: Measure, rows: Sequence[int], para: bool) -> Item | None:
        spec = m.para if para else m
        if spec is None or not spec.more or len(rows) < 2 or not self.unique_keys(tab):
            return None
        r1, r2 = self.rng.sample(list(rows), 2)
        v1, v2 = num(tab.cell(r1, m.col)), num(tab.cell(r2, m.col))
        if v1 is None or v2 is None or v1 == v2:
            return None
        hi, lo = (r1, r2) if v1 > v2 else (r2, r1)
        use_more = self.rng.random() < 0.5
        first, second = (hi, lo) if use_more else (lo, hi)
        word, op = (spec.more, ">") if use_more else (spec.less, "<")

        def says(a: int, b: int, phrase: str, sp: Measure, p: bool) -> str:
            names = {"A": self.name(tab, a, p)["E"], "B": self.name(tab, b, p)["E"]}
            return sentence(fill(sp.s_cmp, self.vals(tab, p) | names | {"more": phrase}))

        names = {"A": self.name(tab, r1, para)["E"], "B": self.name(tab, r2, para)["E"]}
        q = question(fill(spec.q_cmp, self.vals(tab, para) | names | {"more": spec.more}))
        vh, vl = cell_text(tab.cell(hi, m.col)), cell_text(tab.cell(lo, m.col))
        answer = sentence(says(hi, lo, m.more, m, False)[:-1]
                          + f", with {vh}{m.unit} against {vl}{m.unit}")
        claim = Claim("compare", tab, m.col, rows=((tab, first), (tab, second)), op=op)
        falsifiers: list[tuple[str, Claim, Evidence | None]] = [
            (says(second, first, word, spec, para),
             Claim("compare", tab, m.col, rows=((tab, second), (tab, first)), op=op), None)]
        key = tab.topic.key
        evidence = [(tab, r1, key), (tab, r1, m.col), (tab, r2, key), (tab, r2, m.col)]
        return Item("comparison", [tab], q, answer, says(first, second, word, spec, para),
                    claim, falsifiers, evidence, "medium")

    def count(self, tab: Tab, m: Measure, para: bool) -> Item | None:
        spec = m.para if para else m
        if spec is None or spec.count is None or (para and "para_unique" not in tab.ph):
            return None
        values = [num(c) for c in tab.column(m.col)]
        picked = pick_threshold(self.rng, [v for v in values if v is not None], m.count_op,
                                m.style)
        if picked is None:
            return None
        t, n = picked
        rows = [r for r, v in enumerate(values) if v is not None and passes(v, m.count_op, t)]
        tt = threshold_text(m.style, t)

        def says(k: int, sp: Measure, p: bool) -> str:
            return fill("{N} {ents} {ctx} {count}", self.vals(tab, p) | {
                "N": number_word(k), "count": fill(sp.count or "", {"t": tt})})

        q = question(fill("How many {ents} {ctx} {count}?", self.vals(tab, para) | {
            "count": fill(spec.count, {"t": tt})}))
        names = [self.name(tab, r, False)["E"] for r in rows]
        answer = sentence(says(n, m, False) + (": " + join_names(names) if n <= 8 else ""))
        wrong = n + self.rng.choice((-2, -1, 1, 2)) if n > 3 else n + self.rng.choice((1, 2))
        falsifiers: list[tuple[str, Claim, Evidence | None]] = [
            (sentence(says(wrong, spec, para)),
             Claim("count", tab, m.col, op=m.count_op, arg=t, value=wrong), None)]
        key = tab.topic.key
        evidence = [x for r in rows for x in ((tab, r, key), (tab, r, m.col))]
        return Item("count", [tab], q, answer, sentence(says(n, spec, para)),
                    Claim("count", tab, m.col, op=m.count_op, arg=t, value=n), falsifiers,
                    evidence, "medium" if n <= 3 else "hard")

    def count_attr(self, tab: Tab, a: Attr, para: bool) -> Item | None:
        spec = a.para if para else a
        if spec is None or spec.count is None or a.count is None:
            return None
        if para and "para_unique" not in tab.ph and "{x}" not in spec.count[0]:
            return None
        cells = [cell_text(c) for c in tab.column(a.cols[0])]
        repeated = [x for x in dict.fromkeys(cells) if x and cells.count(x) >= 2]
        if not repeated:
            return None
        x = self.rng.choice(repeated)
        n = cells.count(x)

        def says(k: int, template: str, p: bool) -> str:
            return sentence(fill(template, self.vals(tab, p) | {
                "x": x, "N": number_word(k), "n": number_word(k)}))

        wrong = n + self.rng.choice((-1, 1, 2)) if n > 2 else n + self.rng.choice((1, 2))
        rows = [r for r, c in enumerate(cells) if c == x]
        q = question(fill(spec.count[0], self.vals(tab, para) | {"x": x}))
        return Item("count", [tab], q, says(n, a.count[1], False),
                    says(n, spec.count[1], para),
                    Claim("count", tab, a.cols[0], op="eq", arg=x, value=n),
                    [(says(wrong, spec.count[1], para),
                      Claim("count", tab, a.cols[0], op="eq", arg=x, value=wrong), None)],
                    [(tab, r, a.cols[0]) for r in rows], "medium" if n <= 3 else "hard")

    def aggregate(self, tab: Tab, m: Measure, how: str, para: bool) -> Item | None:
        spec = m.para if para else m
        templates = None if spec is None else (spec.total if how == "sum" else spec.avg)
        normal_tpl = m.total if how == "sum" else m.avg
        if templates is None or normal_tpl is None:
            return None
        if para and "para_unique" not in tab.ph:
            return None
        values = [num(c) for c in tab.column(m.col)]
        if any(v is None for v in values) or len(values) < 3:
            return None
        total = sum(v for v in values if v is not None)
        digits = decimals(m.style) if how == "sum" else 1
        value = round(total if how == "sum" else total / len(values), digits)

        def shown(x: float, p: bool) -> dict[str, str]:
            if how == "sum":
                text = cell_text(render(m.style, x))
            else:
                text = f"{x:,.1f}" if m.style == "big" else f"{x:.1f}"
            return self.vals(tab, p) | {"v": text}

        wrong = round(jitter(self.rng, value, "f1" if how == "avg" else m.style), digits)
        claim_kind = "sum" if how == "sum" else "avg"
        return Item("aggregate", [tab], question(fill(templates[0], shown(value, para))),
                    sentence(fill(normal_tpl[1], shown(value, False))),
                    sentence(fill(templates[1], shown(value, para))),
                    Claim(claim_kind, tab, m.col, arg=digits, value=value),
                    [(sentence(fill(templates[1], shown(wrong, para))),
                      Claim(claim_kind, tab, m.col, arg=digits, value=wrong), None)],
                    [(tab, r, m.col) for r in range(len(values))], "hard")

    def cross(self, t1: Tab, t2: Tab, m: Measure, entity: str) -> Item | None:
        """The same entity in two sibling tables: a two-table question (gold is both)."""
        key = t1.topic.key
        r1 = [cell_text(c) for c in t1.column(key)].index(entity)
        r2 = [cell_text(c) for c in t2.column(key)].index(entity)
        v1, v2 = num(t1.cell(r1, m.col)), num(t2.cell(r2, m.col))
        if v1 is None or v2 is None or v1 == v2:
            return None
        who = self.name(t1, r1, False)
        c1, c2 = t1.ph["ctx"], t2.ph["ctx"]
        q = question(fill(m.q, self.vals(t1, False) | who | {"ctx": f"{c1} and {c2}"}))
        x1, x2 = cell_text(t1.cell(r1, m.col)), cell_text(t2.cell(r2, m.col))
        first = sentence(fill(m.s, self.vals(t1, False) | who | {"v": x1}))
        answer = sentence(first[:-1] + f", compared with {x2}{m.unit} {c2}")
        use_more = v1 > v2

        def says(a: str, b: str, phrase: str) -> str:
            return sentence(f"{who['E']} {phrase} {a} than {b}")

        phrase = m.more if self.rng.random() < 0.5 else m.less
        truth = (phrase == m.more) == use_more
        true_text = says(c1, c2, phrase) if truth else says(c2, c1, phrase)
        false_text = says(c2, c1, phrase) if truth else says(c1, c2, phrase)
        op = ">" if phrase == m.more else "<"
        order = ((t1, r1), (t2, r2)) if truth else ((t2, r2), (t1, r1))
        claim = Claim("compare", t1, m.col, rows=order, op=op)
        wrong = Claim("compare", t1, m.col, rows=(order[1], order[0]), op=op)
        evidence = [(t1, r1, key), (t1, r1, m.col), (t2, r2, key), (t2, r2, m.col)]
        return Item("comparison", [t1, t2], q, answer, true_text, claim,
                    [(false_text, wrong, None)], evidence, "hard")

    def candidates(self, tab: Tab, para: bool, rows: Sequence[int]) -> list[Item]:
        """Every kind of item this table supports, entity rows drawn from `rows`."""
        rows = list(rows)
        out: list[Item | None] = []
        topic = tab.topic
        for m in topic.measures:
            if m.col not in tab.header:
                continue
            for r in self.rng.sample(rows, min(2, len(rows))):
                out.append(self.lookup(tab, m, r, para))
            out.append(self.compare(tab, m, rows, para))
            out.append(self.extreme(tab, m, "max", para))
            out.append(self.extreme(tab, m, "min", para))
            out.append(self.count(tab, m, para))
            out.append(self.aggregate(tab, m, "sum", para))
            out.append(self.aggregate(tab, m, "avg", para))
        attrs = [(a, False) for a in topic.attrs]
        if para:
            attrs += [(a, True) for a in topic.para_attrs]
        for a, standalone in attrs:
            if not all(c in tab.header for c in a.cols):
                continue
            key = a.key or topic.key
            allowed = [r for r in rows
                       if not a.only or cell_text(tab.cell(r, key)) in a.only]
            for r in self.rng.sample(allowed, min(2, len(allowed))):
                out.append(self.lookup_attr(tab, a, r, para, standalone))
            if not standalone:
                out.append(self.count_attr(tab, a, para))
        return [i for i in out if i is not None and i.claim.holds()]
