"""Effect executors: one module per effect type, each performing the real local operation.

An executor receives validated parameters (:mod:`authpairs.enforce.descriptors`) and an
:class:`ExecContext` (the read-write database connection, the sandbox root and the case scope),
performs the operation and returns a small JSON description of what it did. It raises
:class:`ExecutionError` when the sandbox refuses the operation (insufficient funds, an existing
order, an overlapping reservation). Verifiers never import this package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from authpairs.enforce.execute.analysis import execute_analysis_inclusion
from authpairs.enforce.execute.context import ExecContext, ExecutionError
from authpairs.enforce.execute.delivery import execute_byte_delivery
from authpairs.enforce.execute.deployment import execute_deployment
from authpairs.enforce.execute.download import execute_download_delivery
from authpairs.enforce.execute.ledger import execute_ledger_transfer
from authpairs.enforce.execute.orders import execute_order_creation
from authpairs.enforce.execute.records import execute_record_update
from authpairs.enforce.execute.reservation import execute_reservation
from authpairs.enforce.execute.signing import execute_document_signing

ExecuteFn = Callable[[Any, ExecContext], dict[str, Any]]
"""An executor: ``(params, context) -> description of what was done``."""

EXECUTORS: dict[str, ExecuteFn] = {
    "ledger_transfer": execute_ledger_transfer,
    "order_creation": execute_order_creation,
    "record_update": execute_record_update,
    "byte_delivery": execute_byte_delivery,
    "deployment": execute_deployment,
    "document_signing": execute_document_signing,
    "reservation": execute_reservation,
    "analysis_inclusion": execute_analysis_inclusion,
    "download_delivery": execute_download_delivery,
}

__all__ = ["EXECUTORS", "ExecContext", "ExecuteFn", "ExecutionError"]
