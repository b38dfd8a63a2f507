"""``kgkit graph`` and ``kgkit review`` through the real entry point: output, exit codes,
errors without tracebacks, config fallback, and ``kgkit extract --graph``."""
from __future__ import annotations

import json

from support.cli_support import kgkit
from support.graph_support import DOCS, small_runs  # noqa: F401  (fixture)


def test_add_stats_show_merges_unmerge_remove(small_runs, tmp_path):
    graph = str(tmp_path / "g.sqlite")
    result = kgkit("graph", "add", graph, str(small_runs["alpha"]), str(small_runs["beta"]))
    assert result.exit_code == 0, result.output
    assert result.output == "alpha: added (graph version 1)\nbeta: added (graph version 2)\n"
    assert kgkit("graph", "add", graph, str(small_runs["alpha"])).output == "alpha: unchanged (graph version 2)\n"

    stats = json.loads(kgkit("graph", "stats", graph, "--json").output)
    assert stats["documents"] == 2 and stats["version"] == 2 and stats["nodes"] > 0
    assert "merged_nodes" in kgkit("graph", "stats", graph).output

    snap = json.loads(kgkit("graph", "show", graph, "--json").output)
    northwind = next(n for n in snap["nodes"] if "Northwind" in n["name"])
    shown = kgkit("graph", "show", graph, "--node", northwind["id"]).output
    assert "  documents: alpha, beta\n" in shown  # names, not d_ ids

    log = json.loads(kgkit("graph", "merges", graph, "--json").output)
    merged = next(m for m in log if m["entity"] == northwind["id"])
    text = kgkit("graph", "merges", graph).output
    assert f"kgkit: merge {merged['node']} '{merged['node_name']}' into {northwind['id']}" in text

    result = kgkit("graph", "unmerge", graph, merged["node"], "--who", "lee")
    assert result.exit_code == 0 and result.output == f"{merged['node']}: unmerged (graph version 3)\n"
    assert f"lee: unmerge {merged['node']}" in kgkit("graph", "merges", graph).output

    assert kgkit("graph", "remove", graph, "beta").output == "beta: removed (graph version 4)\n"
    assert json.loads(kgkit("graph", "stats", graph, "--json").output)["documents"] == 1


def test_errors_are_named_with_exit_code_2(small_runs, tmp_path):
    graph = str(tmp_path / "g.sqlite")
    result = kgkit("graph", "add", graph, str(tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path}/manifest.json: missing; is this a run folder written by kgkit extract?" in result.output
    assert "Traceback" not in result.output
    result = kgkit("graph", "remove", graph, "nothing")
    assert result.exit_code == 2 and "no document 'nothing' in graph tenant 'default'" in result.output
    result = kgkit("graph", "stats")
    assert result.exit_code == 2 and "no graph store given" in result.output
    result = kgkit("review", "accept", graph, "q_nope")
    assert result.exit_code == 2 and "no review entry 'q_nope'" in result.output
    assert not (tmp_path / "manifest.json").exists()


def test_config_names_the_graph_and_tenant(small_runs, tmp_path):
    (tmp_path / "kgkit.yaml").write_text("graph:\n  url: corpus.sqlite\n  tenant: team-a\n")
    config = str(tmp_path / "kgkit.yaml")
    result = kgkit("graph", "add", str(small_runs["gamma"]), "--config", config)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "corpus.sqlite").exists()  # relative to the config file
    stats = json.loads(kgkit("graph", "stats", "--config", config, "--json").output)
    assert stats["tenant"] == "team-a" and stats["documents"] == 1
    other = json.loads(kgkit("graph", "stats", "--config", config, "--tenant", "team-b", "--json").output)
    assert other["documents"] == 0


def test_review_list_show_accept_reject(small_runs, tmp_path):
    import shutil

    run = tmp_path / "alpha"
    shutil.copytree(small_runs["alpha"], run)
    view = run / "views" / "binary.json"
    data = json.loads(view.read_text())
    data["edges"][0]["verified"] = False
    view.write_text(json.dumps(data))
    graph = str(tmp_path / "g.sqlite")
    kgkit("graph", "add", graph, str(run))
    listed = kgkit("review", "list", graph).output.splitlines()
    assert len(listed) == 1 and "alpha  held binary: unverified evidence" in listed[0]
    entry_id = listed[0].split()[0]
    shown = json.loads(kgkit("review", "show", graph, entry_id).output)
    assert shown["item"]["id"] == data["edges"][0]["id"] and shown["decision"] is None
    assert kgkit("review", "accept", graph, entry_id, "--who", "kim").output == \
        f"{entry_id}: accepted (graph version 2)\n"
    assert kgkit("review", "list", graph).output == "nothing to review\n"
    assert "[accept by kim" in kgkit("review", "list", graph, "--all").output
    assert kgkit("review", "reject", graph, entry_id).exit_code == 0
    edges = json.loads(kgkit("graph", "show", graph, "--json").output)["edges"]
    assert data["edges"][0]["id"] not in {e["id"] for e in edges}


def test_extract_adds_finished_runs_to_the_graph(tmp_path):
    src = tmp_path / "gamma.txt"
    src.write_text(DOCS["gamma"], encoding="utf-8")
    graph = str(tmp_path / "g.sqlite")
    result = kgkit("extract", str(src), "--domain", "legal_contracts", "--out", str(tmp_path / "out"),
                   "--graph", graph, "--tenant", "t1")
    assert result.exit_code == 0, result.output
    stats = json.loads(kgkit("graph", "stats", graph, "--tenant", "t1", "--json").output)
    assert stats["documents"] == 1 and stats["nodes"] > 0
    assert result.stdout.splitlines()[-1] == (
        f"graph {graph} (tenant t1): 1 document(s) added, 0 replaced, 0 unchanged; it now holds 1 document(s), "
        f"{stats['nodes']} nodes, {stats['edges']} edges")
    again = kgkit("extract", str(src), "--domain", "legal_contracts", "--out", str(tmp_path / "out"),
                  "--graph", graph, "--tenant", "t1", "--json")
    assert json.loads(again.stdout)["graph"] == {"url": graph, "tenant": "t1", "added": 0, "replaced": 0,
                                                 "unchanged": 1, "left_out": 0, "documents": 1,
                                                 "nodes": stats["nodes"], "edges": stats["edges"]}


def test_export_reads_the_store(small_runs, tmp_path):
    graph = str(tmp_path / "g.sqlite")
    kgkit("graph", "add", graph, str(small_runs["alpha"]), str(small_runs["beta"]), "--tenant", "t1")
    result = kgkit("graph", "export", graph, "--format", "json", "-o", str(tmp_path / "out"), "--tenant", "t1")
    assert result.exit_code == 0, result.output
    [written] = [p for p in (tmp_path / "out").iterdir()]
    data = json.loads(written.read_text())
    stats = json.loads(kgkit("graph", "stats", graph, "--tenant", "t1", "--json").output)
    assert len(data["nodes"]) == stats["nodes"] and len(data["edges"]) == stats["edges"]


def _corpus_out(tmp_path):
    """A corpus run's --out folder, as `kgkit extract` writes it (run folders and runs.jsonl)."""
    for name in ("alpha", "beta"):
        (tmp_path / f"{name}.txt").write_text(DOCS[name], encoding="utf-8")
    out = tmp_path / "kgkit-out"
    result = kgkit("extract", str(tmp_path / "alpha.txt"), str(tmp_path / "beta.txt"), "--domain", "legal_contracts",
                   "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "runs.jsonl").is_file()
    return out


def test_add_takes_the_out_folder_of_a_corpus_run(tmp_path):
    out = _corpus_out(tmp_path)
    graph = str(tmp_path / "g.sqlite")
    result = kgkit("graph", "add", graph, str(out))
    assert result.exit_code == 0, result.output
    assert result.output == "alpha: added (graph version 1)\nbeta: added (graph version 2)\n"


def test_add_takes_a_glob_of_the_out_folder_runs_jsonl_included(tmp_path):
    out = _corpus_out(tmp_path)
    graph = str(tmp_path / "g.sqlite")
    result = kgkit("graph", "add", graph, *sorted(str(p) for p in out.iterdir()))  # kgkit-out/*
    assert result.exit_code == 0, result.output
    assert result.output == "alpha: added (graph version 1)\nbeta: added (graph version 2)\n"
    (tmp_path / "kgkit.yaml").write_text(f"graph:\n  url: {graph}\n")
    result = kgkit("graph", "add", str(out), "--config", str(tmp_path / "kgkit.yaml"))  # GRAPH from graph.url
    assert result.exit_code == 0, result.output
    assert result.output == "alpha: unchanged (graph version 2)\nbeta: unchanged (graph version 2)\n"


def test_add_with_only_runs_jsonl_is_a_usage_error(tmp_path):
    out = _corpus_out(tmp_path)
    result = kgkit("graph", "add", str(tmp_path / "g.sqlite"), str(out / "runs.jsonl"))
    assert result.exit_code == 2
    assert "no run folder among the paths given (only runs.jsonl)" in result.output


def test_export_o_file_writes_that_file(small_runs, tmp_path):
    graph = str(tmp_path / "g.sqlite")
    kgkit("graph", "add", graph, str(small_runs["alpha"]))
    result = kgkit("graph", "export", graph, "--format", "graphml", "-o", str(tmp_path / "corpus.graphml"))
    assert result.exit_code == 0, result.output
    assert result.output == f"{tmp_path / 'corpus.graphml'}\n"
    assert (tmp_path / "corpus.graphml").is_file()


def test_show_sorts_nodes_by_type_and_name_and_names_their_documents(small_runs, tmp_path):
    graph = str(tmp_path / "g.sqlite")
    kgkit("graph", "add", graph, str(small_runs["beta"]), str(small_runs["alpha"]))
    snap = json.loads(kgkit("graph", "show", graph, "--json").output)
    result = kgkit("graph", "show", graph)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    values = [n for n in snap["nodes"] if n["scope"] == "value"]  # shown on their edges
    nodes = len(snap["nodes"]) - len(values)
    assert values and lines[0] == (f"tenant default, version 2: 2 documents, {nodes} nodes and {len(values)} values, "
                                   f"{len(snap['edges'])} edges")
    assert lines[1:3] == ["Document  alpha  'SUPPLY AGREEMENT'", "Document  beta  'SERVICES AGREEMENT'"]
    node_lines = lines[3:3 + nodes]
    shown = [tuple(line.split("  ")[1:3]) for line in node_lines]
    assert shown == sorted(shown, key=lambda t: (t[0], t[1].casefold())) and len(set(t[0] for t in shown)) > 1
    northwind = next(n for n in snap["nodes"] if n["name"].startswith("Northwind"))
    assert f"{northwind['id']}  {northwind['type']}  {northwind['name']}  (alpha, beta)" in node_lines
    assert any(line.endswith("(alpha)  [document]") and "SUPPLY AGREEMENT [alpha]" in line for line in node_lines)
    assert "d_" not in result.output
    edge_lines = lines[3 + nodes:]
    assert edge_lines == sorted(edge_lines) and len(edge_lines) == len(snap["edges"])
    assert any(line.endswith('-AGREEMENT_DATE-> "March 3, 2021" = 2021-03-03') for line in edge_lines)
