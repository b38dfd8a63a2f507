"""The graph store's schema, as forward migrations: version N is ``MIGRATIONS[N-1]``.

A store records its version in ``schema_version``; opening it runs the steps it lacks, in
one transaction. Never edit a released step: append a new one. The SQL is plain enough for
SQLite and PostgreSQL both (``REAL`` becomes ``DOUBLE PRECISION`` in PostgreSQL, which also
gets row-level security on every table that has a ``tenant`` column: see database.py).

Every row belongs to one tenant, and documents are named by ``doc``, the run folder's
name, so an edited document (new text, new ``d_`` id) replaces its earlier contribution.
Entities are resolved per *key group*: all local nodes with one (type, canonical key)
share the run folders' node id ``node``; ``groups.entity`` names the group that stands
for the real-world entity (the canonical id).
"""
from __future__ import annotations

from kgkit.graph import index_schema, item_ids

#: A step is its statements, or per backend (``sqlite`` / ``postgresql``) where they differ.
MIGRATIONS: list[list[str] | dict[str, list[str]]] = [
    [
        "CREATE TABLE graph_version (tenant TEXT PRIMARY KEY, version INTEGER NOT NULL)",
        "CREATE TABLE documents (tenant TEXT NOT NULL, doc TEXT NOT NULL, id TEXT NOT NULL, source TEXT, "
        "sha256 TEXT NOT NULL, contribution TEXT NOT NULL, added TEXT NOT NULL, PRIMARY KEY (tenant, doc))",
        # one row per node of a document's nodes.json
        "CREATE TABLE doc_nodes (tenant TEXT NOT NULL, doc TEXT NOT NULL, node TEXT NOT NULL, type TEXT NOT NULL, "
        "key TEXT NOT NULL, name TEXT NOT NULL, aliases TEXT NOT NULL, PRIMARY KEY (tenant, doc, node))",
        "CREATE INDEX doc_nodes_node ON doc_nodes (tenant, node)",
        # alias keys a document's node claims (declared aliases, defined terms)
        "CREATE TABLE claims (tenant TEXT NOT NULL, doc TEXT NOT NULL, node TEXT NOT NULL, type TEXT NOT NULL, "
        "alias_key TEXT NOT NULL, PRIMARY KEY (tenant, doc, node, alias_key))",
        "CREATE INDEX claims_alias ON claims (tenant, type, alias_key)",
        "CREATE INDEX claims_node ON claims (tenant, node)",
        # key groups, reference-counted by the documents that name them
        "CREATE TABLE groups (tenant TEXT NOT NULL, node TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, "
        "refs INTEGER NOT NULL, entity TEXT NOT NULL, reason TEXT, score REAL, PRIMARY KEY (tenant, node))",
        "CREATE INDEX groups_key ON groups (tenant, type, key)",
        "CREATE INDEX groups_entity ON groups (tenant, entity)",
        # canon's blocking keys of each group (type-prefixed), with the group's key
        "CREATE TABLE blocks (tenant TEXT NOT NULL, node TEXT NOT NULL, block TEXT NOT NULL, key TEXT NOT NULL, "
        "PRIMARY KEY (tenant, block, node))",
        "CREATE INDEX blocks_node ON blocks (tenant, node)",
        # edges, hyperedges, events, temporal edges of one document and view; held: why it waits for review
        "CREATE TABLE items (tenant TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, item TEXT NOT NULL, "
        "kind TEXT NOT NULL, body TEXT NOT NULL, confidence REAL, held TEXT, review_key TEXT, "
        "PRIMARY KEY (tenant, doc, view, item))",
        "CREATE TABLE evidence (tenant TEXT NOT NULL, doc TEXT NOT NULL, item TEXT NOT NULL, view TEXT NOT NULL, "
        "chunk TEXT, page INTEGER, span_start INTEGER, span_end INTEGER, quote TEXT)",
        "CREATE INDEX evidence_doc ON evidence (tenant, doc)",
        # review.jsonl entries that are not items of a view (rejects, unparsable answers)
        "CREATE TABLE review (tenant TEXT NOT NULL, doc TEXT NOT NULL, key TEXT NOT NULL, stage TEXT, "
        "chunk TEXT, item TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (tenant, doc, key))",
        # decisions outlive the documents' rows: keyed by document name and review key
        "CREATE TABLE decisions (tenant TEXT NOT NULL, doc TEXT NOT NULL, key TEXT NOT NULL, "
        "decision TEXT NOT NULL, who TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (tenant, doc, key))",
        # unmerge decisions: these two key groups are never one entity
        "CREATE TABLE apart (tenant TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (tenant, a, b))",
        "CREATE TABLE merge_log (tenant TEXT NOT NULL, seq INTEGER NOT NULL, action TEXT NOT NULL, "
        "entity TEXT NOT NULL, node TEXT NOT NULL, reason TEXT, score REAL, who TEXT NOT NULL, at TEXT NOT NULL, "
        "PRIMARY KEY (tenant, seq))",
    ],
    [
        # fuzzy candidate pairs (canon's blocks and score), both ways, found once when a group
        # is created: an update reads its names' neighbourhoods instead of screening blocks again
        "CREATE TABLE links (tenant TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (tenant, a, b))",
        # a tenant listed here has its links built and is resolved by the neighbourhood rule;
        # a tenant of a version-1 store gets both on its next update (GraphStore._upgrade)
        "CREATE TABLE resolution_state (tenant TEXT PRIMARY KEY, rule INTEGER NOT NULL)",
    ],
    [
        # the document as a node: its title, page count and the node that IS it (a domain's
        # document_type); NULL for documents added before (re-adding fills them)
        "ALTER TABLE documents ADD COLUMN title TEXT",
        "ALTER TABLE documents ADD COLUMN pages INTEGER",
        "ALTER TABLE documents ADD COLUMN node TEXT",
        # how far a node's identity reaches (corpus / document / value, kgkit.formats.scopes) and a
        # value node's normalised value (JSON); a non-corpus group is never a fuzzy or alias
        # partner, and its id is its document's (kgkit.graph.runs.scoped_ids)
        "ALTER TABLE doc_nodes ADD COLUMN scope TEXT NOT NULL DEFAULT 'corpus'",
        "ALTER TABLE doc_nodes ADD COLUMN value TEXT",
        "ALTER TABLE groups ADD COLUMN scope TEXT NOT NULL DEFAULT 'corpus'",
    ],
    [
        # PostgreSQL: the login role of each tenant (GraphStore.grant_tenant_role); a session of a role listed
        # here is its tenant, whatever app.tenant it sets (database.py). Shared: no tenant rows, no grants.
        "CREATE TABLE IF NOT EXISTS tenant_roles (role TEXT PRIMARY KEY, tenant TEXT NOT NULL)",
    ],
    # the query indexes (kgkit/graph/index_schema.py): tenant tables kept by triggers on the store's
    # own, built per tenant on its first open (kgkit/graph/index.py ensure); a store whose indexes an
    # earlier kgkit made on open has those dropped first, to be rebuilt the same way
    {kind: index_schema.drop_earlier(kind) + ddl()
     for kind, ddl in (("sqlite", index_schema.sqlite_ddl), ("postgresql", index_schema.postgres_ddl))},
    # the query index tables again, rebuilt per tenant on the store's next open: their triggers
    # now note a document's view, not each row; evidence by item key (index_schema.TABLES); on
    # SQLite four of them WITHOUT ROWID (index_schema.ROWLESS: a row is one B-tree insert, not two)
    {kind: index_schema.drop_earlier(kind) + ddl()
     for kind, ddl in (("sqlite", index_schema.sqlite_ddl), ("postgresql", index_schema.postgres_ddl))},
    # every stored item's answer-level id (kgkit/graph/item_ids.py), so an answer's item is found by
    # an index range; a tenant stored before is filled on its next open
    item_ids.migration(),
    # an update reads claims by alias key (who claims this group's key?) and the review queue by
    # its held items, a match its named end by the name's key: each was a read of every row of the
    # tenant, its cost growing with the corpus (tests/graph/test_update_plans.py,
    # tests/query/test_query_plans.py). Dropped first, so the step can run again.
    [
        "DROP INDEX IF EXISTS qx_names_key",
        index_schema.NAMES_BY_KEY,
        "DROP INDEX IF EXISTS claims_key",
        "DROP INDEX IF EXISTS claims_alias",  # (tenant, type, alias_key): claims_key serves its lookups too
        "CREATE INDEX claims_key ON claims (tenant, alias_key, type)",
        "DROP INDEX IF EXISTS items_held",
        "CREATE INDEX items_held ON items (tenant, doc, review_key) WHERE held IS NOT NULL",
    ],
    # the store's own indexes in the shape the queries read them: a node's documents (a hub's first
    # few, and how many, without reading its rows) and an item's evidence by its key (else a read per
    # answer item ranges over its document's every row). The query indexes' step had added these as
    # second indexes beside the narrower ones, and a commit writes a page a row of each such index
    # (benchmarks/query_speed.py --pages). Dropped first, so the step can run again.
    [
        "DROP INDEX IF EXISTS qx_doc_nodes_docs",
        "DROP INDEX IF EXISTS doc_nodes_node",
        "DROP INDEX IF EXISTS doc_nodes_node_doc",
        "CREATE INDEX doc_nodes_node_doc ON doc_nodes (tenant, node, doc)",
        "DROP INDEX IF EXISTS qx_evidence_item",
        "DROP INDEX IF EXISTS evidence_doc",
        "DROP INDEX IF EXISTS evidence_doc_item",
        "CREATE INDEX evidence_doc_item ON evidence (tenant, doc, item)",
    ],
]

#: The step that brings tenant roles: from it on, row-level security reads kgkit_tenant() (database.py).
ROLES_VERSION = 4
#: Tables every tenant shares, which no tenant role may change (schema_version is created before the steps).
SHARED_TABLES = frozenset({"schema_version", "tenant_roles"})



def statements(step: list[str] | dict[str, list[str]], kind: str) -> list[str]:
    """A step's statements for backend ``kind``."""
    return step[kind] if isinstance(step, dict) else step


def tables_of(steps: list) -> frozenset[str]:
    """The tables ``steps`` create on both backends."""
    return frozenset.intersection(*(frozenset(
        s.split("(")[0].split()[-1] for step in steps for s in statements(step, kind) if s.startswith("CREATE TABLE")
    ) for kind in ("sqlite", "postgresql")))


#: Every table of the schema: a store missing one is damaged.
TABLES = tables_of(MIGRATIONS)
#: Tables whose rows belong to a tenant (row-level security in PostgreSQL).
TENANT_TABLES = TABLES - SHARED_TABLES
