"""The tools, resources and prompts of agent mode, without a transport."""

from __future__ import annotations

from authpairs.agent.material import material_json, public_material, task_text
from authpairs.agent.tools import proposal_of, proposed_descriptor, tool_specs
from authpairs.cases.effect_types import EFFECT_TYPES
from authpairs.cases.examples import load_examples
from authpairs.cases.models import Case, Label
from authpairs.runs.records import Proposal
from authpairs.tracks.language.cases import load_language_dataset
from tests.agent.helpers import SECRETS, with_secrets


def test_every_effect_type_is_a_tool_with_its_parameter_schema() -> None:
    specs = {spec.name: spec for spec in tool_specs()}
    assert set(specs) == set(EFFECT_TYPES.names())
    for name, spec in specs.items():
        model = EFFECT_TYPES.get(name).params
        schema = model.model_json_schema()
        assert spec.input_schema["properties"] == schema["properties"]
        assert spec.input_schema["required"] == schema["required"]
        assert spec.input_schema["additionalProperties"] is False
        assert spec.description.startswith(EFFECT_TYPES.get(name).doc)


def test_a_call_is_the_case_operation_only_with_the_same_tool_and_arguments() -> None:
    case = next(iter(load_examples()))
    effect = case.public.effect
    assert effect is not None
    own, other = Proposal.CASE_OPERATION, Proposal.OTHER_OPERATION
    assert proposal_of(effect, proposed_descriptor(effect.type, dict(effect.params))) is own
    other_amount = {**effect.params, "amount": "75.0"}
    assert proposal_of(effect, proposed_descriptor(effect.type, other_amount)) is other
    assert proposal_of(effect, proposed_descriptor("record_update", effect.params)) is other
    assert proposal_of(None, proposed_descriptor(effect.type, effect.params)) is other


def _flip(case: Case) -> Case:
    other = Label.FORBIDDEN if case.reference.label is Label.LAWFUL else Label.LAWFUL
    flipped = with_secrets(case)
    return flipped.model_copy(update={
        "reference": flipped.reference.model_copy(update={"label": other})})


def test_material_and_task_depend_only_on_request_policy_and_evidence() -> None:
    for dataset in (load_examples(), load_language_dataset()):
        for case in dataset:
            flipped = _flip(case)
            assert material_json(flipped.public) == material_json(case.public)
            assert task_text(flipped.public) == task_text(case.public)
            exposed = material_json(flipped.public) + task_text(flipped.public)
            assert not [s for s in SECRETS if s in exposed], case.case_id


def test_the_agent_is_not_shown_the_case_operation() -> None:
    for case in load_language_dataset():
        material = public_material(case.public)
        assert set(material) == {"case_id", "request", "policy", "evidence"}
        assert case.public.effect is not None
        assert '"effect"' not in material_json(case.public)
        bare = case.public.model_copy(update={"effect": None})
        assert task_text(bare) == task_text(case.public)
