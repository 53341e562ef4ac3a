"""Fuzz tier: every time-typed field at and beyond the ends of ``datetime``'s range.

Deterministic and bounded like the rest of the tier (Hypothesis with ``derandomize=True``, no
example database, a fixed number of examples). The fields: the gateway's ``warmUntil`` (config file
and ``noctaya gateway`` flags), the LLMService's warm-until annotation, ``metav1.Time`` fields
(``Timestamp``: conditions, object metadata, status), Go durations (``Seconds``) and cron schedule
windows at any instant.

Aspects: any aware time at any UTC offset, and any text, is either accepted — and then normalised to
UTC, usable as Unix seconds and stable when validated again — or refused with a validation error
naming the field; never an ``OverflowError`` or any other exception, whichever end of the range
it is near; a schedule's window at any instant is computed or empty, never raises.
"""

from __future__ import annotations

import datetime
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noctaya.api import llmservice, meta
from noctaya.contract import documents, fields
from noctaya.contract import gateway as gateway_contract

FUZZ = settings(max_examples=150, derandomize=True, database=None, deadline=None)
EXTREMES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z", "0001-01-01T00:59:59+01:00", "9999-12-31T23:00:00-00:59"]  # fmt: skip

offsets = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: datetime.timezone(datetime.timedelta(minutes=minutes))
)
near_the_ends = st.one_of(
    st.datetimes(max_value=datetime.datetime(1, 1, 3)),
    st.datetimes(min_value=datetime.datetime(9999, 12, 29)),
    st.datetimes(),
)
aware = st.builds(lambda moment, zone: moment.replace(tzinfo=zone), near_the_ends, offsets)
texts = st.one_of(
    aware.map(lambda moment: moment.isoformat()),
    aware.map(lambda moment: moment.isoformat().replace("+00:00", "Z")),
    st.sampled_from(EXTREMES),
    st.text(alphabet="0123456789-+:TZz. ", max_size=40),
)


def _outside(moment: datetime.datetime) -> bool:
    """Whether ``moment``'s UTC time falls outside years 1 to 9999 (what must be refused)."""
    utc = moment.replace(tzinfo=None) - moment.utcoffset()  # type: ignore[operator]
    return not datetime.datetime.min <= utc <= datetime.datetime.max


def _in_range(moment: datetime.datetime) -> bool:
    try:
        return not _outside(moment)
    except OverflowError:
        return False


@FUZZ
@given(moment=aware)
def test_warm_until_in_the_gateway_file(moment: datetime.datetime) -> None:
    text = moment.isoformat()
    try:
        config = gateway_contract.build_config({"backendUrl": "http://b", "warmUntil": text})
    except documents.ConfigError as exc:
        assert str(exc).startswith("warmUntil: "), str(exc)
        assert not _in_range(moment) or "1 to 9999" not in str(exc)
        return
    assert _in_range(moment)
    assert config.warm_until is not None and config.warm_until.endswith("Z")
    seconds = gateway_contract.parse_time(config.warm_until)
    assert abs(seconds - moment.timestamp()) <= 1.0  # seconds kept, and a float at year 1
    again = gateway_contract.build_config({"backendUrl": "http://b", "warmUntil": config.warm_until})
    assert again.warm_until == config.warm_until


@FUZZ
@given(text=texts)
def test_any_warm_until_text_is_accepted_or_named(text: str) -> None:
    try:
        config = gateway_contract.build_config({"backendUrl": "http://b", "warmUntil": text})
    except documents.ConfigError as exc:
        assert str(exc).startswith("warmUntil: ")
        return
    assert config.warm_until is not None
    gateway_contract.parse_time(config.warm_until)


def _service(annotation: str) -> dict[str, Any]:
    return {
        "apiVersion": "serving.noctaya.io/v1alpha1",
        "kind": "LLMService",
        "metadata": {"name": "q", "annotations": {llmservice.WARM_UNTIL_ANNOTATION: annotation}},
        "spec": {"model": {"source": {"uri": "hf://Qwen/Qwen2.5-0.5B"}}, "runtime": {"name": "vllm"}},
    }


@FUZZ
@given(text=texts)
def test_the_warm_until_annotation(text: str) -> None:
    try:
        service = llmservice.LLMService.model_validate(_service(text))
    except pydantic.ValidationError as exc:
        assert llmservice.WARM_UNTIL_ANNOTATION in str(exc)
        return
    moment = service.warm_until
    assert moment is not None and moment.utcoffset() == datetime.timedelta(0)
    moment.timestamp()
    assert moment.isoformat()  # what the renderer passes on


class _Stamped(meta.ApiModel):
    at: meta.Timestamp


@FUZZ
@given(value=st.one_of(texts, aware))
def test_a_metav1_time(value: str | datetime.datetime) -> None:
    try:
        stamped = _Stamped.model_validate({"at": value})
    except pydantic.ValidationError as exc:
        assert exc.errors()[0]["loc"] == ("at",)
        return
    assert stamped.at.utcoffset() == datetime.timedelta(0)
    stamped.at.timestamp()
    assert stamped.at < datetime.datetime.max.replace(tzinfo=datetime.UTC) or stamped.at.year == 9999


@pytest.mark.parametrize("text", EXTREMES[:2])
def test_the_reported_extremes_are_refused_everywhere(text: str) -> None:
    with pytest.raises(documents.ConfigError, match=r"warmUntil: .*years 1 to 9999"):
        gateway_contract.build_config({"backendUrl": "http://b", "warmUntil": text})
    with pytest.raises(pydantic.ValidationError, match=r"warm-until.*years 1 to 9999"):
        llmservice.LLMService.model_validate(_service(text))
    with pytest.raises(pydantic.ValidationError, match="years 1 to 9999"):
        _Stamped.model_validate({"at": text})


@FUZZ
@given(
    value=st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.from_regex(r"\A[-+]?[0-9]{1,25}(\.[0-9]{0,12})?(ns|us|ms|s|m|h)\Z"),
        st.text(max_size=70),
    )
)
def test_a_duration(value: object) -> None:
    try:
        seconds = fields.parse_seconds(value)
    except ValueError:
        return
    assert 0 <= seconds <= fields.MAX_SECONDS
    assert fields.parse_seconds(fields.format_seconds(seconds)) == pytest.approx(seconds, abs=1e-9)


WINDOWS = [
    {"start": "0 9 * * *", "duration": "1h"},
    {"start": "30 0 * * 1", "duration": "30m"},
    {"start": "0 0 29 2 *", "end": "0 1 29 2 *"},
    {"start": "59 23 31 12 *", "end": "1 0 1 1 *"},
]


@FUZZ
@given(
    now=aware,
    times=st.sampled_from(WINDOWS),
    zone=st.sampled_from(["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Berlin"]),
)
def test_a_schedule_window_at_any_instant(now: datetime.datetime, times: dict[str, str], zone: str) -> None:
    schedule = llmservice.Schedule.model_validate({"name": "w", "timezone": zone, **times})
    window = schedule.window(now)
    for moment in (window.start, window.end):
        if moment is not None:
            assert moment > now
