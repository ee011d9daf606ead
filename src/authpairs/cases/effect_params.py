"""Typed parameter models of the nine built-in effect types (part of the public case contract).

The parameter names are exactly those of ``docs/datasets/language-format.md``. Validation is the
first line of containment: identifiers (accounts, ids, file names, services, datasets, recipients)
use ``[A-Za-z0-9._-]`` only and may not start with a dot, so a path separator, ``..``, an absolute
path or a SQL fragment can never reach the file system or a query as a name; free text is bounded
in size and free of NUL and other control characters; payloads are capped
(:data:`MAX_CONTENT_BYTES`). Every failure raises :class:`DescriptorError` naming the effect type
and the parameter.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StrictInt, StrictStr, model_validator

from authpairs.cases.canonical import parse_utc
from authpairs.cases.models import StrictModel
from authpairs.errors import DataError

MAX_CONTENT_BYTES = 256 * 1024
"""Largest payload (UTF-8 bytes) a delivery, deployment, signing or download may carry."""
MAX_VALUE_BYTES = 16 * 1024
"""Largest value a record update may write."""
MAX_TEXT_CHARS = 200
"""Longest free-text name (vendor, item, holder, signer, record field)."""
MAX_AMOUNT_CENTS = 100_000_000_00
"""Largest amount or unit price: 100,000,000.00 in any currency."""

_IDENTIFIER = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
_VERSION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}")
_DECIMAL = re.compile(r"(0|[1-9][0-9]{0,11})(\.[0-9]{1,2})?")
_CURRENCY = re.compile(r"[A-Z]{3}")
_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAK = re.compile(r"[\n\r\t]")


class DescriptorError(DataError):
    """An effect descriptor is unknown or malformed; the message names the type and parameter."""

    def __init__(self, effect_type: str, message: str, field: str | None = None) -> None:
        self.effect_type = effect_type
        self.field = field
        where = f"effect '{effect_type}'"
        if field:
            where += f", param '{field}'"
        super().__init__(f"{where}: {message}")


def _matching(pattern: re.Pattern[str], message: str) -> Any:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(message)
        return value

    return check


def _decimal(value: str) -> str:
    if not _DECIMAL.fullmatch(value):
        raise ValueError("must be a decimal string with at most 2 decimals, e.g. '75.00'")
    cents = to_cents(value)
    if cents <= 0:
        raise ValueError("must be greater than zero")
    if cents > MAX_AMOUNT_CENTS:
        raise ValueError("exceeds the sandbox limit of 100000000.00")
    return value


def _utc(value: str) -> str:
    if not _UTC.fullmatch(value):
        raise ValueError("must be canonical UTC 'YYYY-MM-DDTHH:MM:SSZ'")
    if parse_utc(value) is None:
        raise ValueError("is not a valid time (no such day or time of day)")
    return value


def _name_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"must be at most {MAX_TEXT_CHARS} characters")
    if _CONTROL.search(value) or _LINE_BREAK.search(value):
        raise ValueError("must not contain control characters or line breaks")
    return value


def _bounded(limit: int) -> Any:
    def check(value: str) -> str:
        size = len(value.encode("utf-8"))
        if size > limit:
            raise ValueError(f"is {size} bytes; the limit is {limit} bytes")
        if _CONTROL.search(value):
            raise ValueError("must not contain NUL or other control characters")
        return value

    return check


Identifier = Annotated[StrictStr, AfterValidator(_matching(
    _IDENTIFIER, "must be an identifier: 1-128 characters of [A-Za-z0-9._-], not starting with "
    "'.' (no paths, no '..', no spaces)"))]
Version = Annotated[StrictStr, AfterValidator(_matching(
    _VERSION, "must be 1-64 characters of [A-Za-z0-9._+-]"))]
DecimalString = Annotated[StrictStr, AfterValidator(_decimal)]
Currency = Annotated[StrictStr, AfterValidator(_matching(
    _CURRENCY, "must be a three-letter upper-case currency code, e.g. 'USD'"))]
UtcTime = Annotated[StrictStr, AfterValidator(_utc)]
NameText = Annotated[StrictStr, AfterValidator(_name_text)]
Content = Annotated[StrictStr, AfterValidator(_bounded(MAX_CONTENT_BYTES))]
Value = Annotated[StrictStr, AfterValidator(_bounded(MAX_VALUE_BYTES))]


def to_cents(amount: str) -> int:
    """Convert a validated decimal string ('75.00', '75.5', '75') to integer minor units."""
    return int(Decimal(amount) * 100)


class EffectParams(StrictModel):
    """Base of the typed parameter models: unknown parameters are errors, values are frozen."""


class LedgerTransfer(EffectParams):
    """Move ``amount`` of ``currency`` from one ledger account to another."""

    from_account: Identifier
    to_account: Identifier
    amount: DecimalString
    currency: Currency

    @model_validator(mode="after")
    def _distinct(self) -> LedgerTransfer:
        if self.from_account == self.to_account:
            raise ValueError("from_account and to_account must differ")
        return self


class OrderCreation(EffectParams):
    """Create purchase order ``order_id`` with one line item."""

    order_id: Identifier
    vendor: NameText
    item: NameText
    quantity: Annotated[StrictInt, Field(ge=1, le=1_000_000)]
    unit_price: DecimalString
    currency: Currency


class RecordUpdate(EffectParams):
    """Set ``field`` of record ``record_id`` to ``value``."""

    record_id: Identifier
    field: NameText
    value: Value


class ByteDelivery(EffectParams):
    """Deliver ``content`` (UTF-8) as file ``file_name`` into ``recipient``'s outbox."""

    recipient: Identifier
    file_name: Identifier
    content: Content


class Deployment(EffectParams):
    """Deploy ``version`` of ``service`` serving ``content`` to ``percentage`` % of traffic."""

    service: Identifier
    version: Version
    content: Content
    percentage: Annotated[StrictInt, Field(ge=1, le=100)]


class DocumentSigning(EffectParams):
    """Sign document ``document_id`` (file ``file_name`` holding ``content``) as ``signer``."""

    document_id: Identifier
    file_name: Identifier
    content: Content
    signer: NameText


class Reservation(EffectParams):
    """Reserve ``resource_id`` for ``holder`` over ``[start, end)`` (canonical UTC)."""

    resource_id: Identifier
    holder: NameText
    start: UtcTime
    end: UtcTime

    @model_validator(mode="after")
    def _ordered(self) -> Reservation:
        if self.start >= self.end:
            raise ValueError("start must be before end")
        return self


class AnalysisInclusion(EffectParams):
    """Include participant ``subject_id`` in analysis dataset ``dataset``."""

    dataset: Identifier
    subject_id: Identifier


class DownloadDelivery(EffectParams):
    """Publish ``content`` as a complete download ``file_name`` for ``recipient`` over HTTP."""

    recipient: Identifier
    file_name: Identifier
    content: Content
