"""Bad arguments found in Python raised as the native library's errors: moe_harness.Error with exit_code 2, where,
key, problem and fix, and the message `WHERE: key 'KEY': PROBLEM. Fix: FIX` (docs/reliability.md "Bad input"), so
no argument reaches pybind's generic "incompatible function arguments" or a raw cast error."""
import contextlib
import math
import numbers
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
    """A str or os.PathLike naming a path, as text; a NUL byte (which would end the path early in the native
    library) is refused naming the whole path, escaped."""
    if not isinstance(value, (str, os.PathLike)):
        raise bad_input(where, key, f"must be a path (str or os.PathLike), got {type(value).__name__}",
                        "pass a path")
    text = check_text(os.fsdecode(os.fspath(value)) if not isinstance(value, str) else value, where, key, "a path")
    if "\0" in text:
        raise bad_input(where, key, f"the path {text!r} contains a NUL byte", "pass a path without NUL bytes")
    return text


def check_real(value, where, key, lo, hi, lo_open=False, default=None):
    """A finite int or float in [lo, hi] ((lo, hi] when lo_open), or `default` itself (e.g. 0 for "the default"):
    never a bool, a NaN or an infinity (the same rules as the CLI's numbers, fixtures/strict_number.hpp)."""
    rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
    also = f" (or {default:g}: the default)" if default is not None else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or type(value).__name__ == "bool_":
        raise bad_input(where, key, f"must be a number, got {type(value).__name__} {value!r}",
                        f"pass a number in {rng}{also}")
    value = float(value) if not isinstance(value, int) else value
    if default is not None and value == default:
        return value
    if math.isnan(value) or math.isinf(value):
        raise bad_input(where, key, f"is {value!r}, not a finite number", f"pass a number in {rng}{also}")
    if not (lo < value <= hi if lo_open else lo <= value <= hi):
        raise bad_input(where, key, f"value {value!r} outside {rng}", f"pass a number in {rng}{also}")
    return value


def check_flag(value, where, key):
    """True or False (a NumPy bool counts); never 1, None or "yes", which truth testing would take."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")):
        return bool(value)
    raise bad_input(where, key, f"must be True or False, got {type(value).__name__} {value!r}", "pass True or False")


DEVICES = ("cpu", "cuda", "hip")


def check_device(device, where, key="device"):
    """None, or one of DEVICES with an optional ':INDEX' (cuda:1): a device name nothing knows would gate every case
    away as a skip."""
    if device is None:
        return None
    ok = isinstance(device, str)
    if ok:
        name, colon, index = device.partition(":")
        ok = name in DEVICES and (not colon or (index.isdigit() and index.isascii() and name != "cpu"))
    if not ok:
        raise bad_input(where, key, f"unknown device {device!r}",
                        "pass None, cpu (the host), cuda or hip (a GPU kernel; cuda:N / hip:N for one of several)")
    return device


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
