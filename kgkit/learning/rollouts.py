"""The extraction side of the loop: scoring a library on a split, sampled rollouts, the skill passes."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from kgkit.backends.base import SKILL_INDUCTION, Backend, PassRequest, PassResult
from kgkit.backends.contexts import SkillContext
from kgkit.canon.names import entity_type_name
from kgkit.config.model import Config
from kgkit.documents.types import Chunk
from kgkit.eval.gold import GoldDoc
from kgkit.eval.metrics import Score, relation_sets
from kgkit.eval.run import EvalReport, evaluate, read_predictions
from kgkit.formats.model import Domain
from kgkit.learning.diagnosis import diagnose, shared_sentence
from kgkit.skills.library import KINDS, Library, save_library
from kgkit.skills.retrieve import HEAD_CHARS, rank_skills


from kgkit.learning.settings import LearnSettings
from kgkit.learning.report import EdgeLabel


SKILL_SCHEMA = {
    "type": "object",
    "required": ["skills"],
    "properties": {"skills": {"type": "array", "items": {
        "type": "object",
        "required": ["kind", "target", "pattern", "instruction"],
        "properties": {
            "kind": {"enum": list(KINDS)},
            "target": {"type": "string", "minLength": 1},
            "pattern": {"type": "object", "properties": {
                "phrases": {"type": "array", "items": {"type": "string"}},
                "regex": {"type": "array", "items": {"type": "string"}}}},
            "instruction": {"type": "string"},
            "example": {"type": "string"},
        },
    }}},
}


class SampledBackend:
    """Sends every pass as rollout ``sample`` at ``temperature``, so each sample has its own cache key."""

    def __init__(self, inner: Backend, sample: int, temperature: float):
        self.inner = inner
        self.sample = sample
        self.temperature = temperature
        self.name = inner.name

    def run(self, request: PassRequest) -> PassResult:
        return self.inner.run(dataclasses.replace(request, sample=self.sample, temperature=self.temperature))

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "sample": self.sample, "temperature": self.temperature}


def default_backend(config: Config, stage: str) -> Backend:
    from kgkit.backends.factory import create_backend

    return create_backend(config, stage)


class Extractor:
    """The extraction side of the loop: scoring a library on a split, rollouts, skill passes."""

    def __init__(self, tmp: Path, domain: Domain, docs: dict[str, GoldDoc], config: Config,
                 settings: LearnSettings, factory, gold_dir):
        self.tmp, self.domain, self.docs, self.config = tmp, domain, docs, config
        self.settings, self.factory, self.gold_dir = settings, factory, gold_dir
        self.runs = 0
        self._scores: dict[str, Score] = {}  # (document, skills it retrieves) -> its score
        self._heads: dict[str, tuple[str, str | None]] = {}

    def retrieved(self, lib: Library, doc_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The skills each document retrieves from ``lib``, as the engine will (best first)."""
        return {d: [s for _, s in rank_skills(lib, *self.heads(d), self.settings.top_k)] for d in doc_ids}

    def _config_for(self, lib: Library, doc_ids: list[str]) -> Config:
        """The config with ``lib`` as the skill library, written to a scratch folder.

        Only the skills these documents retrieve are written: retrieval over that subset
        picks exactly the same top k (every other skill ranked below them), and a library
        of hundreds of skills is not rewritten for every trial.
        """
        self.runs += 1
        root = self.tmp / f"library_{self.runs}"
        used = {s["id"] for skills in self.retrieved(lib, doc_ids).values() for s in skills}
        save_library(Library(lib.domain, {sid: lib.skills[sid] for sid in sorted(used) if sid in lib.skills},
                             gazetteer=[g for g in lib.gazetteer if g["id"] in used]), root)
        skills = dataclasses.replace(self.config.skills, library=root, enabled=True, top_k=self.settings.top_k)
        return dataclasses.replace(self.config, skills=skills)

    def heads(self, doc_id: str) -> tuple[str, str | None]:
        """What retrieval reads of a document (as the engine loads it): its first characters and title."""
        if doc_id not in self._heads:
            from kgkit.documents.load import load_document

            doc = load_document(self.docs[doc_id].text_path)
            self._heads[doc_id] = (doc.text[:HEAD_CHARS], doc.title)
        return self._heads[doc_id]

    def evaluate(self, lib: Library, doc_ids: list[str]) -> EvalReport:
        """Relation scores of ``lib`` on these documents, summed from per-document scores.

        Each document's score is memoised on the skills it would retrieve — all extraction
        reads of the library — so a candidate no document retrieves costs no extraction, and
        a document is extracted once per distinct set of skills it retrieves, whichever split
        or fold asks for it (the cross-validated gate reads every learning document's score).
        """
        retrieved = self.retrieved(lib, doc_ids)
        keys = {d: json.dumps([d, [{k: s[k] for k in ("id", "kind", "target", "pattern", "instruction", "example")}
                                   for s in retrieved[d]]], sort_keys=True) for d in doc_ids}
        todo = [d for d in doc_ids if keys[d] not in self._scores]
        if todo:
            cfg = self._config_for(lib, todo)
            run = evaluate(self.gold_dir, domain=self.domain, views=["binary"], config=cfg,
                           out_dir=self.tmp / f"run_{self.runs}", backend=self.factory,
                           docs=[self.docs[d] for d in todo])
            for d in todo:
                self._scores[keys[d]] = run.per_doc[d]
        report = EvalReport(str(self.gold_dir), self.domain.name, ["binary"])
        for d in doc_ids:
            report.add(d, self._scores[keys[d]])
        return report

    def applied(self, lib: Library, trial: Library, doc_ids: list[str]) -> dict[str, Any]:
        """What a change does when the backend applies it to these (train) documents: the
        relations it adds that gold holds (right) and does not (wrong), and their precision.

        Vetting's counts read a pattern against gold mentions; this reads it as extraction
        fires it, with the entities the rules actually find and the pairs they bind.
        """
        old, new = self.evaluate(lib, doc_ids), self.evaluate(trial, doc_ids)
        before, after = old.total.categories.get("relations"), new.total.categories.get("relations")
        right = (after.micro.tp if after else 0) - (before.micro.tp if before else 0)
        wrong = (after.micro.fp if after else 0) - (before.micro.fp if before else 0)
        # of what it adds, the share that is right (a change that only removes wrong relations: 1)
        precision = 1.0 if wrong <= 0 else right / (right + wrong) if right > 0 else 0.0
        return {"new_right": right, "new_wrong": wrong, "precision": round(precision, 4),
                "f1_gain": round(new.f1("relations") - old.f1("relations"), 4)}

    def rollout(self, lib: Library, doc_ids: list[str]) -> tuple[list[EdgeLabel], dict[str, list[dict[str, Any]]]]:
        """K sampled extractions per document; every gold relation labelled by how many found it."""
        from kgkit.engine.run import extract

        samples: dict[str, list[dict[str, Any]]] = {d: [] for d in doc_ids}
        if not doc_ids:
            return [], samples
        cfg = self._config_for(lib, doc_ids)
        for k in range(self.settings.rollouts):
            out = self.tmp / f"rollout_{self.runs}_{k}"

            def sampled(config: Config, stage: str, _k: int = k) -> Backend:
                return SampledBackend(self.factory(config, stage), _k, self.settings.temperature)

            extract([self.docs[d].text_path for d in doc_ids], domain=str(self.domain.source), views=["binary"],
                    config=cfg, out_dir=out, backend=sampled)
            for d in doc_ids:
                folder = out / self.docs[d].text_path.stem
                samples[d].append(read_predictions(folder) if (folder / "nodes.json").is_file() else {"entities": []})
        labels = []
        for d in doc_ids:
            doc = self.docs[d]
            found = [relation_sets(doc, s.get("relations", []), domain=self.domain)[1] for s in samples[d]]
            for rel in doc.relations:
                # the gold edge in the compared form (relation aliases, symmetric ends normalised)
                (triple,) = relation_sets({"entities": doc.entities, "relations": [rel]}, [], domain=self.domain)[0]
                n = sum(1 for f in found if triple in f)
                label = "stable" if n == len(found) else "miss" if n == 0 else "unstable"
                why = diagnose(doc, rel, samples[d], self.domain) if label == "miss" else ""
                labels.append(EdgeLabel(d, (rel["head"], rel["relation"], rel["tail"]), label, n, why))
        return labels, samples

    def candidates(self, backend: Backend, kind: str, label: EdgeLabel,
                   samples: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """Ask the skill pass for candidate skills for one edge; drop those the domain cannot use."""
        doc = self.docs[label.doc]
        rel = next(r for r in doc.relations if (r["head"], r["relation"], r["tail"]) == label.edge)
        head, tail = doc.entity(rel["head"]), doc.entity(rel["tail"])
        evidence = shared_sentence(doc, rel)
        start = doc.text.find(evidence) if evidence else -1
        text, begin = (evidence, start) if evidence and start >= 0 else (doc.text, 0)
        chunk = Chunk(id=f"skill:{doc.doc_id}:{begin}", doc_id=doc.doc_id, index=0, text=text, start=begin,
                      end=begin + len(text))
        entities = sorted({e["name"] for s in samples for e in s.get("entities", [])})
        # name -> the types it was extracted as: an end found with the wrong type is not found
        typed: dict[str, set[str]] = {}
        for s in samples:
            for e in s.get("entities", []):
                typed.setdefault(e["name"], set()).add(entity_type_name(self.domain, e.get("type") or "") or "?")
        # names some rollouts found and others did not (what path induction may steady)
        unsteady = sorted(n for n in entities if not all(any(e["name"] == n for e in s.get("entities", []))
                                                         for s in samples))
        context: SkillContext = {
            "domain": self.domain, "title": doc.title, "skills": [], "evidence": evidence or "",
            "typed_cues": self.settings.typed_cues,
            # in the domain's terms: gold "Peop" is general's "Person" by alias; None if undeclared
            "gold_edge": {"head": rel["head"], "relation": rel["relation"], "tail": rel["tail"],
                          "head_type": entity_type_name(self.domain, head["type"]) if head else None,
                          "tail_type": entity_type_name(self.domain, tail["type"]) if tail else None},
            "predictions": {"samples": len(samples), "found_in": label.found_in, "entities": entities,
                            "types": {n: sorted(t) for n, t in sorted(typed.items())}, "unsteady": unsteady},
        }
        prompt = "skill_induction.j2" if kind == SKILL_INDUCTION else "skill_hindsight.j2"
        result = backend.run(PassRequest(kind=kind, stage="skills", chunk=chunk, schema=SKILL_SCHEMA,
                                         context=context, prompt=prompt))
        if not result.ok or not result.data:
            return [], 1
        good, bad = [], 0
        for cand in result.data.get("skills", []):
            if not self._usable(cand):
                bad += 1
                continue
            pattern = cand.get("pattern") or {}
            good.append({"kind": cand["kind"], "target": cand["target"],
                         "pattern": {"phrases": list(pattern.get("phrases", [])), "regex": list(pattern.get("regex", []))},
                         "instruction": cand["instruction"], "example": cand.get("example", ""),
                         "evidence": evidence,  # only to keep the gold passage out of the skill's text
                         "provenance": [{"doc": label.doc, "edge": list(label.edge), "label": label.label,
                                         **({"diagnosis": label.diagnosis} if label.diagnosis else {})}]})
        return good, bad

    def _usable(self, cand: dict[str, Any]) -> bool:
        pattern = cand.get("pattern") or {}
        if not (pattern.get("phrases") or pattern.get("regex")):
            return False
        if cand.get("kind") == "relation":
            return self.domain.relation_type(cand.get("target", "")) is not None
        return self.domain.entity_type(cand.get("target", "")) is not None
