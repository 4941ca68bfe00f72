"""Bad arguments found in Python raised as the native library's errors: moe_harness.Error with exit_code 2, where,
key, problem and fix, and the message `WHERE: key 'KEY': PROBLEM. Fix: FIX` (docs/reliability.md "Bad input"), so
no argument reaches pybind's generic "incompatible function arguments" or a raw cast error."""
import contextlib
import os

from moe_harness._moe_harness import Error

U64_MAX = (1 << 64) - 1
_U64_RANGE = "[0, 18446744073709551615]"


def bad_input(where, key, problem, fix):
    """A moe_harness.Error of exit code 2 (bad input), built as the native library builds its own."""
    e = Error(f"{where}: key '{key}': {problem}. Fix: {fix}")
    e.exit_code, e.where, e.key, e.problem, e.fix = 2, where, key, problem, fix
    return e


def check_seed(seed, where, key="seed"):
    """None, or an int in [0, 2^64 - 1] (never wrapped, never a bool)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise bad_input(where, key, f"must be a whole number or None, got {type(seed).__name__} {seed!r}",
                        f"pass a seed in {_U64_RANGE}, or None for each case's own seed")
    if not 0 <= seed <= U64_MAX:
        raise bad_input(where, key, f"value {seed} outside {_U64_RANGE}",
                        f"pass a seed in {_U64_RANGE} (an unsigned 64-bit integer, never wrapped)")
    return seed


def check_text(value, where, key, what="a string"):
    """A str that is valid UTF-8 text (a str holding a lone surrogate cannot reach a report)."""
    if not isinstance(value, str):
        raise bad_input(where, key, f"must be {what}, got {type(value).__name__} {value!r}", f"pass {what}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise bad_input(where, key, f"is not valid UTF-8 text ({e.reason} at index {e.start})",
                        "pass text without lone surrogates (decode bytes with errors='strict' first)") from None
    return value


def check_path(value, where, key):
    """A str or os.PathLike naming a path, as text."""
    if not isinstance(value, (str, os.PathLike)):
        raise bad_input(where, key, f"must be a path (str or os.PathLike), got {type(value).__name__}",
                        "pass a path")
    return check_text(os.fsdecode(os.fspath(value)) if not isinstance(value, str) else value, where, key, "a path")


@contextlib.contextmanager
def native_arguments(where):
    """Around a call into the native module: pybind's own refusal of an argument (a TypeError naming the
    overloads) becomes moe_harness.Error naming `where`; every other exception passes as it is."""
    try:
        yield
    except TypeError as e:
        if "incompatible function arguments" not in str(e) and "Unable to convert" not in str(e):
            raise
        raise bad_input(where, "arguments", str(e).splitlines()[0].rstrip(". "),
                        f"pass {where}'s documented argument types (help(moe_harness))") from None
