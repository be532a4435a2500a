"""The one YAML emitter of dashgen: plain data (dicts, lists, strings, numbers, booleans, None) -> YAML text,
byte-for-byte deterministic, written without a YAML library and read back by one (``yamlcheck``) before it
is returned.

Used for the rule files (``dashgen rules``) and the deployment manifests (``dashgen export``). Strings are
JSON strings, which YAML reads as double-quoted scalars, except a multi-line string that is safe to write
as a literal block (``|``): a dashboard embedded in a ConfigMap or custom resource stays readable in review
and loads back to exactly the same bytes. Keys are plain when they are plain words, quoted otherwise;
dict order is kept (the caller decides it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

from dashgen.render.yamlcheck import check_reads_back

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
# characters a literal block cannot hold as written (YAML reads some as line breaks or strips them)
_UNSAFE_IN_BLOCK = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


# What YAML may not hold raw in a double-quoted scalar (outside its printable set), plus the characters YAML
# reads as line breaks (NEL, LS, PS) and the byte-order mark: written as \uXXXX escapes, which JSON and YAML share.
_NOT_RAW = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufeff\uff00-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _quoted(text: str) -> str:
    """A double-quoted scalar that YAML reads back as exactly ``text``, whatever characters it holds."""
    quoted = encode_basestring(text)  # what json.dumps(text, ensure_ascii=False) returns, without its encoder object
    # JSON escapes every control character: an ASCII string needs no YAML escape unless it holds DEL (most do not)
    if quoted.isascii() and "\x7f" not in quoted:
        return quoted
    return _NOT_RAW.sub(_escape, quoted)


def _key(key: Any) -> str:
    text = str(key)
    return text if _PLAIN_KEY.match(text) and text.lower() not in _RESERVED else _quoted(text)


def _float(value: float) -> str:
    """A float YAML 1.1 (PyYAML) reads as that float: a dot in every mantissa, .inf / .nan for the others."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if e and exponent[:1] not in "+-":
        exponent = "+" + exponent
    return f"{mantissa}{e}{exponent}"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    return _quoted(str(value))


def _literal_ok(text: str) -> bool:
    if "\n" not in text.rstrip("\n") or _UNSAFE_IN_BLOCK.search(text) or "\t" in text:
        return False
    lines = text.split("\n")
    return not text.startswith((" ", "\n")) and all(line == line.rstrip() for line in lines)


def _literal(text: str, indent: str) -> list[str]:
    """A ``|`` block: ``|`` keeps one final newline, ``|-`` none, ``|+`` several."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    header = "|" if trailing == 1 else ("|-" if trailing == 0 else "|+")
    lines = [f"{indent}{line}" if line else "" for line in body.split("\n")]
    return [header, *lines, *([""] * (trailing - 1 if trailing > 1 else 0))]


def _container(value: Any) -> bool:
    """A mapping, list or tuple: what is written as a block (when not empty). Plain dicts and lists, nearly every
    value, are told apart without the ``Mapping`` ABC's slower check."""
    kind = type(value)
    return kind is dict or kind is list or isinstance(value, Mapping | list | tuple)


def _empty(value: Any) -> str:
    return "{}" if isinstance(value, Mapping) else "[]"


class _Lines:
    """The lines of one document, appended to one list; the keys and strings already written in it are quoted
    once (a manifest repeats its keys thousands of times)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self._keys: dict[Any, str] = {}
        self._strings: dict[str, str] = {}

    def key(self, key: Any) -> str:
        if type(key) is not str:  # an enum member equal to a string must not lend that string its text, nor borrow it
            return _key(key)
        text = self._keys.get(key)
        if text is None:
            text = self._keys[key] = _key(key)
        return text

    def scalar(self, value: Any) -> str:
        if type(value) is not str:
            return _scalar(value)
        text = self._strings.get(value)
        if text is None:
            text = self._strings[value] = _quoted(value)
        return text

    def value(self, head: str, value: Any, indent: int) -> None:
        """``head`` is ``"<pad>key:"`` or ``"<pad>- key:"``; the value follows inline or on the next lines."""
        if _container(value):
            if len(value):
                self.out.append(head)
                self.block(value, indent)
            else:
                self.out.append(f"{head} {_empty(value)}")
        elif isinstance(value, str) and "\n" in value and _literal_ok(value):
            block = _literal(value, " " * indent)
            self.out.append(f"{head} {block[0]}")
            self.out += block[1:]
        else:
            self.out.append(f"{head} {self.scalar(value)}")

    def block(self, value: Any, indent: int) -> None:
        pad = " " * indent
        if isinstance(value, Mapping):
            for key, item in value.items():
                self.value(f"{pad}{self.key(key)}:", item, indent + 2)
            return
        if isinstance(value, list | tuple):
            for item in value:
                if isinstance(item, Mapping) and item:
                    (first, first_value), *rest = item.items()
                    self.value(f"{pad}- {self.key(first)}:", first_value, indent + 4)
                    for key, nested in rest:
                        self.value(f"{pad}  {self.key(key)}:", nested, indent + 4)
                elif _container(item) and len(item):
                    start = len(self.out)
                    self.block(item, indent + 2)
                    self.out[start] = f"{pad}- {self.out[start].lstrip()}"
                else:
                    self.value(f"{pad}-", item, indent + 2)
            return
        self.out.append(f"{pad}{self.scalar(value)}")


def _comment(text: str) -> str:
    """One comment line: a line break (or anything YAML may not hold raw) inside it is escaped, so a comment can
    never end early and inject keys."""
    return _NOT_RAW.sub(_escape, text.replace("\n", "\\n").replace("\r", "\\r"))


def dump(value: Mapping[str, Any], comments: Sequence[str] = (), read_back: bool = True) -> str:
    """One YAML document of the mapping ``value``, after ``# comment`` lines; ends with a newline. Read back
    (``yamlcheck``) unless ``read_back`` is False: only for text compared with bytes that were read back when
    they were written, never for text that is written."""
    lines = _Lines()
    lines.out += [f"# {_comment(c)}" if c else "#" for c in comments]
    if value:
        lines.block(value, 0)
    else:
        lines.out.append("{}")
    text = "\n".join(lines.out) + "\n"
    if read_back:
        check_reads_back(text, value)
    return text


def dump_all(documents: Sequence[Mapping[str, Any]], comments: Sequence[str] = ()) -> str:
    """Several YAML documents separated by ``---`` (a multi-resource Kubernetes manifest)."""
    parts = [dump(doc, comments if i == 0 else ()) for i, doc in enumerate(documents)]
    return "---\n".join(parts)
