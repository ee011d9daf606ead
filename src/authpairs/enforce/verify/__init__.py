"""Independent verifiers: one module per effect type, reading back through their own channel
(:class:`~authpairs.enforce.verify.channel.ReadChannel`), plus the unrelated-resource digest.

No module in this package imports :mod:`authpairs.enforce.execute`.
"""

from __future__ import annotations

from authpairs.enforce.verify.analysis import AnalysisVerifier
from authpairs.enforce.verify.base import Judgement, ResourceKey, Verifier
from authpairs.enforce.verify.channel import ObservationError, ReadChannel
from authpairs.enforce.verify.delivery import DeliveryVerifier
from authpairs.enforce.verify.deployment import DeploymentVerifier
from authpairs.enforce.verify.download import DownloadVerifier
from authpairs.enforce.verify.ledger import LedgerVerifier
from authpairs.enforce.verify.orders import OrderVerifier
from authpairs.enforce.verify.records import RecordVerifier
from authpairs.enforce.verify.reservation import ReservationVerifier
from authpairs.enforce.verify.signing import SigningVerifier

VERIFIERS: dict[str, Verifier] = {
    "ledger_transfer": LedgerVerifier(),
    "order_creation": OrderVerifier(),
    "record_update": RecordVerifier(),
    "byte_delivery": DeliveryVerifier(),
    "deployment": DeploymentVerifier(),
    "document_signing": SigningVerifier(),
    "reservation": ReservationVerifier(),
    "analysis_inclusion": AnalysisVerifier(),
    "download_delivery": DownloadVerifier(),
}

__all__ = ["VERIFIERS", "Judgement", "ObservationError", "ReadChannel", "ResourceKey", "Verifier"]
