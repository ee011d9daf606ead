"""Numbers and dates written in a fact's quote, and whether they agree with the fact's value.

The quote of a fact is the span its value was read from. For a ``number`` or ``timestamp``
fact (and a ``number`` or ``timestamp`` field of a record) this module reads the numbers and
dates the quote writes and reports a value the quote contradicts, e.g. a fact recorded as 20
whose quote reads "35 tablets". The rule, in full (also in ``docs/datasets/language-format.md``):

* **Dates** are read first: ISO date-times (``2026-03-04T10:15:00Z``, ``2026-03-04 10:15``,
  with ``Z``, ``UTC``, ``GMT``, an offset such as ``+02:00`` or no zone, which reads as UTC),
  ISO dates (``2026-03-04``), written dates (``4 March 2026``, ``March 4, 2026``, ``4th Mar
  2026``, optionally followed by a time), months (``March 2026``) and times of day (``10:15``,
  ``10:15:30``, ``10:15 UTC``, ``9:05 pm``). A time with another named zone (``10:15 CET``) is
  not compared.
* A ``timestamp`` fact must agree with one of the dates its quote writes, to the precision
  written: the month, the day, the minute or the second (in UTC). A quote that writes no date but
  times of day needs the fact's UTC time of day among them. A quote without either is not checked.
* **Numbers** are what remains after removing the dates and times: digits with optional
  thousands separators (``14,500``) and decimals (``600.00``). A unit is ignored, whether it is a
  separate word, attached (``40h``, ``5GB``) or hyphenated (``35-tablet``); signs are ignored
  (the value's magnitude is compared); a percentage ``15%`` also matches the value 0.15. Digits
  inside an identifier (``SBA-560``, ``T-0893``, ``v1.2.3``, ``DA-44817-1``) are not numbers;
  an identifier is a word in which a letter comes before a digit, or a dotted version.
  ``1,2`` or ``10-20`` give each number.
* A ``number`` fact must equal one of the numbers its quote writes. Only when the quote writes no
  digits at all are number words read instead (``zero`` to ``twenty``, ``none``). A quote
  without any number is not checked (e.g. "Orders placed: SO-1190" for a count of 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from authpairs.cases.canonical import parse_utc
from authpairs.tracks.language.models import FactSpec, Scenario

_MONTHS = {name: index for index, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
# A named zone other than UTC/GMT is matched case-sensitively ("CET"), so that a time
# followed by a word ("06:52 after") is still a time in UTC.
_ZONE = r"(?P<zone>Z|\s?UTC|\s?GMT|[+-]\d{2}:?\d{2}|\s(?-i:[A-Z]{2,5})\b)?"
_CLOCK = (r"(?P<hh>\d{1,2}):(?P<mi>\d{2})(?::(?P<ss>\d{2}))?(?:\.\d+)?"
          r"(?:\s?(?P<ampm>[ap]\.?m\.?)(?![A-Za-z]))?" + _ZONE)
_TAIL = r"(?:,?\s(?:at\s)?" + _CLOCK + ")?"
_DATE_PATTERNS = (
    re.compile(r"(?<![\w.-])(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ]" + _CLOCK + r")?"
               r"(?![\w])", re.IGNORECASE),
    re.compile(r"(?<![\w.])(?P<d>\d{1,2})(?:st|nd|rd|th)?\s" + _MONTH + r",?\s(?P<y>\d{4})\b"
               + _TAIL, re.IGNORECASE),
    re.compile(r"\b" + _MONTH + r"\s(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s(?P<y>\d{4})\b" + _TAIL,
               re.IGNORECASE),
    re.compile(r"\b" + _MONTH + r",?\s(?P<y>\d{4})\b", re.IGNORECASE),
    re.compile(r"(?<![\w.:])" + _CLOCK + r"(?![\w:])", re.IGNORECASE),
)
_WORD = re.compile(r"[A-Za-z0-9_]+(?:[-.,/][A-Za-z0-9_]+)*")
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_PLAIN = re.compile(rf"^{_NUM}$")
_WITH_UNIT = re.compile(rf"^(?P<n>{_NUM})[-/]?[A-Za-z]+$")
_COMMA_LIST = re.compile(r"^\d+(?:,\d+)+$")
_NUMBER_WORDS = {word: index for index, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty"))} | {"none": 0}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class Moment:
    """A date or time of day written in a quote, at the precision it is written.

    ``fields`` are the written parts in UTC, most significant first: (year, month), (year,
    month, day), (year, month, day, hour, minute[, second]) or, for a time of day alone,
    (hour, minute[, second]) with ``dated`` false.
    """

    text: str
    fields: tuple[int, ...]
    dated: bool

    def matches(self, moment: datetime) -> bool:
        """True when ``moment`` (UTC) agrees with every written part."""
        parts = (moment.year, moment.month, moment.day, moment.hour, moment.minute,
                 moment.second) if self.dated else (moment.hour, moment.minute, moment.second)
        return parts[:len(self.fields)] == self.fields


@dataclass(frozen=True)
class Number:
    """A number written in a quote (``percent``: it was followed by ``%``)."""

    text: str
    value: Decimal
    percent: bool = False

    def matches(self, value: Decimal) -> bool:
        """True when ``value``'s magnitude is this number (or, for a percentage, its 1/100)."""
        magnitude = abs(value)
        return magnitude == self.value or (self.percent and magnitude * 100 == self.value)


def _offset(zone: str | None) -> timedelta | None:
    """The UTC offset a zone suffix gives; None for a named zone other than UTC/GMT."""
    text = (zone or "").strip().upper()
    if text in ("", "Z", "UTC", "GMT"):
        return timedelta(0)
    match = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", text)
    if not match:
        return None
    delta = timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
    return delta if match.group(1) == "+" else -delta


def _clock(groups: dict[str, str | None]) -> tuple[int, int, int | None] | None:
    """(hour, minute, second or None) of a written time, in 24-hour form; None if invalid."""
    hour, minute = int(groups["hh"] or 0), int(groups["mi"] or 0)
    written = groups.get("ss")
    second = int(written) if written else None
    ampm = (groups.get("ampm") or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59 or (second is not None and second > 59):
        return None
    return hour, minute, second


def _moment(match: re.Match[str]) -> Moment | None:
    """The moment a date/time match writes, converted to UTC; None when it is not a real date
    or its zone is not comparable."""
    groups = match.groupdict()
    clock = _clock(groups) if groups.get("hh") else None
    if groups.get("hh") and clock is None:
        return None
    offset = _offset(groups.get("zone")) if clock else timedelta(0)
    if offset is None:
        return None
    if groups.get("y") is None:
        assert clock is not None
        base = datetime(2000, 1, 3, clock[0], clock[1], clock[2] or 0) - offset
        fields = (base.hour, base.minute) + ((base.second,) if clock[2] is not None else ())
        return Moment(match.group(0), fields, dated=False)
    month = int(groups["m"]) if groups.get("m") else _MONTHS[groups["mon"].lower()]
    try:
        day = datetime(int(groups["y"]), month, int(groups["d"]) if groups.get("d") else 1)
    except ValueError:
        return None
    if not groups.get("d"):
        return Moment(match.group(0), (day.year, day.month), dated=True)
    if clock is None:
        return Moment(match.group(0), (day.year, day.month, day.day), dated=True)
    at = day.replace(hour=clock[0], minute=clock[1], second=clock[2] or 0) - offset
    fields = (at.year, at.month, at.day, at.hour, at.minute)
    return Moment(match.group(0), fields + ((at.second,) if clock[2] is not None else ()),
                  dated=True)


def read_moments(text: str) -> tuple[list[Moment], str]:
    """The comparable dates and times of day ``text`` writes, and the text with every date
    and time (comparable or not) blanked out."""
    moments: list[Moment] = []
    rest = text
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(rest):
            moment = _moment(match)
            if moment is not None:
                moments.append(moment)
        # Blanked even when not comparable (another zone, not a real date): never numbers.
        rest = pattern.sub(lambda m: " " * len(m.group(0)), rest)
    return moments, rest


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def read_numbers(text: str) -> list[Number]:
    """The numbers ``text`` writes outside dates, times and identifiers (see module doc)."""
    _, rest = read_moments(text)
    numbers: list[Number] = []
    for match in _WORD.finditer(rest):
        word = match.group(0)
        percent = rest[match.end():match.end() + 1] == "%"
        parts = re.split(r"[-/]", word)
        if _PLAIN.match(word):
            numbers.append(Number(word, _decimal(word), percent))
        elif (unit := _WITH_UNIT.match(word)) is not None:
            numbers.append(Number(word, _decimal(unit.group("n"))))
        elif all(_PLAIN.match(part) for part in parts):
            numbers.extend(Number(part, _decimal(part)) for part in parts)
        elif _COMMA_LIST.match(word):
            numbers.extend(Number(part, Decimal(part)) for part in word.split(","))
    if not numbers:
        numbers = [Number(m.group(0), Decimal(_NUMBER_WORDS[m.group(0).lower()]))
                   for m in _NUMBER_WORD.finditer(rest)]
    return numbers


def number_problem(value: Any, quote: str) -> str | None:
    """Why the number ``value`` contradicts ``quote`` (None when it agrees or is unchecked)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        wanted = Decimal(str(value))
    except InvalidOperation:
        return None
    numbers = read_numbers(quote)
    if not numbers or any(n.matches(wanted) for n in numbers):
        return None
    written = ", ".join(dict.fromkeys(n.text for n in numbers))
    return f"its quote {quote!r} writes {written}, not {value!r}"


def timestamp_problem(value: Any, quote: str) -> str | None:
    """Why the canonical UTC ``value`` contradicts ``quote`` (None when it agrees/unchecked)."""
    moment = parse_utc(value)
    if moment is None:
        return None
    moments, _ = read_moments(quote)
    dated = [m for m in moments if m.dated]
    candidates = dated or moments
    if not candidates or any(m.matches(moment) for m in candidates):
        return None
    written = ", ".join(dict.fromkeys(m.text.strip() for m in candidates))
    what = "dates" if dated else "times of day"
    return f"its quote {quote!r} writes the {what} {written}, not {value}"


def value_problem(kind: str, value: Any, quote: str) -> str | None:
    """The number or date disagreement of one typed value with its quote (None: none found)."""
    if kind == "number":
        return number_problem(value, quote)
    if kind == "timestamp":
        return timestamp_problem(value, quote)
    return None


def _fact_problems(where: str, key: str, fact: FactSpec) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    wrong = value_problem(fact.type, fact.value, fact.quote)
    if wrong:
        problems.append((f"{where}.value", f"{fact.type} fact {key}: {wrong}"))
    if fact.type == "records" and isinstance(fact.value, list):
        for index, item in enumerate(fact.value):
            if not isinstance(item, dict) or not isinstance(item.get("quote"), str):
                continue
            for name, kind in (fact.fields or {}).items():
                wrong = value_problem(kind, item.get(name), item["quote"])  # absent: unchecked
                if wrong:
                    problems.append((f"{where}.value[{index}].{name}",
                                     f"{kind} field {name} of record {index} of {key}: {wrong}"))
    return problems


def quoted_value_problems(scenario: Scenario) -> list[tuple[str, str, str]]:
    """``(field, message, context id)`` for every number or date fact its quote contradicts."""
    problems = [(where, message, "")
                for key, fact in scenario.policy_facts.items()
                for where, message in _fact_problems(f"policy_facts.{key}", key, fact)]
    for index, context in enumerate(scenario.contexts):
        for key, fact in context.facts.items():
            problems.extend((where, message, context.id) for where, message in
                            _fact_problems(f"contexts[{index}].facts.{key}", key, fact))
    return problems
