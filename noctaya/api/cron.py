"""Five-field cron expressions as KEDA's ``cron`` trigger reads them, and the windows they open.

KEDA parses ``start`` and ``end`` with the standard five-field parser of robfig/cron (minute, hour,
day of month, month, day of week) in the trigger's IANA ``timezone``. This module accepts the same
language, so an expression ``noctaya validate`` accepts is one KEDA accepts:

- each field is ``*`` or ``?``, a value, a range ``a-b``, any of those with a step (``*/15``,
  ``8-18/2``, ``5/10`` meaning ``5-max/10``), or a comma-separated list of them;
- months may be named ``JAN``..``DEC`` and days of week ``SUN``..``SAT`` (any case); days of week
  run 0 (Sunday) to 6;
- when both day of month and day of week are restricted (neither starts with ``*`` or ``?``), a day
  matches if either does; otherwise both must (the classic cron rule robfig/cron keeps).

Descriptors (``@daily``, ``@every 5m``) are refused: a schedule is always five fields, stated in full.

:class:`Expression` finds the next matching minute after an instant, in a zone. A local time that a
daylight-saving change skips is taken at the same offset as the instant before the change (02:30
becomes 03:30), one that occurs twice is taken the first time. :func:`window` applies KEDA's rule: a
cron trigger is active when the next ``end`` comes no later than the next ``start``.

Pure standard library (``zoneinfo`` for the zones); no third-party cron package is needed for this
much, and owning it keeps the semantics exactly those of the trigger it models.
"""

from __future__ import annotations

import dataclasses
import datetime
import zoneinfo
from typing import Final

MONTHS: Final = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAYS: Final = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
MAX_LENGTH: Final = 256
SEARCH_YEARS: Final = 5
"""robfig/cron gives up after five years without a match; so does :meth:`Expression.next_after`."""
_DAYS_IN_MONTH: Final = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # at most (leap years)


class CronError(ValueError):
    """The expression is not a valid five-field cron expression; the message says why."""


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    name_base: int = 0  # the value of names[0]


_FIELDS: Final = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, MONTHS, 1),
    _Field("day of week", 0, 6, DAYS, 0),
)


def _number(text: str, field: _Field) -> int:
    upper = text.upper()
    if field.names and upper in field.names:
        return field.names.index(upper) + field.name_base
    if not text.isdigit() or not text.isascii():
        raise CronError(f"{field.name}: {text!r} is not a number" + (" or a name" if field.names else ""))
    value = int(text)
    if not field.low <= value <= field.high:
        raise CronError(f"{field.name}: {value} is outside {field.low}-{field.high}")
    return value


def _parse_field(text: str, field: _Field) -> tuple[frozenset[int], bool]:
    """The values the field matches, and whether it is unrestricted (``*`` or ``?`` with no step)."""
    if not text:
        raise CronError(f"{field.name}: empty")
    values: set[int] = set()
    star = False
    for part in text.split(","):
        if not part:
            raise CronError(f"{field.name}: empty list item in {text!r}")
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or not step_text.isascii() or int(step_text) == 0:
                raise CronError(f"{field.name}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if base in ("*", "?"):
            low, high = field.low, field.high
            star = star or step == 1
        elif "-" in base:
            first, _, last = base.partition("-")
            low, high = _number(first, field), _number(last, field)
            if low > high:
                raise CronError(f"{field.name}: range {base!r} runs backwards")
        else:
            low = _number(base, field)
            high = field.high if slash else low
        values.update(range(low, high + 1, step))
    return frozenset(values), star


@dataclasses.dataclass(frozen=True)
class Expression:
    """One parsed five-field expression."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month unrestricted
    any_weekday: bool  # day of week unrestricted

    @classmethod
    def parse(cls, text: str) -> Expression:
        if not isinstance(text, str):
            raise CronError("must be a string")
        if len(text) > MAX_LENGTH:
            raise CronError(f"longer than {MAX_LENGTH} characters")
        if text.strip().startswith("@"):
            raise CronError("descriptors such as @daily are not accepted: give five fields")
        parts = text.split()
        if len(parts) != 5:
            raise CronError(
                f"{text!r} has {len(parts)} field(s); need 5: minute hour day-of-month month day-of-week"
            )
        parsed = [_parse_field(part, field) for part, field in zip(parts, _FIELDS, strict=True)]
        expression = cls(
            text=" ".join(parts),
            minutes=tuple(sorted(parsed[0][0])),
            hours=tuple(sorted(parsed[1][0])),
            days=parsed[2][0],
            months=parsed[3][0],
            weekdays=parsed[4][0],
            any_day=parsed[2][1],
            any_weekday=parsed[4][1],
        )
        if expression.any_weekday and not any(
            day <= _DAYS_IN_MONTH[month - 1] for month in expression.months for day in expression.days
        ):
            raise CronError(f"{text!r} never matches: no month has such a day")
        return expression

    def matches_day(self, day: datetime.date) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, instant: datetime.datetime, zone: datetime.tzinfo) -> datetime.datetime | None:
        """The first matching minute strictly after ``instant`` (aware), as an aware time in ``zone``;
        None when nothing matches within :data:`SEARCH_YEARS` years or before the end of
        ``datetime``'s range (an instant near year 9999 has no next minute to find)."""
        if instant.tzinfo is None:
            raise ValueError("instant must be timezone-aware")
        try:
            local = instant.astimezone(zone)
        except OverflowError:
            return None
        day = local.date()
        span = datetime.timedelta(days=366 * SEARCH_YEARS)
        last = day + span if day <= datetime.date.max - span else datetime.date.max
        while day <= last:
            if self.matches_day(day):
                for hour in self.hours:
                    for minute in self.minutes:
                        candidate = datetime.datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                        # a skipped local time normalises forward; compare as instants
                        try:
                            moment = candidate.astimezone(datetime.UTC)
                            if moment > instant:
                                return moment.astimezone(zone)
                        except OverflowError:  # within a day of the ends of the range
                            continue
            if day == datetime.date.max:
                break
            day += datetime.timedelta(days=1)
        return None


def zone(name: str) -> zoneinfo.ZoneInfo:
    """An IANA time zone; :class:`CronError` names an unknown one."""
    if not name or len(name) > 64 or name.startswith("/") or ".." in name:
        raise CronError(f"{name!r} is not an IANA time zone name")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise CronError(f"{name!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None


@dataclasses.dataclass(frozen=True)
class Window:
    """A cron window as KEDA sees it at one instant."""

    active: bool
    start: datetime.datetime | None  # the current window's start is not known; the next one's is
    end: datetime.datetime | None  # the end of the current window if active, else of the next one


def window(*, start: Expression, end: Expression, zone: datetime.tzinfo, now: datetime.datetime) -> Window:
    """KEDA's rule at ``now``: active when the next end is no later than the next start."""
    next_start = start.next_after(now, zone)
    next_end = end.next_after(now, zone)
    if next_end is None:
        return Window(active=False, start=None, end=None)
    if next_start is None or next_end <= next_start:
        return Window(active=True, start=None, end=next_end)
    return Window(active=False, start=next_start, end=end.next_after(next_start, zone))


def shifted(expression: Expression, *, minutes: int) -> str:
    """The expression of the moments ``minutes`` after those of ``expression``, when cron can say it:
    a single minute and hour, and (when the shift crosses midnight) any day of month and any month.
    :class:`CronError` otherwise: such a window needs an explicit ``end``."""
    if len(expression.minutes) != 1 or len(expression.hours) != 1:
        raise CronError(
            f"a duration needs a start at one minute and hour (got {expression.text!r}); give an end instead"
        )
    total = expression.hours[0] * 60 + expression.minutes[0] + minutes
    carry, of_day = divmod(total, 24 * 60)
    fields = expression.text.split()
    fields[0], fields[1] = str(of_day % 60), str(of_day // 60)
    if carry:
        if not (expression.any_day and len(expression.months) == 12):
            raise CronError(
                f"a duration crossing midnight needs any day of month and any month in {expression.text!r}; "
                "give an end instead"
            )
        if not expression.any_weekday:
            fields[4] = ",".join(str(day) for day in sorted({(d + carry) % 7 for d in expression.weekdays}))
    return " ".join(fields)
