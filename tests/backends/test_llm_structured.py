"""Pass schemas in the form strict structured output takes (kgkit/backends/structured.py)."""
from __future__ import annotations

import jsonschema
import pytest

from kgkit.backends.structured import drop_unfilled, strict_schema
from kgkit.engine.core import ENTITIES_SCHEMA, RELATIONS_SCHEMA
from kgkit.catalog.load import load_view
from kgkit.learning.rollouts import SKILL_SCHEMA

CLOSED = {"entities": ENTITIES_SCHEMA, "relations": RELATIONS_SCHEMA, "skills": SKILL_SCHEMA}


def objects(node):
    """Every object schema inside ``node``."""
    if isinstance(node, dict):
        if node.get("type") == "object" or (isinstance(node.get("type"), list) and "object" in node["type"]):
            yield node
        for value in node.values():
            yield from objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from objects(value)


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_every_object_is_closed_with_all_properties_required(name):
    strict = strict_schema(CLOSED[name])

    jsonschema.validators.validator_for(strict).check_schema(strict)
    found = list(objects(strict))
    assert found
    for node in found:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])


@pytest.mark.parametrize("view", ["nary", "temporal", "event", "diy:contract_review"])
def test_a_schema_with_a_free_form_map_has_no_strict_form(view):
    """Roles, arguments and qualifiers are maps keyed by the domain's names: strict mode
    cannot say that, so these passes go as JSON mode (the backend's fallback)."""
    assert strict_schema(load_view(view).output_schema) is None


def test_an_answer_with_nulls_for_what_it_lacks_fits_strict_and_original_after_dropping_them():
    answer = {"entities": [{"name": "Acme Corp", "type": "Organization", "evidence": None, "confidence": 0.8},
                           {"name": "Ann Lee", "type": "Person", "evidence": "Ann Lee", "confidence": None}]}

    jsonschema.validate(answer, strict_schema(ENTITIES_SCHEMA))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, ENTITIES_SCHEMA)
    dropped = drop_unfilled(answer, ENTITIES_SCHEMA)

    jsonschema.validate(dropped, ENTITIES_SCHEMA)
    assert dropped == {"entities": [{"name": "Acme Corp", "type": "Organization", "confidence": 0.8},
                                    {"name": "Ann Lee", "type": "Person", "evidence": "Ann Lee"}]}


def test_a_null_for_a_required_property_is_kept_for_validation_to_refuse():
    answer = {"entities": [{"name": None, "type": "Person"}]}

    assert drop_unfilled(answer, ENTITIES_SCHEMA) == answer
