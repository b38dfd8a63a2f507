"""A GGUF model in this process, through llama-cpp-python: ``llm.model: local/PATH.gguf``.

Contracts and clinical notes must often stay on the machine they are on; a small model in
the process needs no server, no port and no key. This module is the transport
:class:`kgkit.backends.llm.LLMBackend` uses for such a model, as it uses the direct client
or litellm for the others, so the cache, the re-ask, run folders, the manifest and exit
codes are the same for every model. What it adds:

* **The file checked before it is loaded** (:mod:`kgkit.backends.gguf`): missing, not
  GGUF, truncated, or a sha256 other than ``llm.model_sha256`` exit 2 naming the file; a
  missing ``llama_cpp`` names the extra to install (``pip install 'kgkit[local]'``).
* **Decoding constrained by the pass's JSON Schema**: llama.cpp turns the schema into a
  grammar, so every token the model writes keeps the answer on the schema's shape
  (``json_object_schema`` in the manifest); a schema the converter cannot take falls back to
  llama.cpp's JSON grammar (``json_object``).
* **A runaway cut while it streams** (:mod:`kgkit.backends.runaway`): generation stops
  once the answer has stopped producing new items, instead of running on to ``max_tokens``.
* **The prompt measured against the context window before any call**
  (:meth:`LocalModel.check_fits`), with the chunk size that would fit.

One model is loaded once per process and file (the core, upgrade and skill stages share
it); llama.cpp's context is not thread-safe, so requests take turns on a lock.
``llm.timeout`` and ``llm.retries`` do not apply here: there is no network to wait on or
retry, and the answer's length is bounded by ``max_tokens`` and the runaway cut instead.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgkit.backends.budget import grammar_safe
from kgkit.backends.gguf import ModelFile, inspect, sha256_of
from kgkit.backends.runaway import RunawayWatch
from kgkit.errors import ProviderConfigError, ProviderError

PREFIX = "local/"
EXTRA = "pip install 'kgkit[local]'"
DEFAULT_CONTEXT = 8192  # tokens of context when llm.context_window is not set (at most the model's own)
TOP_P, TOP_K, MIN_P, REPEAT_PENALTY = 1.0, 40, 0.05, 1.0  # llama.cpp sampling beside llm.temperature
CHAT_OVERHEAD = 8  # tokens the chat template adds around each message (role markers, newlines)

_models: dict[tuple[str, int], Any] = {}  # (file, n_ctx) -> llama_cpp.Llama, loaded once per process
_turns: dict[tuple[str, int], threading.Lock] = {}  # (file, n_ctx) -> whose turn it is on that model's context
_models_lock = threading.Lock()
_digests: dict[tuple[str, int, int], str] = {}  # (file, size, mtime) -> sha256


def serves(model: str) -> bool:
    return model.startswith(PREFIX)


def model_path(model: str, cwd: Path | None = None) -> Path:
    """The file ``local/PATH`` names: PATH absolute, or relative to the working folder."""
    path = Path(os.path.expanduser(model[len(PREFIX):]))
    return path if path.is_absolute() else (cwd or Path.cwd()) / path


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None  # "stop", "length" or "runaway" (cut by the watch)
    tokens_in: int
    tokens_out: int
    runaway: str | None = None  # why it was cut


class LocalModel:
    """One GGUF file, checked at construction and loaded at the first request."""

    def __init__(self, model: str, *, sha256: str | None = None, context_window: int | None = None,
                 seed: int = 0):
        path = model_path(model)
        self.path = path.resolve() if path.exists() else path
        self.file: ModelFile = inspect(self.path)
        self.sha256 = _digest(self.path)
        if sha256 and sha256.lower() != self.sha256:
            raise ProviderConfigError(
                f"{self.path}: sha256 {self.sha256} differs from llm.model_sha256 {sha256.lower()}",
                hint="the file is not the model the configuration names: assemble or copy it again, "
                     "or correct llm.model_sha256")
        try:
            import llama_cpp  # noqa: F401 - here, so that a missing extra is named before any pass
        except ImportError:
            raise ProviderConfigError(f"{model}: running a local model needs llama-cpp-python, which is not installed",
                                      hint=f"{EXTRA} (see docs/local-models.md for the build flags)") from None
        trained = self.file.context_length
        self.context_window = context_window or min(trained or DEFAULT_CONTEXT, DEFAULT_CONTEXT)
        if trained and self.context_window > trained:
            raise ProviderConfigError(
                f"{self.path}: llm.context_window is {self.context_window} tokens; the model was trained "
                f"with {trained}", hint=f"set llm.context_window to {trained} or less")
        self.seed = seed
        self.threads = _cores()
        key = (str(self.path), self.context_window)
        with _models_lock:  # one lock per loaded model: every stage's and document's backend shares it
            self._lock = _turns.setdefault(key, threading.Lock())

    def describe(self) -> dict[str, Any]:
        """The file and the sampling settings, for the manifest."""
        return {"file": str(self.path), "sha256": self.sha256, "model_name": self.file.name,
                "context_window": self.context_window,
                "sampling": {"top_p": TOP_P, "top_k": TOP_K, "min_p": MIN_P, "repeat_penalty": REPEAT_PENALTY,
                             "seed": self.seed}}

    # -- llama.cpp ------------------------------------------------------------------
    def llama(self) -> Any:
        key = (str(self.path), self.context_window)
        with _models_lock:
            if key not in _models:
                import llama_cpp

                try:
                    _models[key] = llama_cpp.Llama(model_path=str(self.path), n_ctx=self.context_window,
                                                   n_threads=self.threads, seed=self.seed, verbose=False)
                except (ValueError, RuntimeError) as exc:
                    raise ProviderConfigError(f"{self.path}: llama.cpp cannot load the model: {exc}",
                                              hint="check that the file is a complete GGUF model that this "
                                                   "llama-cpp-python supports") from None
            return _models[key]

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        """Tokens of a chat prompt: its messages' tokens and the template's markers around each."""
        llama = self.llama()
        return sum(len(llama.tokenize(m["content"].encode("utf-8"), add_bos=False, special=False)) + CHAT_OVERHEAD
                   for m in messages)

    def check_fits(self, messages: list[dict[str, str]], max_tokens: int, chunk_chars: int, chunk_text: str) -> None:
        """Refuse a prompt that, with its answer's ``max_tokens``, exceeds the context window,
        before anything is generated; the message says which chunk size would fit.

        Raises:
            ProviderConfigError: exit 2.
        """
        prompt = self.count_tokens(messages)
        if prompt + max_tokens <= self.context_window:
            return
        llama = self.llama()
        chunk_tokens = max(1, len(llama.tokenize(chunk_text.encode("utf-8"), add_bos=False, special=False)))
        fixed = prompt - chunk_tokens  # instructions, types, examples: the same for every chunk
        room = self.context_window - max_tokens - fixed
        fits = int(room * len(chunk_text) / chunk_tokens * 0.9) if room > 0 else 0
        advice = (f"set chunking.size to {fits} characters or less (now {chunk_chars})" if fits > 0
                  else f"the prompt without the document ({fixed} tokens) and the answer ({max_tokens}) already "
                       "fill it: lower llm.max_tokens")
        raise ProviderConfigError(
            f"{self.path}: a prompt of {prompt} tokens and an answer of up to {max_tokens} exceed the model's "
            f"context window of {self.context_window} tokens",
            hint=f"{advice}, or raise llm.context_window (the model takes up to "
                 f"{self.file.context_length or '?'})")

    def complete(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int,
                 schema: dict[str, Any] | None, seed: int) -> tuple[Completion, str]:
        """Generate one answer -> (completion, output format: json_object_schema | json_object | plain)."""
        import llama_cpp

        llama = self.llama()
        grammar, output_format = self._grammar(llama_cpp, schema)
        watch = RunawayWatch()
        finish: str | None = None
        tokens_out = 0
        with self._lock:
            tokens_in = self.count_tokens(messages)
            try:
                stream = llama.create_chat_completion(
                    messages=messages, temperature=temperature, top_p=TOP_P, top_k=TOP_K, min_p=MIN_P,
                    repeat_penalty=REPEAT_PENALTY, max_tokens=max_tokens, seed=seed, grammar=grammar, stream=True)
                for chunk in stream:
                    choice = chunk["choices"][0]
                    delta = choice.get("delta", {}).get("content") or ""
                    if delta:
                        tokens_out += 1
                    finish = choice.get("finish_reason") or finish
                    if delta and watch.feed(delta):
                        finish = "runaway"
                        stream.close()  # stops generation here
                        break
            except ValueError as exc:  # llama-cpp-python: "Requested tokens (...) exceed context window of ..."
                error = ProviderError(f"local/{self.path.name}: {exc}",
                                      hint="lower chunking.size or raise llm.context_window")
                error.request_specific = True
                raise error from None
            except RuntimeError as exc:
                raise ProviderError(f"local/{self.path.name}: llama.cpp failed: {exc}") from None
        return Completion(text=watch.text, finish_reason=finish, tokens_in=tokens_in, tokens_out=tokens_out,
                          runaway=watch.reason), output_format

    def _grammar(self, llama_cpp: Any, schema: dict[str, Any] | None) -> tuple[Any, str]:
        """The grammar for ``schema`` (llama.cpp's converter), else its JSON grammar."""
        import json

        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        if schema is None:
            return None, "plain"
        try:  # never the raw schema: keywords such as maxLength grow the grammar until llama.cpp crashes
            return LlamaGrammar.from_json_schema(json.dumps(grammar_safe(schema)), verbose=False), \
                "json_object_schema"
        except Exception:  # noqa: BLE001 - the converter raises assorted types for keywords it lacks
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False), "json_object"


def _cores() -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` or a container sets it):
    llama.cpp's threads wait for each other at every layer, so one thread more than there are
    cores to run it makes each token wait for the scheduler."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _digest(path: Path) -> str:
    """The file's sha256, computed once per process for an unchanged file (500 MB: about a second)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        _digests[key] = sha256_of(path)
    return _digests[key]
