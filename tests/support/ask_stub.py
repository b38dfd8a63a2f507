"""A scripted model for ``kgkit ask`` behind the stub provider: it reads the evidence list in
the reason prompt (inside its untrusted fence) and answers from it, as a model that follows
the rules would, or invents a relation (``lie``) as the failure the verifier exists to catch.

* route prompts get ``{"kind": "lookup", "mentions": []}`` (the rules' mentions stand);
* ``honest``: every binary graph item becomes a claim citing it; the answer is the items'
  documents for a "which contracts/documents" question, else their tails;
* ``lie``: the same, plus an invented claim ("CONTROLS") citing the first item, every time;
* ``lie_once``: the invented claim in the first draft only; the send-back gets an honest one.
"""
from __future__ import annotations

import json
import re

from support.stub_provider import Recorded, Reply

INVENTED = "CONTROLS"


def evidence_of(prompt: str) -> list[dict]:
    return [json.loads(line) for line in prompt.splitlines() if line.startswith('{"id": ')]


def question_of(prompt: str) -> str:
    m = re.search(r"Question:\s*\nBEGIN UNTRUSTED DOCUMENT \S+\n(.*?)\nEND UNTRUSTED DOCUMENT", prompt, re.S)
    return m.group(1) if m else ""


def honest(prompt: str) -> dict:
    items = [e for e in evidence_of(prompt) if e["source"] == "graph" and set(e["ends"]) == {"head", "tail"}]
    claims = [{"head": e["ends"]["head"][0], "relation": e["relation"], "tail": e["ends"]["tail"][0],
               "evidence": [e["id"]]} for e in items if e["ends"]["head"] and e["ends"]["tail"]]
    documents = re.search(r"\bwhich (contracts|documents|agreements)\b", question_of(prompt), re.I)
    answer: dict[str, list[str]] = {}
    for e in items:
        for value in (e["documents"] if documents else e["ends"]["tail"][:1]):
            answer.setdefault(value, []).append(e["id"])
    return {"text": f"{len(answer)} found", "answer": [{"value": v, "evidence": ids} for v, ids in answer.items()],
            "claims": claims}


def responder(mode: str = "honest"):
    """A StubProvider responder for ``mode`` (honest | lie | lie_once)."""

    def reply(request: Recorded) -> Reply:
        system = request.messages[0]["content"]
        prompt = request.messages[-1]["content"]
        if "You read one question" in system:
            return Reply(content={"kind": "lookup", "mentions": []})
        data = honest(prompt)
        sent_back = "failed verification" in prompt
        if data["claims"] and (mode == "lie" or (mode == "lie_once" and not sent_back)):
            first = data["claims"][0]
            data["claims"].append({"head": first["head"], "relation": INVENTED, "tail": first["tail"],
                                   "evidence": list(first["evidence"])})
        return Reply(content=data)

    return reply
