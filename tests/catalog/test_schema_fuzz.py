"""Whatever an author writes, validation answers with issues, never a traceback.

Good fixture files are mutated at random places (a value replaced by another shape, a key
renamed, an entry dropped) and written back as YAML; the result must either validate or
raise ValidationError whose every issue has a line and a message.
"""
from __future__ import annotations

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgkit.errors import ValidationError
from kgkit.catalog.validation import validate_file
from support.schema_support import FIXTURES

FILES = {kind: sorted((FIXTURES / kind).glob("*.yaml")) for kind in ("domains", "views", "templates")}
values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5000) | st.text(max_size=8) | st.sampled_from(["*", "Person", "[A-", "enum"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["name", "head", "roles", "regex", "x"]), inner, max_size=3),
    max_leaves=6,
)


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


def _mutate(data, path, action, value):
    if not path:
        return value if action == "replace" else data
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "replace":
        parent[last] = value
    elif action == "drop":
        del parent[last]
    elif isinstance(parent, dict):  # rename a key
        parent[f"{last}x"] = parent.pop(last)
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_files_give_issues_not_tracebacks(data, fixture_project, tmp_path):
    kind = data.draw(st.sampled_from(sorted(FILES)))
    source = data.draw(st.sampled_from(FILES[kind]))
    original = yaml.safe_load(source.read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(_paths(original))))
        action = data.draw(st.sampled_from(["replace", "drop", "rename"]))
        original = _mutate(copy.deepcopy(original), path, action, data.draw(values))
    target = tmp_path / source.name
    target.write_text(yaml.safe_dump(original, sort_keys=False), encoding="utf-8")
    if source.parent.name == "views":  # keep a relative prompt resolvable
        (tmp_path / "nary.j2").write_text("{{ chunk }}", encoding="utf-8")
    try:
        validate_file(kind, target)
    except ValidationError as exc:
        assert exc.issues
        for issue in exc.issues:
            assert issue.file == str(target) and issue.line and issue.message


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200) | st.text(alphabet="ab:-[]{}&*!|>#'\"\t\n ,?%@`", max_size=80).map(str.encode))
def test_any_bytes_give_issues_not_tracebacks(raw, fixture_project, tmp_path):
    target = tmp_path / "fuzz.yaml"
    target.write_bytes(raw)
    try:
        validate_file("domains", target)
    except ValidationError as exc:
        assert all(issue.message for issue in exc.issues)
