"""Citation intent and strength, offline: cue phrases in the citing sentence.

kgkit's intent labels are the design's four (``support``, ``contrast``, ``extend``,
``background``); the classifier decides among seven finer functions so that the two
published label sets map onto them without loss of their distinctions:

==============  ==========  ==========  ==================
function        intent      SciCite     ACL-ARC
==============  ==========  ==========  ==================
background      background  background  Background
motivation      background  background  Motivation
future          background  background  Future
uses            extend      method      Uses
extends         extend      method      Extends
compares        contrast    result      CompareOrContrast
supports        support     result      CompareOrContrast
==============  ==========  ==========  ==================

Strength has five levels (5 foundational, 4 strong, 3 moderate, 2 contextual,
1 peripheral). A mention's level follows its function; a cited work's strength is the
maximum over its mentions (max-pooled), raised to foundational when a work that is
used or extended is cited three or more times, and 1 when it is only in the
bibliography.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FUNCTIONS = ("background", "motivation", "future", "uses", "extends", "compares", "supports")
INTENT = {"background": "background", "motivation": "background", "future": "background", "uses": "extend",
          "extends": "extend", "compares": "contrast", "supports": "support"}
SCICITE = {"background": "background", "motivation": "background", "future": "background", "uses": "method",
           "extends": "method", "compares": "result", "supports": "result"}
ACLARC = {"background": "Background", "motivation": "Motivation", "future": "Future", "uses": "Uses",
          "extends": "Extends", "compares": "CompareOrContrast", "supports": "CompareOrContrast"}
STRENGTHS = {5: "foundational", 4: "strong", 3: "moderate", 2: "contextual", 1: "peripheral"}
_MENTION_LEVEL = {"extends": 4, "uses": 4, "compares": 3, "supports": 3, "motivation": 2, "background": 2,
                  "future": 2}

# Cue phrases per function, tried in this order; the first function with a cue wins.
_CUES: tuple[tuple[str, re.Pattern], ...] = tuple((name, re.compile(pattern, re.I)) for name, pattern in (
    ("future", r"\bfuture (work|research|studies|direction)|\bin the future\b|\bwe (plan|intend|hope) to\b|"
               r"\b(could|can|might) be (extended|explored|investigated|applied)\b|\bleave .* for future\b|"
               r"\bwe (will|would like to|shall)\b|\bwill (become|be (incorporated|explored|used))\b|\bshould also\b|"
               r"\bis also possible\b"),
    ("motivation", r"\b(motivated|inspired) by\b"),
    ("extends", r"\bextend(s|ed|ing)?\b|\bextension (to|of)\b|\bour (previous|prior|earlier) (work|strategy|"
                r"experiments|approach|system)|\bbuild(s|ing)? (up)?on\b|\bbuilt (up)?on\b|\binspired by\b|"
                r"\bmodif(y|ied|ication)\b|\badapt(ed|ing)? (from|the)\b|\bimprov(e|es|ing) (on|upon)\b|"
                r"\bgenerali[sz](e|es|ed|ing)\b|\bbased (largely )?on (the|their|this) (work|approach|model)"),
    ("supports", r"\b(consistent|in line|in agreement|in accordance|agree[sd]?|concordant) with\b|\bconfirm(s|ed|ing)?\b|"
                 r"\bsimilar (to )?(the )?(results?|findings?|observations?)\b|\bas (also )?(reported|found|observed|shown|noted) "
                 r"(by|in|previously)\b|\bsupport(s|ed|ing)? (the|our|this|these|previous)|\bcorroborat|\bsimilarly\b"),
    ("compares", r"\bunlike\b|\bin contrast\b|\bcontrary to\b|\bwhereas\b|\bcompar(ed|ison|able|ing)\b|"
                 r"\bdiffer(s|ed|ent|ence)?\b|\boutperform|\b(better|worse|higher|lower|greater|smaller|faster|slower) than\b|"
                 r"\b(while|but) (they|their|he|she|it)\b|\bas opposed to\b|\brather than\b|\bsimilar to\b|"
                 r"\binconsistent\b|\bdisagree|\bnot (found|observed|confirmed)\b|\bas in\b"),
    ("uses", r"\b(we|was|were|is|are|be|been) (used?|using|employ(ed)?|adopt(ed)?|appl(y|ied)|utili[sz]ed?)\b|"
             r"\busing\b|\bused\b|\bwe follow\b|\bfollow(ing|ed)\b|\baccording to\b|\bas (described|defined|proposed|suggested) "
             r"(in|by)\b|\b(toolkit|software|package|implementation|parser|tagger|corpus|dataset|data set|algorithm|"
             r"method|procedure|protocol|scale|questionnaire|instrument|technique|tool)\b|\bobtained from\b|\bprovided by\b|"
             r"\b(measured|calculated|estimated|assessed|determined|performed|computed|analy[sz]ed) (with|using|by|as)\b"),
    ("motivation", r"\bmotivat|\bhas (not|never) been\b|\b(little|no|few|limited) (attention|work|research|studies)\b|"
                   r"\b(lack|absence) of\b|\bremains? (unclear|open|unknown|a challenge)\b|\bgap\b|\bto address\b|"
                   r"\bdrawback|\blimitation|\bfail(s|ed)? to\b|\bproblem\b|\bchalleng"),
))


def citation_function(sentence: str) -> str:
    """The function of the citation(s) in ``sentence``: the first function whose cue the
    sentence holds, else ``background``."""
    for name, pattern in _CUES:
        if pattern.search(sentence):
            return name
    return "background"


def mention_level(function: str) -> int:
    return _MENTION_LEVEL[function]


@dataclass(frozen=True)
class Strength:
    level: int
    label: str


def pooled_strength(functions: list[str]) -> Strength:
    """A cited work's strength from its mentions' functions (empty: bibliography only)."""
    if not functions:
        return Strength(1, STRENGTHS[1])
    level = max(mention_level(f) for f in functions)
    if level == 4 and len(functions) >= 3:
        level = 5
    return Strength(level, STRENGTHS[level])
