"""Which library declares the JSON contract (issue 35): msgspec against pydantic v2 against today's hand code, on the
feed's path: validating one feed event's body, the card event a shoe sends most (docs/api.md "The declared
contract" says what was picked and why).

Each library validates the same declaration (the card event's fields with their bounds: `card` by its pattern, `seq`
from 1 to SEQ_MAX, `at` and `feed` by their lengths), twice: from the parsed JSON (a dict, as the route has it after
reading the body) and from the body's bytes (decoding and validating in one pass). Today's path is orjson's loads
then events.parse_event. Prints microseconds per event (the best of several rounds) and each library's ratio to
today's code.

python -m bench.contract_libs
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from typing import Annotated, Literal

import msgspec
import orjson
import pydantic
from typing_extensions import TypedDict

from bench.machine import describe
from scoreboard.events import AT, FEED, parse_event
from scoreboard.seqs import SEQ_MAX

CARD = r"^([AaTtJjQqKk2-9]|10)[SsHhDdCc]$"
BODY = b'{"type": "card", "card": "10h", "seq": 41, "at": "2026-11-22T01:00:01Z", "feed": "shoe-1"}'
EVENT = orjson.loads(BODY)


class CardEvent(msgspec.Struct, forbid_unknown_fields=False):
    type: Literal["card"]
    card: Annotated[str, msgspec.Meta(pattern=CARD)]
    seq: Annotated[int, msgspec.Meta(ge=1, le=SEQ_MAX)]
    at: Annotated[str, msgspec.Meta(max_length=AT.max_chars)] | None = None
    feed: Annotated[str, msgspec.Meta(min_length=1, max_length=FEED.max_chars)] | None = None


class CardEventDict(TypedDict, total=False):  # the same, as a plain dict (what the core passes on)
    type: Literal["card"]
    card: Annotated[str, msgspec.Meta(pattern=CARD)]
    seq: Annotated[int, msgspec.Meta(ge=1, le=SEQ_MAX)]
    at: Annotated[str, msgspec.Meta(max_length=AT.max_chars)]
    feed: Annotated[str, msgspec.Meta(min_length=1, max_length=FEED.max_chars)]


class CardEventModel(pydantic.BaseModel):
    type: Literal["card"]
    card: Annotated[str, pydantic.StringConstraints(pattern=CARD)]
    seq: Annotated[int, pydantic.Field(ge=1, le=SEQ_MAX, strict=True)]
    at: Annotated[str, pydantic.Field(max_length=AT.max_chars)] | None = None
    feed: Annotated[str, pydantic.Field(min_length=1, max_length=FEED.max_chars)] | None = None


class CardEventTyped(TypedDict, total=False):
    type: Literal["card"]
    card: Annotated[str, pydantic.StringConstraints(pattern=CARD)]
    seq: Annotated[int, pydantic.Field(ge=1, le=SEQ_MAX, strict=True)]
    at: Annotated[str, pydantic.Field(max_length=AT.max_chars)]
    feed: Annotated[str, pydantic.Field(min_length=1, max_length=FEED.max_chars)]


STRUCT_DECODER = msgspec.json.Decoder(CardEvent)
DICT_DECODER = msgspec.json.Decoder(CardEventDict)
TYPED = pydantic.TypeAdapter(CardEventTyped)

WAYS: dict[str, dict[str, Callable[[], object]]] = {
    "from the parsed JSON": {
        "hand code (events.parse_event)": lambda: parse_event(EVENT),
        "msgspec (convert to a Struct)": lambda: msgspec.convert(EVENT, CardEvent),
        "msgspec (convert to a TypedDict)": lambda: msgspec.convert(EVENT, CardEventDict),
        "pydantic v2 (BaseModel)": lambda: CardEventModel.model_validate(EVENT),
        "pydantic v2 (TypeAdapter of a TypedDict)": lambda: TYPED.validate_python(EVENT),
    },
    "from the body's bytes": {
        "hand code (orjson.loads + parse_event)": lambda: parse_event(orjson.loads(BODY)),
        "msgspec (decode to a Struct)": lambda: STRUCT_DECODER.decode(BODY),
        "msgspec (decode to a TypedDict)": lambda: DICT_DECODER.decode(BODY),
        "pydantic v2 (BaseModel)": lambda: CardEventModel.model_validate_json(BODY),
        "pydantic v2 (TypeAdapter of a TypedDict)": lambda: TYPED.validate_json(BODY),
    },
}


def per_call(fn: Callable[[], object], n: int = 20_000, rounds: int = 7) -> float:
    """Microseconds for one call: the best of `rounds` runs of `n` (the least disturbed by the machine's load)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - started)
    return best / n * 1e6


def import_ms(module: str, rounds: int = 5) -> float:
    """Milliseconds to import `module` in a fresh interpreter (the best of `rounds`): what a command or the client
    pays at its start."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True) for _ in range(rounds)
    )
    return min(float(run.stdout) for run in runs) * 1e3


def main() -> None:
    print(describe())
    print(f"msgspec {msgspec.__version__}, pydantic {pydantic.__version__}; one card event: {BODY.decode()}")
    for way, candidates in WAYS.items():
        print(f"\n{way}")
        figures = {name: per_call(fn) for name, fn in candidates.items()}
        hand = next(iter(figures.values()))
        for name, micros in figures.items():
            print(f"  {name:42} {micros:7.2f} µs  {hand / micros:5.1f}x today's speed")
    print("\nimport, in a fresh interpreter")
    for module in ("msgspec", "pydantic"):
        print(f"  {module:42} {import_ms(module):7.1f} ms")


if __name__ == "__main__":
    main()
