"""Cell values: reading a cell as text or as a number, writing numbers the way a column writes
them ("12,345", "2:08:15", "+3"), and the numeric perturbations and round thresholds that
false statements and count questions are made of."""

from __future__ import annotations

import random
import re

Cell = str | int | float | None


def cell_text(cell: Cell) -> str:
    return "" if cell is None else str(cell)


def num(cell: Cell) -> float | None:
    """A cell as a number: ints and floats as they are, "12,345", "+3", "−2", "2:08:15" parsed."""
    if cell is None or isinstance(cell, bool):
        return None
    if isinstance(cell, (int, float)):
        return cell
    text = cell.replace(",", "").replace("−", "-").replace("+", "").strip()
    clock = re.fullmatch(r"(\d+):(\d\d):(\d\d)", text)
    if clock:
        hours, minutes, seconds = (int(g) for g in clock.groups())
        return hours * 3600 + minutes * 60 + seconds
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


def hms(seconds: int) -> str:
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def big(value: int) -> str:
    return f"{value:,}"


def signed(value: int) -> str:
    return "0" if value == 0 else (f"+{value}" if value > 0 else f"−{-value}")


def decimals(style: str) -> int:
    return {"f1": 1, "f2": 2}.get(style, 0)


def render(style: str, value: float) -> Cell:
    """A number written the way the column writes it (so a perturbed value looks real)."""
    if style == "big":
        return big(int(round(value)))
    if style == "time":
        return hms(int(round(value)))
    if style in ("f1", "f2"):
        return round(float(value), decimals(style))
    return int(round(value))


def jitter(rng: random.Random, value: float, style: str) -> float:
    """A nearby but different plausible value, used for false statements."""
    for _ in range(30):
        sign = rng.choice((-1, 1))
        if style == "year":
            cand: float = value + sign * rng.randint(1, 6)
        elif style == "time":
            cand = value + sign * rng.randint(15, 240)
        elif style in ("f1", "f2"):
            step = 10 ** -decimals(style)
            cand = round(value + sign * max(step, abs(value) * rng.uniform(0.04, 0.2)),
                         decimals(style))
        elif value < 25:
            cand = value + sign * rng.randint(1, 3)
        else:
            cand = value + sign * max(2, round(value * rng.uniform(0.04, 0.18)))
        if cand > 0 and cell_text(render(style, cand)) != cell_text(render(style, value)):
            return cand
    return value + 1


def _nice_between(lo: float, hi: float, style: str) -> float | None:
    """A round number strictly between lo and hi (exclusive), coarsest first."""
    if style == "time":
        grains: list[float] = [600, 300, 120, 60, 30, 10, 1]
    elif style == "year":
        grains = [10, 5, 1]
    else:
        grains = [10.0 ** p for p in range(7, -3, -1)]
        if style not in ("f1", "f2"):
            grains = [g for g in grains if g >= 1]
    for grain in grains:
        cand = round((lo // grain + 1) * grain, 2)
        if lo < cand < hi:
            return int(cand) if float(cand).is_integer() else cand
    return None


def pick_threshold(rng: random.Random, values: list[float], op: str,
                   style: str) -> tuple[float, int] | None:
    """(threshold, count) with 2 <= count < len(values) and no value equal to the threshold."""
    ordered = sorted(values, reverse=(op == "gt"))
    if len(ordered) < 4:
        return None
    ks = list(range(2, min(9, len(ordered))))
    rng.shuffle(ks)
    for k in ks:
        a, b = ordered[k - 1], ordered[k]
        lo, hi = (b, a) if op == "gt" else (a, b)
        t = _nice_between(lo, hi, style)
        if t is not None:
            return t, k
    return None


def threshold_text(style: str, t: float) -> str:
    if style == "big":
        return big(int(t))
    if style == "time":
        return hms(int(t))
    return str(int(t)) if float(t).is_integer() else str(t)
