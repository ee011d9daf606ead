"""The connected split: components, no straddling, determinism."""

from __future__ import annotations

import random

from authpairs.tracks.native.split import assign, components


def test_components_join_groups_through_shared_encodings() -> None:
    items = [("a", "e1"), ("b", "e1"), ("b", "e2"), ("c", "e3"), ("d", "e4"), ("d", "e4")]
    comps = {c.key: c for c in components(items)}
    assert set(comps) == {"a|b", "c", "d"}
    assert comps["a|b"].encodings == ("e1", "e2")
    assert comps["a|b"].size == 3
    assert comps["d"].size == 2


def _random_items(rng: random.Random) -> list[tuple[str, str]]:
    items = []
    for _ in range(300):
        group = f"g{rng.randrange(30)}"
        encoding = f"e{rng.randrange(40)}" if rng.random() < 0.04 else f"{group}-own"
        items.append((group, encoding))
    return items


def test_no_group_or_encoding_straddles() -> None:
    rng = random.Random(7)
    for trial in range(20):
        items = _random_items(rng)
        sides = assign(items, seed=f"s{trial}", dev_fraction=0.3)
        by_encoding: dict[str, set[str]] = {}
        for group, encoding in items:
            by_encoding.setdefault(encoding, set()).add(sides[group])
        assert all(len(s) == 1 for s in by_encoding.values())
        dev = sum(1 for g, _ in items if sides[g] == "dev")
        assert dev <= 0.3 * len(items)


def test_deterministic_and_order_free() -> None:
    items = _random_items(random.Random(1))
    first = assign(items, seed="x", dev_fraction=0.4)
    assert assign(list(reversed(items)), seed="x", dev_fraction=0.4) == first
    others = [assign(items, seed=f"y{i}", dev_fraction=0.4) for i in range(5)]
    assert any(o != first for o in others)


def test_zero_fraction_puts_everything_in_test() -> None:
    items = _random_items(random.Random(2))
    assert set(assign(items, dev_fraction=0.0).values()) == {"test"}
