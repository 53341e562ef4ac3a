"""Cron expressions as KEDA's cron trigger reads them (robfig/cron's five-field parser).

Aspects: every field form (values, ranges, steps, lists, names, ``?``) parses to the values robfig/cron
gives; malformed, out-of-range, backwards, descriptor and impossible expressions are refused with a
message naming the field; the next match is found across hours, days, months, years and weekdays,
in a zone, across daylight-saving changes; the day-of-month / day-of-week OR rule; KEDA's window
rule (active when the next end comes no later than the next start); shifting a start by a duration;
and, over random instants, the next match is a match and no earlier minute is.
"""

from __future__ import annotations

import datetime

import hypothesis
import pytest
from hypothesis import strategies as st

from noctaya.api import cron

UTC = datetime.UTC
BERLIN = cron.zone("Europe/Berlin")


def at(text: str, tz: datetime.tzinfo = UTC) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=tz)


@pytest.mark.parametrize(
    ("text", "minutes", "hours"),
    [
        ("* * * * *", tuple(range(60)), tuple(range(24))),
        ("*/15 8-18/5 * * *", (0, 15, 30, 45), (8, 13, 18)),
        ("5/20 1,3,5 ? * ?", (5, 25, 45), (1, 3, 5)),
        ("0-2,58-59 23 * * *", (0, 1, 2, 58, 59), (23,)),
    ],
)
def test_fields_parse_to_the_values_robfig_gives(
    text: str, minutes: tuple[int, ...], hours: tuple[int, ...]
) -> None:
    expression = cron.Expression.parse(text)
    assert expression.minutes == minutes and expression.hours == hours


def test_names_and_stars() -> None:
    e = cron.Expression.parse("0 9 * jan-Mar,DEC mon-FRI")
    assert e.months == {1, 2, 3, 12} and e.weekdays == {1, 2, 3, 4, 5}
    assert e.any_day and not e.any_weekday
    assert not cron.Expression.parse("0 0 */2 * *").any_day  # a step makes it restricted (robfig)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("* * * *", "has 4 field(s); need 5"),
        ("* * * * * *", "has 6 field(s)"),
        ("60 * * * *", "minute: 60 is outside 0-59"),
        ("* 24 * * *", "hour: 24 is outside 0-23"),
        ("* * 0 * *", "day of month: 0 is outside 1-31"),
        ("* * * 13 *", "month: 13 is outside 1-12"),
        ("* * * * 7", "day of week: 7 is outside 0-6"),
        ("5-1 * * * *", "runs backwards"),
        ("*/0 * * * *", "step '0' must be a positive number"),
        ("1,,2 * * * *", "empty list item"),
        ("x * * * *", "minute: 'x' is not a number"),
        ("* * * FOO *", "is not a number or a name"),
        ("@daily", "descriptors"),
        ("0 0 30 2 *", "never matches"),
        ("0 0 ３ * *", "not a number"),
        ("0 " * 200, "longer than"),
    ],
)
def test_bad_expressions_are_refused_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(cron.CronError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cron.Expression.parse(text)


def test_next_after_is_strictly_later_and_crosses_days_months_and_years() -> None:
    e = cron.Expression.parse("30 8 * * *")
    assert e.next_after(at("2026-03-01T08:29:59"), UTC) == at("2026-03-01T08:30")
    assert e.next_after(at("2026-03-01T08:30"), UTC) == at("2026-03-02T08:30")  # strictly after
    assert cron.Expression.parse("0 0 1 1 *").next_after(at("2026-06-01T00:00"), UTC) == at(
        "2027-01-01T00:00"
    )
    leap = cron.Expression.parse("0 12 29 2 *")
    assert leap.next_after(at("2026-03-01T00:00"), UTC) == at("2028-02-29T12:00")


def test_weekdays_and_the_or_rule_of_restricted_day_fields() -> None:
    weekdays = cron.Expression.parse("0 9 * * 1-5")
    assert weekdays.next_after(at("2026-12-04T10:00"), UTC) == at("2026-12-07T09:00")  # Fri -> Mon
    either = cron.Expression.parse("0 0 13 * 5")  # the 13th, or any Friday
    assert either.next_after(at("2026-12-01T00:00"), UTC) == at("2026-12-04T00:00")  # a Friday first
    assert either.next_after(at("2026-12-11T00:00"), UTC) == at("2026-12-13T00:00")  # then the 13th


def test_zones_and_daylight_saving_changes() -> None:
    e = cron.Expression.parse("30 2 * * *")
    # 2026-03-29 02:30 does not exist in Berlin (02:00 -> 03:00): taken as 03:30 CEST
    spring = e.next_after(at("2026-03-29T00:00", BERLIN), BERLIN)
    assert spring is not None and spring.astimezone(UTC) == at("2026-03-29T01:30")
    # 2026-10-25 02:30 happens twice: the first one (CEST) is taken, once
    autumn = e.next_after(at("2026-10-25T00:00", BERLIN), BERLIN)
    assert autumn is not None and autumn.astimezone(UTC) == at("2026-10-25T00:30")
    again = e.next_after(autumn, BERLIN)
    assert again is not None and again.astimezone(UTC) == at("2026-10-26T01:30")
    assert cron.Expression.parse("0 8 * * *").next_after(at("2026-12-01T06:00"), BERLIN) == at(
        "2026-12-01T08:00", BERLIN
    )


def test_unknown_zones_are_refused() -> None:
    for name in ("Mars/Olympus", "", "../etc/passwd", "/etc/localtime"):
        with pytest.raises(cron.CronError, match="IANA"):
            cron.zone(name)


def test_keda_window_rule() -> None:
    start, end = cron.Expression.parse("0 8 * * *"), cron.Expression.parse("0 18 * * *")
    inside = cron.window(start=start, end=end, zone=UTC, now=at("2026-12-01T12:00"))
    assert inside.active and inside.end == at("2026-12-01T18:00")
    before = cron.window(start=start, end=end, zone=UTC, now=at("2026-12-01T07:00"))
    assert not before.active and (before.start, before.end) == (
        at("2026-12-01T08:00"),
        at("2026-12-01T18:00"),
    )
    after = cron.window(start=start, end=end, zone=UTC, now=at("2026-12-01T18:00"))
    assert not after.active and after.start == at("2026-12-02T08:00")
    overnight = cron.window(
        start=cron.Expression.parse("0 22 * * *"),
        end=cron.Expression.parse("0 6 * * *"),
        zone=UTC,
        now=at("2026-12-01T23:00"),
    )
    assert overnight.active and overnight.end == at("2026-12-02T06:00")


def test_a_start_shifted_by_a_duration() -> None:
    assert cron.shifted(cron.Expression.parse("30 8 * * 1-5"), minutes=600) == "30 18 * * 1-5"
    assert cron.shifted(cron.Expression.parse("0 22 * * 5,6"), minutes=240) == "0 2 * * 0,6"
    assert cron.shifted(cron.Expression.parse("0 22 * * *"), minutes=240) == "0 2 * * *"
    with pytest.raises(cron.CronError, match="one minute and hour"):
        cron.shifted(cron.Expression.parse("*/5 8 * * *"), minutes=10)
    with pytest.raises(cron.CronError, match="crossing midnight"):
        cron.shifted(cron.Expression.parse("0 22 1 * *"), minutes=240)


fields = st.sampled_from(["*", "*/7", "0", "5-20/5", "1,30,59"])


@hypothesis.settings(derandomize=True, database=None, deadline=None, max_examples=200)
@hypothesis.given(
    minute=fields,
    hour=st.sampled_from(["*", "3", "0-23/6", "9,17"]),
    dom=st.sampled_from(["*", "1", "15-20", "31"]),
    dow=st.sampled_from(["*", "0", "1-5", "6"]),
    instant=st.datetimes(
        min_value=datetime.datetime(2000, 1, 1),
        max_value=datetime.datetime(2090, 1, 1),
        timezones=st.just(UTC),
    ),
)
def test_the_next_match_is_a_match_and_no_earlier_minute_is(
    minute: str, hour: str, dom: str, dow: str, instant: datetime.datetime
) -> None:
    e = cron.Expression.parse(f"{minute} {hour} {dom} * {dow}")
    found = e.next_after(instant, UTC)
    assert found is not None and found > instant
    assert found.minute in e.minutes and found.hour in e.hours and e.matches_day(found.date())
    probe = (instant + datetime.timedelta(minutes=1)).replace(second=0, microsecond=0)
    checked = 0
    while probe < found and checked < 3000:  # the minutes just before it do not match
        assert not (probe.minute in e.minutes and probe.hour in e.hours and e.matches_day(probe.date()))
        probe += datetime.timedelta(minutes=1)
        checked += 1
