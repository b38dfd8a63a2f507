"""Load the effective configuration: defaults < kgkit.yaml < environment < CLI flags.

In order, predictably: find the file (``--config``, else ``kgkit.yaml`` in the working
directory, else none); parse it with line marks; substitute ``${VAR}`` in string values
(a missing variable is an error naming it); validate against
``kgkit/schemas/config.schema.json`` (unknown keys get a did-you-mean); apply the
environment (``KGKIT_MODEL``, ``KGKIT_API_BASE``, ``KGKIT_LLM_CLIENT``, ``KGKIT_CACHE_DIR``, ``KGKIT_DOMAIN``)
and then ``overrides`` (dotted keys in the file's layout, e.g. ``{"llm.model": ...}``);
resolve relative paths — against the config file's directory for values written in it,
against the working directory for values from the environment or flags. Nothing here
changes the process's working directory.

Secrets never enter :class:`Config`: ``llm.api_key: ${VAR}`` is read as
``llm.api_key_env: VAR`` (the backend reads the variable when it calls), and a literal
key in the file is refused.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, overload

from kgkit.config.model import (
    CacheConfig,
    CanonConfig,
    GraphConfig,
    QueryConfig,
    SearchConfig,
    AskConfig,
    AskRole,
    RouteRole,
    Config,
    InputConfig,
    UpgradesConfig,
    LLMConfig,
    LimitsConfig,
    RayConfig,
    ReviewConfig,
    SkillsConfig,
    StageLLM,
)
from kgkit.errors import ConfigError, Issue
from kgkit.guards.secrets import looks_like_key, mask_url

FILE_NAMES = ("kgkit.yaml", "kgkit.yml")
ENV_OVERRIDES = {
    "KGKIT_MODEL": ("llm", "model"),
    "KGKIT_API_BASE": ("llm", "api_base"),
    "KGKIT_LLM_CLIENT": ("llm", "client"),
    "KGKIT_CACHE_DIR": ("cache", "dir"),
    "KGKIT_DOMAIN": ("domain",),
}
PATH_KEYS = (("cache", "dir"), ("skills", "library"), ("output", "dir"), ("graph", "url"))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # a whole value that is one variable
# In a value: "$${" is a literal "${"; "${NAME}" a variable; any other "${" is malformed.
_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")

Key = tuple[str, ...]  # a key path in the file's layout, e.g. ("llm", "model")


@dataclass
class Effective:
    """A loaded configuration and where its values came from (for ``kgkit config show``)."""

    config: Config
    env_vars: dict[Key, list[str]] = field(default_factory=dict)  # key path -> variables it read
    sources: list[str] = field(default_factory=list)  # what was applied, in order


def load_config(
    path: str | os.PathLike | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] = os.environ,
    cwd: str | os.PathLike | None = None,
) -> Config:
    """The effective :class:`Config`.

    ``path`` is a kgkit.yaml (``--config``); without it ``kgkit.yaml`` in ``cwd`` (default:
    the working directory) is used when present, else the defaults. ``overrides`` maps
    dotted keys of the file's layout (``"llm.model"``, ``"chunking.size"``,
    ``"cache.enabled"``, ``"output.dir"``) to values; a ``None`` value means "not given".

    Raises ConfigError listing every problem with file:line, key path and a hint.
    """
    return load_effective(path, overrides=overrides, env=env, cwd=cwd).config


def load_effective(
    path: str | os.PathLike | None = None,
    *,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] = os.environ,
    cwd: str | os.PathLike | None = None,
) -> Effective:
    """Like :func:`load_config`, also reporting which values came from which variables."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    file = _find_file(path, base)
    data: dict[str, Any] = {}
    origin: dict[Key, Path] = {}  # key path of a path value -> directory it is relative to
    effective = Effective(Config())
    issues: list[Issue] = []
    if file is not None:
        data = _read_file(file, env, effective, issues)
        for key in _path_keys(data):
            origin[key] = file.parent
        effective.sources.append(str(file))
    for name, key in ENV_OVERRIDES.items():
        if env.get(name):
            layer = _nest({key: env[name]})
            issues += _check_layer(layer, f"environment variable {name}")
            _merge(data, layer)
            effective.env_vars[key] = [name]
            origin[key] = base
            effective.sources.append(f"${name}")
    given = {k: _plain(v) for k, v in (overrides or {}).items() if v is not None}
    if given:
        layer = _nest({tuple(k.split(".")): v for k, v in given.items()})
        issues += _check_layer(layer, "override")
        _merge(data, layer)
        for key in _path_keys(layer):
            origin[key] = base
        for dotted in given:
            effective.env_vars.pop(tuple(dotted.split(".")), None)
        effective.sources.append("overrides: " + ", ".join(sorted(given)))
    if issues:
        raise _error(issues)
    effective.config = _build(data, origin, file, base)
    return effective


# ----------------------------------------------------------------------------- reading


def _find_file(path: str | os.PathLike | None, cwd: Path) -> Path | None:
    if path is None:
        return next((cwd / n for n in FILE_NAMES if (cwd / n).is_file()), None)
    file = expand_path(path, "--config")
    if not file.is_absolute():
        file = cwd / file
    if file.is_dir():
        raise ConfigError(f"{path} is a directory; give the path of a kgkit.yaml file")
    if not file.is_file():
        raise ConfigError(f"config file not found: {path}", hint="create one with `kgkit init`")
    return file


def _read_file(file: Path, env: Mapping[str, str], effective: Effective, issues: list[Issue]) -> dict[str, Any]:
    from kgkit.formats import yaml_source

    source = yaml_source.load(file)
    if source.data is None and _blank(file):
        return {}  # every key is optional: a file of comments is the defaults
    if source.issues:
        raise _error(source.issues)
    issues += _interpolate(source, source.data, (), env, effective)
    issues += _api_key(source)
    issues += _schema_issues(source)
    return source.data


def _blank(file: Path) -> bool:
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    return all(not line.strip() or line.lstrip().startswith("#") or line.strip() in ("---", "...") for line in lines)


def _interpolate(source, node: Any, path: tuple, env: Mapping[str, str], effective: Effective) -> list[Issue]:
    """Substitute ``${VAR}`` in string values, in place (``$${`` stands for a literal
    ``${``). A value that is exactly one ``${VAR}`` takes the variable's YAML scalar type
    (``${TIMEOUT}`` can be a number)."""
    issues: list[Issue] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(items):
        if isinstance(value, (dict, list)):
            issues += _interpolate(source, value, path + (key,), env, effective)
            continue
        if not isinstance(value, str) or "${" not in value:
            continue
        tokens = list(_TOKEN.finditer(value))
        names = [t.group(1) for t in tokens if t.group(0) != "$${" and t.group(1) is not None]
        if any(t.group(0) != "$${" and not (t.group(1) and _NAME.fullmatch(t.group(1))) for t in tokens):
            issues.append(source.issue(path + (key,), f"malformed ${{...}} in {value!r}; expected ${{NAME}}"))
            continue
        missing = [n for n in names if n not in env]
        if missing:
            for name in missing:
                issues.append(source.issue(path + (key,), f"environment variable {name} is not set",
                                           f"export {name}=... or edit the file"))
            continue
        if path + (key,) == ("llm", "api_key"):
            continue  # kept as written: it becomes api_key_env (see _api_key)
        if names:
            effective.env_vars[tuple(map(str, path + (key,)))] = names
        if _VAR.fullmatch(value):
            node[key] = _scalar(env[names[0]])
        else:
            node[key] = _TOKEN.sub(lambda m: "${" if m.group(0) == "$${" else env[m.group(1)], value)
    return issues


def _scalar(text: str) -> Any:
    """A variable's value typed as YAML would type it, if it is a plain scalar."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (bool, int, float)) or value is None else text


def _api_key(source) -> list[Issue]:
    """``llm.api_key: ${VAR}`` means ``llm.api_key_env: VAR``; a literal key is refused."""
    llm = source.data.get("llm")
    if not isinstance(llm, dict) or "api_key" not in llm:
        return []
    match = _VAR.fullmatch(str(llm["api_key"]).strip())
    if not match:
        issue = source.issue(("llm", "api_key"), "a literal API key does not belong in a file",
                             "write api_key: ${VARIABLE} or api_key_env: VARIABLE and export the key")
    elif llm.get("api_key_env") not in (None, match.group(1)):
        issue = source.issue(("llm", "api_key"), "api_key and api_key_env name different variables",
                             "keep one of them")
    else:
        llm["api_key_env"] = match.group(1)
        issue = None
    del llm["api_key"]  # reported here, so the schema need not say it again
    return [issue] if issue else []


@dataclass
class _Layer:
    """A Source stand-in for values that have no file (environment, overrides)."""

    file: str
    data: Any

    def issue(self, path, message, hint=None, *, key=False) -> Issue:
        return Issue(self.file, None, None, tuple(path), message, hint)


def _schema_issues(source) -> list[Issue]:
    from kgkit.formats.json_schemas import schema_issues  # one wording for every schema error kgkit reports

    return schema_issues(source, "config")


def _check_layer(layer: dict[str, Any], label: str) -> list[Issue]:
    return _schema_issues(_Layer(label, layer))


def _error(issues: list[Issue]) -> ConfigError:
    issues = sorted(set(issues), key=Issue.sort_key)
    n = len(issues)
    lines = [i.format() for i in issues] + [f"{n} problem{'s' if n != 1 else ''} in the configuration"]
    return ConfigError("\n".join(lines), issues=issues)


def _plain(value: Any) -> Any:
    """CLI values as YAML would hold them (click gives Paths and tuples)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def _nest(flat: Mapping[tuple, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        for part in key[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {'.'.join(key)} conflicts with another override")
        node[key[-1]] = value
    return out


def _merge(into: dict[str, Any], layer: Mapping[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _path_keys(data: Mapping[str, Any]) -> list[Key]:
    keys: list[Key] = [k for k in PATH_KEYS if isinstance(data.get(k[0]), dict) and k[1] in data[k[0]]]
    prompts = data.get("prompts")  # not yet validated: the schema reports a non-mapping
    keys += [("prompts", stage) for stage in (prompts if isinstance(prompts, dict) else {})]
    if isinstance(data.get("domain"), str):
        keys.append(("domain",))
    return keys


# ----------------------------------------------------------------------------- building


def expand_path(value: str | os.PathLike, what: str) -> Path:
    """``value`` as a Path with ``~`` expanded; a ``~user`` that names no user is a
    ConfigError naming ``what`` (pathlib raises a bare RuntimeError)."""
    try:
        return Path(value).expanduser()
    except RuntimeError:
        raise ConfigError(f"{what}: cannot expand {os.fspath(value)!r}: no such user, or no home directory",
                          hint="write the path out in full") from None


def _build(data: dict[str, Any], origin: dict[Key, Path], file: Path | None, cwd: Path) -> Config:
    @overload
    def path(key: Key, value: str) -> Path: ...
    @overload
    def path(key: Key, value: None) -> None: ...

    def path(key: Key, value: str | None) -> Path | None:
        if value is None:
            return None
        p = expand_path(value, " -> ".join(key))
        return p if p.is_absolute() else (origin.get(key, cwd) / p).resolve()

    llm = dict(data.get("llm") or {})
    stages = {name: StageLLM(**spec) for name, spec in (llm.pop("stages", None) or {}).items()}
    cache = dict(data.get("cache") or {})
    skills = dict(data.get("skills") or {})
    chunking = data.get("chunking") or {}
    graph = dict(data.get("graph") or {})
    if graph.get("url") and not str(graph["url"]).startswith(("postgresql://", "postgres://")):
        graph["url"] = str(path(("graph", "url"), graph["url"]))
    config = Config(
        llm=LLMConfig(**llm, stages=stages),
        canon=CanonConfig(**(data.get("canon") or {})),
        review=ReviewConfig(**(data.get("review") or {})),
        limits=LimitsConfig(**(data.get("limits") or {})),
        cache=CacheConfig(**{**cache, "dir": path(("cache", "dir"), cache.get("dir"))}),
        skills=SkillsConfig(**{**skills, "library": path(("skills", "library"), skills.get("library"))}),
        graph=GraphConfig(**graph),
        query=_query(data.get("query") or {}),
        ask=_ask(data.get("ask") or {}),
        input=InputConfig(**(data.get("input") or {})),
        upgrades=UpgradesConfig(**(data.get("upgrades") or {})),
        engine=data.get("engine", "local"),
        ray=RayConfig(**(data.get("ray") or {})),
        prompts={stage: path(("prompts", stage), p) for stage, p in (data.get("prompts") or {}).items()},
        chunk_size=chunking.get("size"),
        chunk_overlap=chunking.get("overlap"),
        views=list(data["views"]) if data.get("views") is not None else None,
        source=file.resolve() if file else None,
    )
    if "domain" in data:
        config.domain = _domain(data["domain"], origin.get(("domain",)))
    if "dir" in (data.get("output") or {}):
        config.out_dir = path(("output", "dir"), data["output"]["dir"])
    size = config.chunk_size
    if size is not None and config.chunk_overlap is not None and config.chunk_overlap >= size:
        where = f"{file}: " if file else ""
        raise ConfigError(f"{where}chunking -> overlap: must be smaller than size ({config.chunk_overlap} >= {size})")
    return config


def _ask(data: dict[str, Any]) -> AskConfig:
    """The ask section, its route and reason roles built as their own dataclasses."""
    data = dict(data)
    route, reason = RouteRole(**(data.pop("route", None) or {})), AskRole(**(data.pop("reason", None) or {}))
    return AskConfig(**data, route=route, reason=reason)


def _query(data: dict[str, Any]) -> QueryConfig:
    """The query section, its search subsection built as its own dataclass."""
    data = dict(data)
    search = SearchConfig(**(data.pop("search", None) or {}))
    return QueryConfig(**data, search=search)


def _domain(value: str, base: Path | None) -> str:
    """A domain is a name on the search path, or a file path (relative to where it was written)."""
    from kgkit.formats.search_path import looks_like_path

    if base is None or not looks_like_path(value) or expand_path(value, "domain").is_absolute():
        return value
    return str((base / value).resolve())


# ----------------------------------------------------------------------------- showing

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
MASK = "********"


def show_config(effective: Effective) -> str:
    """The effective configuration as YAML, secrets masked, its sources in a header."""
    import yaml

    from kgkit.config.settings import to_data

    data = to_data(effective.config)
    for key, names in effective.env_vars.items():
        if any(_SECRET_NAME.search(n) for n in names):
            _set(data, key, MASK)
    base = data["llm"]["api_base"]
    if base and base != MASK:
        data["llm"]["api_base"] = mask_url(base, MASK)
    graph_url = data["graph"]["url"]
    if graph_url and graph_url != MASK:
        data["graph"]["url"] = mask_url(graph_url, MASK)  # postgresql://user:password@host/db
    if data["llm"]["api_key_env"] and looks_like_key(data["llm"]["api_key_env"]):
        data["llm"]["api_key_env"] = MASK  # a key pasted where its variable's name belongs
    header = "# effective kgkit configuration\n# from: " + ("; ".join(effective.sources) or "defaults only") + "\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _set(data: dict[str, Any], key: Key, value: Any) -> None:
    node: Any = data
    for part in key[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and key[-1] in node:
        node[key[-1]] = value
