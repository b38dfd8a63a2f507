"""A contracting party's name, as the offline backend keeps it (names written for this test)."""
from __future__ import annotations

import pytest

from kgkit.backends.offline.entities import find_entities
from kgkit.backends.offline.party_names import clean_party_name, names_a_person
from kgkit.catalog.load import load_domain


def _kept(name):
    cut = clean_party_name(name)
    return None if cut is None else name[cut[0]:cut[1]]


@pytest.mark.parametrize("written, kept", [
    ("Quebec H2X1Y4 and Larkspur Analytics Corporation", "Larkspur Analytics Corporation"),  # an address tail
    ("At Larkspur Analytics Corporation", "Larkspur Analytics Corporation"),
    ("Reseller and Birchway Foods Pty Limited", "Birchway Foods Pty Limited"),  # a role word and a name
    ("Larkspur Inc. and its Affiliates", "Larkspur Inc."),
    ("Birchway Foods BIRCHWAY FOODS, INC.", "BIRCHWAY FOODS, INC."),  # a name written twice
    ("ANY BREACH OF ANY OBLIGATION OF ANY LIMITED", None),  # a clause in capitals
    ("Licensor", None), ("Business Unit", None),
    ("Termination PROVIDER", None), ("Warranties CUSTOMER", None),  # a heading run into a role in capitals
    ("Harbor Lane COMPANY", None), ("HARBOR LANE COMPANY", "HARBOR LANE COMPANY"),
    ("Harlow & Pike, LLP", "Harlow & Pike, LLP"), ("Bank of Tasmania, N.A.", "Bank of Tasmania, N.A."),
])
def test_a_party_is_an_organisation_or_person_name(written, kept):
    assert _kept(written) == kept


def test_cued_people_are_names_not_form_words():
    assert names_a_person("Marta J. Quell")
    assert not any(names_a_person(w) for w in ("Date", "Signature", "Street East", "Such", "Provider"))


def test_contract_parties_come_out_clean_and_whole():
    text = ('This Hosting Agreement is made between mBright Systems Inc., located at 12 Quay Road, Halifax, Canada '
            'B3H1A1 and Larkspur Analytics Corporation ("Provider").\n')
    parties = {e.name for e in find_entities(text, load_domain("legal_contracts").entity_types) if e.type == "Party"}
    assert "Larkspur Analytics Corporation" in parties
    assert not any(" and " in p or p[:1].isdigit() for p in parties), parties
    assert "mBright Systems Inc." in parties, parties  # a lower-case start is the name's own
