"""The query indexes' schema: tables derived from the store's own, created by the store's
migrations (kgkit/graph/migrations.py, the step after tenant roles), so only the store's
owner ever runs their DDL; a tenant role reads and writes their rows like any tenant table
(granted by ``kgkit graph grant``, row-level security on ``kgkit_tenant()``).

The store's own tables keep what a document contributed, as the run folder wrote it;
queries need the same facts as indexed columns. These tables hold them, derived from the
store's rows and never the other way round, so they can be dropped and rebuilt at any time
(:func:`kgkit.graph.index.rebuild`; a tenant without a ``qx_state`` row is rebuilt on open).

How they stay current: triggers on the store's tables note every row an update inserts,
changes or deletes in ``qx_dirty``; before the update commits, :func:`kgkit.graph.index.refresh`
re-derives the index rows of exactly those documents' views (items, evidence quotes) and
entities, so an update's upkeep follows its document's size, not the corpus's. The same holds for
replacing, removing, unmerging and review decisions: every one of them is rows changing
in the store's tables, which is all the triggers look at.

Tables (every row has a ``tenant``; PostgreSQL gets row-level security on each, from the
migration like every tenant table):

* ``qx_items``: one row per stored item (doc, view, item) with its kind, relation (an
  event's type), confidence and whether it is visible (not held, or accepted in review).
* ``qx_fillers``: the nodes an item connects (with the item's visibility, so a node's
  degree is an index count): ``head``/``tail`` of a binary or temporal
  edge, every role or argument filler of a hyperedge or event (``node`` is the
  document's node id; resolve it to its entity through ``groups.entity``).
* ``qx_times``: an item's temporal values as comparable intervals: ``lo``/``hi`` are ISO
  dates (a year 2021 is 2021-01-01 .. 2021-12-31), so interval conditions are string
  comparisons on an index.
* ``qx_spellings``: per key group, how many of its documents' rows write each spelling as
  the name and at all (kept by triggers on ``doc_nodes``), so an entity's display name and
  aliases are re-derived from a few rows, not from every document naming it.
* ``qx_degree``: per node (key group), how many visible fillers name it, kept incrementally.
* ``qx_entities``: one row per resolved entity: type, display name, aliases and its degree (how often visible statements name it: a statement naming it in
  two roles counts twice).
* ``qx_names``: canonical keys of every entity's name and aliases (exact and alias lookup).
* ``qx_text``: the searchable texts: entity names with aliases (``kind`` entity) and
  evidence quotes (``kind`` quote), with SQLite FTS5 (``qx_fts_<kind>``, rowid = ``qx_text.id``)
  or a PostgreSQL ``tsvector`` column with a GIN index.
* ``qx_state``: the tenants whose indexes have been built.
"""
from __future__ import annotations

#: A name's entities as one index range. Covering: on (tenant, key) alone, a statement that reads
#: only ``entity`` is covered by the primary key (tenant, entity, key) instead, and SQLite reads
#: the tenant's every name in it rather than seek the key (a match's named end: 6 ms at 10,000
#: documents).
NAMES_BY_KEY = "CREATE INDEX qx_names_key ON qx_names (tenant, key, entity, alias)"

#: The index tables (both backends; SQLite's REAL is PostgreSQL's DOUBLE PRECISION, database.py).
TABLES = [
    "CREATE TABLE qx_dirty (tenant TEXT NOT NULL, what TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, "
    "c TEXT NOT NULL, PRIMARY KEY (tenant, what, a, b, c))",
    "CREATE TABLE qx_state (tenant TEXT PRIMARY KEY, built INTEGER NOT NULL)",
    "CREATE TABLE qx_items (tenant TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, item TEXT NOT NULL, "
    "kind TEXT NOT NULL, relation TEXT NOT NULL, confidence REAL, visible INTEGER NOT NULL, review_key TEXT, "
    "PRIMARY KEY (tenant, doc, view, item))",
    "CREATE INDEX qx_items_relation ON qx_items (tenant, relation, visible)",
    "CREATE INDEX qx_items_review ON qx_items (tenant, doc, review_key)",
    "CREATE TABLE qx_fillers (tenant TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, item TEXT NOT NULL, "
    "role TEXT NOT NULL, node TEXT NOT NULL, visible INTEGER NOT NULL, PRIMARY KEY (tenant, doc, view, item, role, node))",
    # covering: a node's items (and roles) are one index range, however many a hub has
    "CREATE INDEX qx_fillers_node ON qx_fillers (tenant, node, visible, doc, view, item, role)",
    "CREATE TABLE qx_times (tenant TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, item TEXT NOT NULL, "
    "name TEXT NOT NULL, text TEXT, lo TEXT, hi TEXT, PRIMARY KEY (tenant, doc, view, item, name))",
    "CREATE INDEX qx_times_lo ON qx_times (tenant, name, lo)",
    # visible fillers per node, kept by adding each update's change (an entity's degree: its groups' sum)
    "CREATE TABLE qx_degree (tenant TEXT NOT NULL, node TEXT NOT NULL, degree INTEGER NOT NULL, "
    "PRIMARY KEY (tenant, node))",
    "CREATE TABLE qx_entities (tenant TEXT NOT NULL, entity TEXT NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL, "
    "aliases TEXT NOT NULL, degree INTEGER NOT NULL, PRIMARY KEY (tenant, entity))",
    # how many of a key group's document rows write each spelling: as its name, and at all
    "CREATE TABLE qx_spellings (tenant TEXT NOT NULL, node TEXT NOT NULL, spelling TEXT NOT NULL, "
    "names INTEGER NOT NULL, total INTEGER NOT NULL, PRIMARY KEY (tenant, node, spelling))",
    "CREATE INDEX qx_entities_type ON qx_entities (tenant, type)",
    "CREATE TABLE qx_names (tenant TEXT NOT NULL, entity TEXT NOT NULL, key TEXT NOT NULL, alias INTEGER NOT NULL, "
    "PRIMARY KEY (tenant, entity, key))",
    NAMES_BY_KEY,
    # on the store's own tables: a document by its d_ id (a node's documents and an item's
    # evidence are ranges of the store's own indexes, kgkit/graph/migrations.py)
    "CREATE INDEX qx_documents_id ON documents (tenant, id)",
]

SQLITE_TEXT = [
    "CREATE TABLE qx_text (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL, "
    "type TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, text TEXT NOT NULL)",
    "CREATE INDEX qx_text_ref ON qx_text (tenant, kind, doc, view, ref)",
    # one FTS5 table per kind of text (rowid = qx_text.id): a search of names never ranks quotes,
    # and no token in the query stands for a tenant or kind (BM25 counts every row of each token
    # it ranks by: a scope token held by every row costs a scan of the whole index per query)
    *(f"CREATE VIRTUAL TABLE qx_fts_{kind} USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')"
      for kind in ("entity", "quote")),
]

POSTGRES_TEXT = [
    "CREATE TABLE qx_text (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant TEXT NOT NULL, "
    "kind TEXT NOT NULL, ref TEXT NOT NULL, type TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, "
    "text TEXT NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)",
    "CREATE INDEX qx_text_ref ON qx_text (tenant, kind, doc, view, ref)",
    "CREATE INDEX qx_text_tsv ON qx_text USING GIN (tsv)",
]

# What each trigger notes: (table, operation, row, WHEN condition or None, what, [a, b, c] columns).
MARKS = [
    # items and quotes change a document's view at a time (its add or removal; a review decision's
    # own view): one mark per view, re-derived whole, instead of a mark per row
    ("items", "INSERT", "NEW", None, "view", ["doc", "view"]),
    ("items", "DELETE", "OLD", None, "view", ["doc", "view"]),
    ("evidence", "INSERT", "NEW", "NEW.quote IS NOT NULL", "view", ["doc", "view"]),
    ("evidence", "DELETE", "OLD", "OLD.quote IS NOT NULL", "view", ["doc", "view"]),
    ("groups", "INSERT", "NEW", None, "entity", ["entity"]),
    ("groups", "DELETE", "OLD", None, "entity", ["entity"]),
    ("groups", "UPDATE", "OLD", "OLD.entity <> NEW.entity", "entity", ["entity"]),
    ("groups", "UPDATE", "NEW", "OLD.entity <> NEW.entity", "entity", ["entity"]),
    ("doc_nodes", "INSERT", "NEW", None, "node", ["node"]),
    ("doc_nodes", "DELETE", "OLD", None, "node", ["node"]),
    ("decisions", "INSERT", "NEW", None, "decision", ["doc", "key"]),
    ("decisions", "UPDATE", "NEW", None, "decision", ["doc", "key"]),
]


def _values(row: str, what: str, cols: list[str]) -> str:
    cells = [f"{row}.{c}" for c in cols] + ["''"] * (3 - len(cols))
    return f"{row}.tenant, '{what}', {', '.join(cells)}"


SPELL_UPSERT = ("INSERT INTO qx_spellings (tenant, node, spelling, names, total) {rows} "
                "ON CONFLICT (tenant, node, spelling) DO UPDATE SET names = qx_spellings.names + excluded.names, "
                "total = qx_spellings.total + 1")
SPELL_DROP = [
    "UPDATE qx_spellings SET names = names - 1 WHERE tenant = OLD.tenant AND node = OLD.node AND spelling = OLD.name",
    "UPDATE qx_spellings SET total = total - 1 WHERE tenant = OLD.tenant AND node = OLD.node "
    "AND (spelling = OLD.name OR spelling IN (SELECT value FROM {each}(OLD.aliases{cast})))",
    "DELETE FROM qx_spellings WHERE tenant = OLD.tenant AND node = OLD.node AND total <= 0",
]


def _spell_add(each: str, cast: str, value: str) -> list[str]:
    return [SPELL_UPSERT.format(rows="VALUES (NEW.tenant, NEW.node, NEW.name, 1, 1)"),
            SPELL_UPSERT.format(rows=f"SELECT NEW.tenant, NEW.node, {value}, 0, 1 FROM (SELECT DISTINCT {value} "
                                     f"FROM {each}(NEW.aliases{cast})) AS a WHERE {value} <> NEW.name")]


#: Tables SQLite keeps WITHOUT ROWID: the primary key is the table, so a row is one B-tree
#: insert instead of two (table and key index). Only tables without an index or whose index
#: holds every column: given a choice between an index that lacks a column and the primary
#: key, SQLite (without statistics) ranges over the whole tenant's key (qx_names by key: 6 ms).
ROWLESS = ("qx_dirty", "qx_fillers", "qx_degree", "qx_spellings")


def _table(statement: str) -> str:
    return statement.split("(")[0].split()[-1]


def sqlite_ddl() -> list[str]:
    out = [s + " WITHOUT ROWID" if s.startswith("CREATE TABLE") and _table(s) in ROWLESS else s for s in TABLES]
    out += SQLITE_TEXT
    add = "; ".join(_spell_add("json_each", "", "value"))
    drop = "; ".join(s.format(each="json_each", cast="") for s in SPELL_DROP)
    out += [f"CREATE TRIGGER qx_spell_add AFTER INSERT ON doc_nodes FOR EACH ROW BEGIN {add}; END",
            f"CREATE TRIGGER qx_spell_drop AFTER DELETE ON doc_nodes FOR EACH ROW BEGIN {drop}; END"]
    for n, (table, op, row, when, what, cols) in enumerate(MARKS):
        cond = f" WHEN {when}" if when else ""
        out.append(f"CREATE TRIGGER qx_mark_{n} AFTER {op} ON {table} FOR EACH ROW{cond} BEGIN "
                   f"INSERT OR IGNORE INTO qx_dirty (tenant, what, a, b, c) VALUES ({_values(row, what, cols)}); END")
    return out


def postgres_ddl() -> list[str]:
    out = TABLES + POSTGRES_TEXT
    add = "; ".join(_spell_add("jsonb_array_elements_text", "::jsonb", "value"))
    drop = "; ".join(s.format(each="jsonb_array_elements_text", cast="::jsonb") for s in SPELL_DROP)
    for name, op, body in (("qx_spell_add", "INSERT", add), ("qx_spell_drop", "DELETE", drop)):
        out += [f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body}; RETURN NULL; END $$",
                f"CREATE TRIGGER {name} AFTER {op} ON doc_nodes FOR EACH ROW EXECUTE FUNCTION {name}()"]
    for n, (table, op, row, when, what, cols) in enumerate(MARKS):
        out.append(f"CREATE FUNCTION qx_mark_{n}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                   f"INSERT INTO qx_dirty (tenant, what, a, b, c) VALUES ({_values(row, what, cols)}) "
                   f"ON CONFLICT DO NOTHING; RETURN NULL; END $$")
        cond = f" WHEN ({when})" if when else ""
        out.append(f"CREATE TRIGGER qx_mark_{n} AFTER {op} ON {table} FOR EACH ROW{cond} EXECUTE FUNCTION qx_mark_{n}()")
    return out


#: What an earlier kgkit created on open, outside the store's migrations (``qx_version`` and
#: the same tables, with row-level security on ``app.tenant``): dropped before the step creates
#: them, so such a store's indexes are rebuilt, per tenant, on its next open.
EARLIER = ["qx_version", "qx_fts", "qx_fts_entity", "qx_fts_quote", "qx_text",
           *(_table(s) for s in TABLES if s.startswith("CREATE TABLE"))]


#: Indexes of the step on the store's own tables (dropped with the rest, so the step can run again).
STORE_INDEXES = [s.split()[2] for s in TABLES if s.startswith("CREATE INDEX") and not s.split()[4].startswith("qx_")]
TRIGGERS = ["qx_spell_add", "qx_spell_drop", *(f"qx_mark_{n}" for n in range(len(MARKS)))]


def drop_earlier(kind: str) -> list[str]:
    if kind == "sqlite":
        return ([f"DROP TABLE IF EXISTS {t}" for t in EARLIER] + [f"DROP TRIGGER IF EXISTS {t}" for t in TRIGGERS]
                + [f"DROP INDEX IF EXISTS {i}" for i in STORE_INDEXES])
    return ([f"DROP TABLE IF EXISTS {t} CASCADE" for t in EARLIER] + [f"DROP INDEX IF EXISTS {i}" for i in STORE_INDEXES]
            + [f"DROP FUNCTION IF EXISTS {f}() CASCADE" for f in TRIGGERS])  # and the triggers calling them
