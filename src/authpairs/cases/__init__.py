"""The case contract: typed models, canonical hashing, the public view and dataset loading."""

from authpairs.cases.canonical import canonical_json, sha256_hex
from authpairs.cases.dataset import Dataset, DatasetError, load_dataset
from authpairs.cases.models import (
    Case,
    EffectDescriptor,
    Evidence,
    EvidenceDocument,
    Label,
    Policy,
    PublicCase,
    Reference,
    Request,
    Source,
)

__all__ = [
    "Case",
    "Dataset",
    "DatasetError",
    "EffectDescriptor",
    "Evidence",
    "EvidenceDocument",
    "Label",
    "Policy",
    "PublicCase",
    "Reference",
    "Request",
    "Source",
    "canonical_json",
    "load_dataset",
    "sha256_hex",
]
