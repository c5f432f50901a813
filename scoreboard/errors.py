"""The one error type the core raises: a refusal a dealer or operator can read.

`code` is a stable machine name; `status` is the HTTP status the service answers with
(400 malformed, 409 out of order or conflict, 422 against the rules of the game).
"""


class Refusal(Exception):
    status = 422

    def __init__(self, message: str, code: str = "against_rules", status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field  # the event's field that is wrong, when one is (a program can point at it)
        if status is not None:
            self.status = status

    def as_json(self) -> dict[str, str]:
        body = {"error": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return body


class Malformed(Refusal):
    """The input cannot be read at all (a bad card, a missing field, wrong types)."""

    status = 400

    def __init__(self, message: str, code: str = "malformed", field: str | None = None):
        super().__init__(message, code, field=field)


class BadValue(Malformed):
    """A named value that is not accepted (a table's setting, a query option): the answer names it under `key`, so a
    program can point at it."""

    key = "field"

    def __init__(self, name: str, message: str, code: str):
        super().__init__(message, code)
        self.name = name

    def as_json(self) -> dict[str, str]:
        return {**super().as_json(), self.key: self.name}


def whole_number(value: object, allowed: range, name: str, code: str, gloss: str = "") -> int:
    """`value` when it is a whole number in `allowed` (True and False are not numbers here); else a 400 naming
    `name` and the range (`gloss` says what the range means, when it needs saying)."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise Refusal(
            f"{name} must be a whole number from {allowed.start} to {allowed.stop - 1}{gloss}, not {value!r}",
            code,
            status=400,
        )
    return value


class OutOfOrder(Refusal):
    """The input is well formed but does not fit the table's state right now."""

    status = 409

    def __init__(self, message: str, code: str = "out_of_order"):
        super().__init__(message, code)
