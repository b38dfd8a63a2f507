"""Configuration: file, ${ENV}, environment overrides, flags, paths, errors, starter, show."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

import kgkit as kgkit_package
from kgkit.config import Config, StageLLM
from kgkit.config.loader import load_config
from kgkit.errors import ConfigError

from support.cli_support import kgkit

SCHEMA = Path(kgkit_package.__file__).resolve().parent / "schemas" / "config.schema.json"  # as installed


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No user config, cache or KGKIT_* variables leak in; the working dir is empty."""
    for name in ("KGKIT_MODEL", "KGKIT_API_BASE", "KGKIT_CACHE_DIR", "KGKIT_DOMAIN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_means_defaults(tmp_path):
    assert load_config(env={}) == Config()


def test_file_in_working_directory_and_relative_paths(tmp_path):
    project = tmp_path / "project"
    write(project / "kgkit.yaml", """
llm: {model: openai/gpt-4o-mini, temperature: 0.2, stages: {upgrades: {model: openai/gpt-4o}}}
domain: domains/legal_plus.yaml
views: [binary, nary]
chunking: {size: 1200, overlap: 100}
cache: {dir: .cache/kgkit}
skills: {library: ../shared-skills, top_k: 5}
prompts: {entities: prompts/ents.j2, nary: /abs/nary.j2}
output: {dir: out}
""")
    config = load_config(env={}, cwd=project)
    assert config.source == project / "kgkit.yaml"
    assert (config.llm.model, config.llm.temperature) == ("openai/gpt-4o-mini", 0.2)
    assert config.llm.stages["upgrades"].model == "openai/gpt-4o"
    assert (config.chunk_size, config.chunk_overlap, config.views) == (1200, 100, ["binary", "nary"])
    assert config.cache.dir == project / ".cache" / "kgkit"
    assert config.skills.library == tmp_path / "shared-skills"
    assert config.skills.top_k == 5
    assert config.prompts == {"entities": project / "prompts" / "ents.j2", "nary": Path("/abs/nary.j2")}
    assert config.out_dir == project / "out"
    assert config.domain == str(project / "domains" / "legal_plus.yaml")


def test_a_file_of_only_comments_is_the_defaults(tmp_path):
    write(tmp_path / "kgkit.yaml", "# all commented out\n\n---\n")
    assert load_config(env={}, cwd=tmp_path) == dataclasses.replace(Config(), source=tmp_path / "kgkit.yaml")


def test_explicit_path_is_relative_to_cwd_and_its_values_to_the_file(tmp_path):
    write(tmp_path / "conf" / "my.yaml", "cache: {dir: c}\ndomain: legal\n")
    config = load_config("conf/my.yaml", env={}, cwd=tmp_path)
    assert config.cache.dir == tmp_path / "conf" / "c"
    assert config.domain == "legal"  # a name, not a path: left for the catalog


def test_env_interpolation_and_types(tmp_path):
    write(tmp_path / "kgkit.yaml", "llm:\n  model: ${MODEL}\n  timeout: ${TIMEOUT}\n  api_base: http://${HOST}:11434\n")
    config = load_config(env={"MODEL": "ollama/qwen2.5:7b", "TIMEOUT": "12.5", "HOST": "localhost"}, cwd=tmp_path)
    assert (config.llm.model, config.llm.timeout, config.llm.api_base) == (
        "ollama/qwen2.5:7b", 12.5, "http://localhost:11434")


def test_dollar_dollar_is_a_literal_and_a_broken_reference_an_error(tmp_path):
    write(tmp_path / "kgkit.yaml", "domain: ${D}-$${NOT_A_VAR}\n")
    assert load_config(env={"D": "legal"}, cwd=tmp_path).domain == "legal-${NOT_A_VAR}"
    path = write(tmp_path / "kgkit.yaml", "domain: ${D\n")
    with pytest.raises(ConfigError) as err:
        load_config(env={"D": "legal"}, cwd=tmp_path)
    assert err.value.message.splitlines()[0] == f"{path}:1:9: domain: malformed ${{...}} in '${{D'; expected ${{NAME}}"


def test_missing_variable_is_named_with_its_line(tmp_path):
    path = write(tmp_path / "kgkit.yaml", "domain: legal\nllm:\n  model: ${NOPE_MODEL}\n")
    with pytest.raises(ConfigError) as err:
        load_config(env={}, cwd=tmp_path)
    assert err.value.message == (
        f"{path}:3:10: llm -> model: environment variable NOPE_MODEL is not set "
        "(export NOPE_MODEL=... or edit the file)\n1 problem in the configuration"
    )


def test_unknown_keys_say_where_and_suggest_all_at_once(tmp_path):
    path = write(tmp_path / "kgkit.yaml", "llm:\n  modle: x\nchunkng: {size: 10}\ncache:\n  enabled: maybe\n")
    with pytest.raises(ConfigError) as err:
        load_config(env={}, cwd=tmp_path)
    assert err.value.message.splitlines() == [
        f"{path}:2:3: llm -> modle: unknown key 'modle' (did you mean 'model'?)",
        f"{path}:3:1: chunkng: unknown key 'chunkng' (did you mean 'chunking'?)",
        f"{path}:5:12: cache -> enabled: expected true or false, got the text 'maybe'",
        "3 problems in the configuration",
    ]


def test_yaml_syntax_error_is_a_config_error(tmp_path):
    write(tmp_path / "kgkit.yaml", "llm: [unclosed\n")
    with pytest.raises(ConfigError, match=r"kgkit\.yaml:1:6: YAML syntax error: the bracket .\[. opened here is never closed"):
        load_config(env={}, cwd=tmp_path)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found: nowhere.yaml") as err:
        load_config("nowhere.yaml", env={}, cwd=tmp_path)
    assert err.value.hint == "create one with `kgkit init`"


def test_precedence_file_then_env_then_overrides(tmp_path):
    write(tmp_path / "kgkit.yaml", "llm: {model: file/model, api_base: http://file}\ndomain: general\ncache: {dir: from-file}\n")
    env = {"KGKIT_MODEL": "env/model", "KGKIT_DOMAIN": "legal", "KGKIT_CACHE_DIR": "env-cache", "KGKIT_API_BASE": ""}
    config = load_config(env=env, cwd=tmp_path)
    assert (config.llm.model, config.domain, config.llm.api_base) == ("env/model", "legal", "http://file")
    assert config.cache.dir == tmp_path / "env-cache"  # from the environment: relative to cwd
    config = load_config(env=env, cwd=tmp_path,
                         overrides={"llm.model": "flag/model", "cache.enabled": False, "output.dir": tmp_path / "o",
                                    "chunking.size": 500, "domain": None})
    assert (config.llm.model, config.cache.enabled, config.out_dir, config.chunk_size) == (
        "flag/model", False, tmp_path / "o", 500)
    assert config.domain == "legal"  # None means "flag not given"


def test_bad_overrides_and_env_values(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(env={}, cwd=tmp_path, overrides={"llm.temprature": 0.3, "chunking.size": "big"})
    assert err.value.message.splitlines() == [
        "override: chunking -> size: expected a whole number or nothing, got the text 'big'",
        "override: llm -> temprature: unknown key 'temprature' (did you mean 'temperature'?)",
        "2 problems in the configuration",
    ]


def test_overlap_must_be_smaller_than_size(tmp_path):
    write(tmp_path / "kgkit.yaml", "chunking: {size: 100, overlap: 100}\n")
    with pytest.raises(ConfigError, match=r"chunking -> overlap: must be smaller than size \(100 >= 100\)"):
        load_config(env={}, cwd=tmp_path)


def test_a_home_directory_of_no_user_is_a_config_error(tmp_path):
    """pathlib raises a bare RuntimeError for "~nosuchuser" (found by the config fuzz test)."""
    message = r"^{}: cannot expand '~kgkit-no-such-user/x': no such user, or no home directory$"
    with pytest.raises(ConfigError, match=message.format("cache -> dir")):
        load_config(env={"KGKIT_CACHE_DIR": "~kgkit-no-such-user/x"}, cwd=tmp_path)
    with pytest.raises(ConfigError, match=message.format("output -> dir")):
        load_config(env={}, cwd=tmp_path, overrides={"output.dir": "~kgkit-no-such-user/x"})
    with pytest.raises(ConfigError, match=message.format("--config")):
        load_config("~kgkit-no-such-user/x", env={}, cwd=tmp_path)


def test_api_key_only_through_a_variable(tmp_path):
    write(tmp_path / "kgkit.yaml", "llm: {model: openai/gpt-4o-mini, api_key: '${MY_OPENAI_KEY}'}\n")
    config = load_config(env={"MY_OPENAI_KEY": "sk-live-123"}, cwd=tmp_path)
    assert config.llm.api_key_env == "MY_OPENAI_KEY"
    assert "sk-live-123" not in repr(config)
    path = write(tmp_path / "kgkit.yaml", "llm:\n  api_key: sk-live-123\n")
    with pytest.raises(ConfigError) as err:
        load_config(env={}, cwd=tmp_path)
    assert err.value.message.splitlines()[0] == (
        f"{path}:2:12: llm -> api_key: a literal API key does not belong in a file "
        "(write api_key: ${VARIABLE} or api_key_env: VARIABLE and export the key)"
    )


def _schema_keys(props, sections, settings, prefix=()):
    """Key paths of the schema's settings: the keys inside a declared section, or inside a
    grouping that is no setting itself (``chunking``, ``output``), else the key itself."""
    for name, spec in props.items():
        key = prefix + (name,)
        if "properties" in spec and (key in sections or key not in settings):
            yield from _schema_keys(spec["properties"], sections, settings, key)
        else:
            yield key


def test_the_published_schema_is_made_from_the_declared_settings():
    """Each setting is declared once (kgkit/config/model.py): the schema's descriptions and
    defaults are those declarations, and its keys are exactly the declared settings."""
    from kgkit.config.settings import Section, declared, schema_text, settings

    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), "run: python -m kgkit.config.settings"
    props = json.loads(SCHEMA.read_text())["properties"]
    sections = {s.key for s in declared() if isinstance(s, Section)}
    # llm.api_key is another spelling of llm.api_key_env (${VAR} only), not a setting of its own
    keys = {s.key for s in settings()}
    assert set(_schema_keys(props, sections, keys)) - {("llm", "api_key")} == keys
    assert all(s.doc for s in settings())
    stage = props["llm"]["properties"]["stages"]["properties"]["core"]
    assert set(stage["properties"]) == {f.name for f in dataclasses.fields(StageLLM)}


def test_a_stale_schema_description_is_caught(tmp_path):
    """The check above can fail: a description edited in the file alone differs from the declaration."""
    from kgkit.config.settings import schema_with_declarations

    schema = json.loads(SCHEMA.read_text())
    schema["properties"]["canon"]["properties"]["fuzzy_threshold"]["description"] = "edited by hand"
    assert schema_with_declarations(schema) != schema


# ------------------------------------------------------------------ kgkit init


def test_init_writes_a_starter_that_loads_back_to_the_defaults(tmp_path):
    result = kgkit("init")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Wrote {tmp_path / 'kgkit.yaml'}.")
    text = (tmp_path / "kgkit.yaml").read_text()
    for model in ("openai/gpt-4o-mini", "anthropic/claude-", "ollama/qwen2.5:7b", "hosted_vllm/"):
        assert f"#   model: {model}" in text
    config = load_config(env={}, cwd=tmp_path)
    assert config == dataclasses.replace(Config(), source=tmp_path / "kgkit.yaml")


def test_init_refuses_to_overwrite_without_force(tmp_path):
    write(tmp_path / "kgkit.yaml", "domain: legal\n")
    result = kgkit("init")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {tmp_path / 'kgkit.yaml'} already exists; not overwriting it\n"
                             "  hint: use --force to replace it\n")
    assert (tmp_path / "kgkit.yaml").read_text() == "domain: legal\n"
    assert kgkit("init", "--force").exit_code == 0
    assert load_config(env={}, cwd=tmp_path).domain == "general"


def test_switching_provider_is_editing_llm_model(tmp_path):
    assert kgkit("init").exit_code == 0
    path = tmp_path / "kgkit.yaml"
    text = path.read_text()
    assert text.count("\n  model: null") == 1 and text.count("\n  api_base: null") == 1
    path.write_text(text.replace("\n  model: null", "\n  model: ollama/qwen2.5:7b")
                    .replace("\n  api_base: null", "\n  api_base: http://localhost:11434"))
    config = load_config(env={}, cwd=tmp_path)
    assert (config.llm.model, config.llm.api_base) == ("ollama/qwen2.5:7b", "http://localhost:11434")


# ------------------------------------------------------------------ kgkit config show


def test_config_show_prints_effective_yaml_with_secrets_masked(tmp_path, monkeypatch):
    write(tmp_path / "kgkit.yaml",
          "llm:\n  model: ${MODEL_NAME}\n  api_base: ${PROXY_TOKEN}\n  api_key: ${OPENAI_KEY}\nchunking: {size: 900}\n")
    monkeypatch.setenv("MODEL_NAME", "openai/gpt-4o-mini")
    monkeypatch.setenv("PROXY_TOKEN", "https://proxy.example/tok-987")
    monkeypatch.setenv("OPENAI_KEY", "sk-live-123")
    monkeypatch.setenv("KGKIT_DOMAIN", "legal")
    result = kgkit("config", "show")
    assert result.exit_code == 0, result.output
    assert "sk-live-123" not in result.output and "tok-987" not in result.output
    assert result.stdout.splitlines()[:2] == [
        "# effective kgkit configuration",
        f"# from: {tmp_path / 'kgkit.yaml'}; $KGKIT_DOMAIN",
    ]
    shown = yaml.safe_load(result.stdout)
    assert shown["llm"]["model"] == "openai/gpt-4o-mini"
    assert shown["llm"]["api_base"] == "********"
    assert shown["llm"]["api_key_env"] == "OPENAI_KEY"
    assert (shown["domain"], shown["chunking"]["size"]) == ("legal", 900)


def test_config_show_masks_a_password_in_the_api_base(tmp_path):
    path = write(tmp_path / "elsewhere" / "c.yaml", "llm: {api_base: 'https://me:hunter2@llm.example/v1'}\n")
    result = kgkit("config", "show", "--config", str(path))
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout)["llm"]["api_base"] == "https://me:********@llm.example/v1"


def test_config_show_reports_config_errors_with_exit_code_2(tmp_path):
    path = write(tmp_path / "kgkit.yaml", "llm: {modle: x}\n")
    result = kgkit("config", "show")
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {path}:1:7: llm -> modle: unknown key 'modle' (did you mean 'model'?)\n"
                             "1 problem in the configuration\n")


# ------------------------------------------------------------------ round trip

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kgkit.config import CacheConfig, CanonConfig, LLMConfig, ReviewConfig, SkillsConfig  # noqa: E402
from kgkit.config.starter import starter_text  # noqa: E402

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
UNIT = st.floats(0, 1, allow_nan=False)
CONFIGS = st.builds(
    Config,
    llm=st.builds(LLMConfig, model=st.none() | TEXT, api_base=st.none() | TEXT,
                  api_key_env=st.none() | st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
                  temperature=st.floats(0, 2, allow_nan=False), max_tokens=st.integers(1, 10**6),
                  timeout=st.floats(0.1, 1e4, allow_nan=False), retries=st.integers(0, 20),
                  backoff=st.floats(0, 100, allow_nan=False), json_mode=st.booleans()),
    domain=TEXT.filter(lambda t: "/" not in t and not t.endswith((".yaml", ".yml"))),
    views=st.none() | st.lists(TEXT, max_size=4),
    chunk_size=st.none() | st.integers(1000, 5000),
    chunk_overlap=st.none() | st.integers(0, 999),
    canon=st.builds(CanonConfig, fuzzy_threshold=st.floats(0, 100, allow_nan=False), legal_suffixes=st.booleans(),
                    block_cap=st.none() | st.integers(0, 10**6)),
    review=st.builds(ReviewConfig, confidence_threshold=UNIT, evidence_threshold=st.floats(0, 100, allow_nan=False)),
    cache=st.builds(CacheConfig, enabled=st.booleans(), dir=st.none() | st.just(Path("/var/cache/kgkit-test"))),
    skills=st.builds(SkillsConfig, enabled=st.booleans(), top_k=st.integers(0, 50), library=st.none(),
                     rollouts=st.integers(1, 9), temperature=st.floats(0, 2, allow_nan=False),
                     jaccard_merge=UNIT, jaccard_modify=UNIT),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=CONFIGS)
def test_property_starter_round_trips_any_config(tmp_path, config):
    """The starter written with any valid values loads back to exactly those values."""
    path = write(tmp_path / "rt" / "kgkit.yaml", starter_text(config))
    assert load_config(path, env={}) == dataclasses.replace(config, source=path)
