"""The bytes a seq's digest is taken of, and the stored text of an event: orjson where it writes what the
standard library writes, the standard library elsewhere. Digests in logs written before must still match."""

import json
import random

from scoreboard.service.log import Record
from scoreboard.table import canonical_json, digest


def stdlib(content: dict) -> bytes:
    """The form every digest in a log has been taken of."""
    return json.dumps(content, sort_keys=True, separators=(",", ":")).encode()


def test_every_ascii_character_and_others_give_the_standard_librarys_bytes():
    for code in range(128):  # the control characters and DEL, which the two libraries escape differently
        content = {"reason": f"a{chr(code)}b", "type": "void"}
        assert canonical_json(content) == stdlib(content), code
    for text in ("莊家", "é", "\u2028", "\ud800", "😀"):  # past ASCII, a lone surrogate, past the BMP
        assert canonical_json({"feed": text}) == stdlib({"feed": text}), text
    assert canonical_json({"n": 2**70}) == stdlib({"n": 2**70})  # past 64 bits


def test_random_nested_contents_give_the_standard_librarys_bytes():
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(0, 0x80)] + ["é", "莊", "\x85", "\u2028"]

    def value(depth: int):
        kind = rng.randrange(7 if depth < 3 else 5)
        if kind == 0:
            return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
        if kind == 1:
            return rng.randrange(-(2**60), 2**60)
        if kind == 2:
            return rng.choice([True, False, None])
        if kind == 3:
            return rng.randrange(2**53)
        if kind == 4:
            return "".join(rng.choice("abcXYZ09 ") for _ in range(rng.randrange(10)))
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {"".join(rng.choice(alphabet) for _ in range(3)): value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(3000):
        content = {f"k{rng.randrange(10)}": value(0) for _ in range(rng.randrange(1, 6))}
        assert canonical_json(content) == stdlib(content), content


def test_a_digest_leaves_out_what_the_service_adds():
    event = {"type": "card", "card": "9H", "seq": 7}
    added = {**event, "received_at": 1763850000.25, "at": "10:00", "operator": "x"}
    assert digest(event) != digest({**event, "card": "9D"})
    assert digest(added) == digest({k: v for k, v in added.items() if k != "received_at" and k != "at"})


def test_stored_event_text_reads_back_as_the_event():
    rng = random.Random(9)
    for _ in range(500):
        event = {
            "type": "card",
            "card": rng.choice(["9H", "TD", "AS"]),
            "seq": rng.randrange(1, 2**53),
            "feed": "".join(rng.choice('ab莊\t\x7f"\\') for _ in range(5)),
            "received_at": rng.uniform(0, 2e9),
            "rules": {"decks": 8, "tiny": rng.random() * 1e-9},
        }
        text = Record("T1", 1, 1, event, "card", "", event["seq"], "d").values(0.0)[4]
        assert json.loads(text) == event
        assert json.loads(text) == json.loads(json.dumps(event, ensure_ascii=False))
    huge = {"type": "note", "n": 2**70}  # past 64 bits: written by the standard library
    text = Record("T1", 1, 1, huge, "note", "", None, None).values(0.0)[4]
    assert text == '{"type":"note","n":1180591620717411303424}'
