"""The Inspect AI tasks of authpairs, registered through the ``inspect_ai`` entry point.

    inspect eval authpairs/language --model openai-api/local/SmolLM2 -T interface=direct
    inspect eval authpairs/native --model mockllm/model -T split=dev -T limit=20
    inspect eval authpairs/cases -T dataset=path/to/cases.jsonl --model ...

Task parameters: ``interface`` (direct, structured, schema, or a registered name),
``interface_options`` (a mapping, as ``reviewer.interface_options`` of a run configuration:
``-T 'interface_options={reasoning_effort: low}'``), ``split`` (dev, test, all), ``limit``
(first N cases), ``enforce`` (execute ALLOWed effects in the authpairs sandbox, one sandbox per
epoch); what they leave out is as for ``authpairs run --dataset``. ``--epochs N`` repeats every
case; ``authpairs import-inspect`` keeps each epoch as a run of its own.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

import authpairs.main_job as main_job
from authpairs.integrations.inspect_task import authpairs_task


@task
def language(interface: str = main_job.INTERFACE, split: str | None = None,
             limit: int | None = None, enforce: bool = main_job.ENFORCE,
             interface_options: dict[str, Any] | None = None) -> Task:
    """The language track: prose policies and evidence, effects executed and verified."""
    return authpairs_task("language", interface=interface, split=split, limit=limit,
                          enforce=enforce, interface_options=interface_options)


@task
def native(interface: str = main_job.INTERFACE, split: str | None = None,
           limit: int | None = None, interface_options: dict[str, Any] | None = None) -> Task:
    """The native-policy track: OpenFGA and Cedar requests, decision only."""
    return authpairs_task("native", interface=interface, split=split, limit=limit,
                          enforce=False, interface_options=interface_options)


@task
def cases(dataset: str, interface: str = main_job.INTERFACE, split: str | None = None,
          limit: int | None = None, enforce: bool = main_job.ENFORCE,
          interface_options: dict[str, Any] | None = None) -> Task:
    """Any authpairs dataset: 'examples', a JSONL case file or an exported Hugging Face folder."""
    return authpairs_task(dataset, interface=interface, split=split, limit=limit,
                          enforce=enforce, interface_options=interface_options)
