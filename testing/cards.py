"""Small builders the tests share."""

RANK_OF_VALUE = {0: "K", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def card(value: int, suit: str = "S") -> str:
    """A card worth `value` points."""
    return RANK_OF_VALUE[value] + suit


def two_cards(total: int, suits: str = "HD") -> tuple[str, str]:
    """Two cards of different rank totalling `total` points (never a pair)."""
    first = 10 if total == 0 else total  # K + total, or K + Q for 0
    if total == 0:
        return ("K" + suits[0], "Q" + suits[1])
    return ("K" + suits[0], RANK_OF_VALUE[first % 10] + suits[1])
