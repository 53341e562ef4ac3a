"""Every option of every ``noctaya`` command says what it does, its default and its unit.

Each subcommand's ``main`` builds its own argparse parser; the test takes each parser at the moment
it would parse (``parse_known_args``, which ``parse_args`` calls) and walks its options: help text of
three words or more; the word "default" on every option that takes a value (flags say what "off" is
too); and a unit (``10s``, "seconds", "a duration", "bytes") on every option that is a time or a size.
"""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

from noctaya import cli

# "timeouts" (a count of them, as --warm-probe-timeouts) is no time
TIME_OR_SIZE = re.compile(
    r"timeout(?!s)|interval|period|duration|ttl|cooldown|delay|window|grace|retry-after|deadline|bytes|size"
)
UNIT = re.compile(r"\d+(\.\d+)?\s?(ms|s|m|h)\b|seconds|a duration|bytes")


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parsers(monkeypatch: pytest.MonkeyPatch) -> dict[str, argparse.ArgumentParser]:
    def grab(self: argparse.ArgumentParser, *_: object, **__: object) -> None:
        raise _Parsed(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", grab)
    found = {}
    for name, sub in cli.SUBCOMMANDS.items():
        entry = getattr(importlib.import_module(sub.module), sub.function)
        with pytest.raises(_Parsed) as caught:
            entry([])
        found[name] = caught.value.parser
    return found


def test_every_option_has_help_with_default_and_unit(monkeypatch: pytest.MonkeyPatch) -> None:
    found = parsers(monkeypatch)
    assert sorted(found) == sorted(cli.SUBCOMMANDS)
    problems = []
    checked = 0
    for name, parser in found.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction):
                continue
            checked += 1
            text = (action.help or "") % {"default": action.default} if action.help else ""
            where = f"noctaya {name} {'/'.join(action.option_strings) or action.dest}"
            if len(text.split()) < 3:
                problems.append(f"{where}: help {text!r} says too little")
            takes_value = action.option_strings and action.nargs != 0 and not action.required
            if takes_value and "default" not in text.lower():
                problems.append(f"{where}: help {text!r} does not state the default")
            flag = " ".join(action.option_strings)
            if TIME_OR_SIZE.search(flag) and not UNIT.search(text):
                problems.append(f"{where}: help {text!r} does not state the unit")
    assert checked > 100
    assert not problems, "\n".join(problems)
