"""Python values as the YAML text the config loader reads.

A config dict becomes one YAML flow mapping and each override a ``--set`` text ("key=value", the
value YAML), so that both pass the same schema, checks and messages as a config file and the
command line's ``--set``. Only what YAML can say unambiguously is written; anything else (bytes,
sets, objects, keys that are not str, cycles) is refused here by the key that holds it.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

from . import _core

ConfigError = _core.ConfigError

# A config is sections of keys: the loader refuses more than 64 levels; a cycle would never end.
_MAX_DEPTH = 64

# As much YAML as a config file may hold (io::read_input_file's limit for configs): a config dict or
# an override longer than that would keep the parser busy for minutes (or hit its time limit, which
# blames the syntax); a command line's --set cannot be a tenth of it.
_MAX_YAML_BYTES = 1 << 20

# A plain YAML word that the loader reads back as this same string (no quotes needed); anything
# else is written double-quoted. Keeps a --set text as a user would type it ("hardware.preset=h200").
_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/+]*\Z")
_YAML_WORDS = {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"}


def _where(path: str, source: str) -> str:
    """The message's start: "--set parallel.tp" for an override, "config dict: parallel.tp" in a dict."""
    return f"{source}{' ' if source == '--set' else ': '}{path or 'the config'}"


def _a(type_name: str) -> str:
    return ("an " if type_name[:1] in "aeiou" else "a ") + type_name


def _quoted(text: str, path: str, source: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            raise ConfigError(f"{_where(path, source)}: the text holds a lone surrogate (bytes that were not UTF-8); "
                              "give it as valid text")
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif 0x20 <= code < 0x7F or (code > 0x7F and ch.isprintable() and code not in (0x2028, 0x2029, 0xFEFF)):
            out.append(ch)  # printable text as it is; control characters and line breaks escaped
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _string(text: str, path: str, source: str) -> str:
    if _PLAIN_WORD.match(text) and text not in _YAML_WORDS:
        try:
            float(text)
        except ValueError:
            return text
    return _quoted(text, path, source)


def _number_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return repr(float(value))


def yaml_value(value: Any, path: str, source: str, depth: int = 0) -> str:
    """`value` as YAML flow text; `path` (a dotted key) and `source` ("--set" or "config dict") name
    it in errors."""
    where = _where(path, source)
    if depth > _MAX_DEPTH:
        raise ConfigError(f"{where}: nested more than {_MAX_DEPTH} levels deep (or a dict or list that "
                          "holds itself); a config is sections of keys")
    if value is None:
        return "null"
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy's bool too
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        try:
            return str(int(value))
        except ValueError:  # more digits than Python prints (sys.set_int_max_str_digits)
            raise ConfigError(f"{where}: the number is far too large; give a value in the key's range") from None
    if isinstance(value, numbers.Real):
        return _number_text(float(value))
    if isinstance(value, str):
        return _string(value, path, source)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise ConfigError(f"{where}: bytes are not text; give a str (e.g. value.decode())")
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: the key {key!r} is {_a(type(key).__name__)}, not a str; "
                                  "config keys are names")
            sub = f"{path}.{key}" if path else key
            items.append(f"{_quoted(key, sub, source)}: {yaml_value(item, sub, source, depth + 1)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(item, f"{path}[{i}]", source, depth + 1) for i, item in enumerate(value)) + "]"
    raise ConfigError(f"{where}: {_a(type(value).__name__)} is not a config value; give a number, a str, "
                      "a bool, None, a list or a dict")


def _sized(text: str, where: str) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > _MAX_YAML_BYTES:
        raise ConfigError(f"{where}: {size:,} bytes as YAML, more than the 1 MiB stepsim reads as a config; "
                          "give fewer or shorter values")
    return text


def config_text(config: Mapping[str, Any], source: str) -> str:
    """A config dict as one YAML document; `source` names it in messages."""
    return _sized(yaml_value(config, "", source) + "\n", source)


def override_texts(overrides: Mapping[str, Any]) -> list[str]:
    """Overrides by dotted key as --set texts ("parallel.tp=8")."""
    texts = []
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise ConfigError(f"--set {key!r}: the key is {_a(type(key).__name__)}, not a str; give a dotted key "
                              "like 'parallel.tp'")
        if "=" in key or not key:
            raise ConfigError(f"--set {key!r}: not a dotted key; give one like 'parallel.tp' and the value "
                              "apart: {'parallel.tp': 8}")
        _quoted(key, key, "--set")  # refuses a key that is not text
        texts.append(_sized(f"{key}={yaml_value(value, key, '--set')}", f"--set {key}"))
    return texts
