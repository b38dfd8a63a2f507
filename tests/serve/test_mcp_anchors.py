"""The anchors tool over the SDK's client: "anchors about X" of a stored paper, the same
answer as ``kgkit query anchors GRAPH X``, with a kind and a limit, and the payloads."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from support.optional_parts import require_module
from kgkit.cli import cli

pytest.importorskip("pdfplumber")


@pytest.fixture(scope="module", autouse=True)
def sdk():
    return require_module("mcp", "mcp")


@pytest.fixture(scope="module")
def paper_graph(tmp_path_factory):
    from support.pdf_maker import two_column_paper

    tmp = tmp_path_factory.mktemp("anchors")
    pdf = two_column_paper(tmp / "a.pdf", title="Graph Methods for Citation Analysis",
                           venue="Proceedings of the Example Workshop 2020, pages 1-9")
    env = {"KGKIT_CONFIG_DIR": str(tmp / "cfg"), "KGKIT_CACHE_DIR": str(tmp / "cache")}
    result = CliRunner(env=env).invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    graph = str(tmp / "g.sqlite")
    assert CliRunner(env=env).invoke(cli, ["graph", "add", graph, str(tmp / "out" / "a")]).exit_code == 0
    return graph


def test_the_anchors_tool_answers_anchors_about_a_term_as_the_cli_does(paper_graph):
    import anyio
    from mcp import Client

    from kgkit.serve import ServeOptions, open_service
    from kgkit.serve.mcp_server import build_server

    async def go():
        with open_service(ServeOptions(graph=paper_graph)) as service:
            async with Client(build_server(service)) as client:
                tool = next(t for t in (await client.list_tools()).tools if t.name == "anchors")
                about = await client.call_tool("anchors", {"about": "Table 1"})
                figure = await client.call_tool("anchors", {"about": "pipeline", "kind": "figure", "limit": 5})
                every = await client.call_tool("anchors", {})
                return tool, about, figure, every

    tool, about, figure, every = anyio.run(go)
    assert {"about", "kind", "document", "limit"} <= set(tool.input_schema["properties"])
    for result in (about, figure, every):
        assert not result.is_error, result.content[0].text
    cli_about = CliRunner().invoke(cli, ["query", "anchors", paper_graph, "Table 1", "--json"])
    assert about.structured_content == json.loads(cli_about.output)
    first = about.structured_content["report"]["anchors"][0]
    assert first["label"] == "Table 1" and first["caption"] == "Results on the test papers"
    assert ["Ours", "0.91", "3s"] in first["rows"]
    assert [a["label"] for a in figure.structured_content["report"]["anchors"]] == ["Figure 1"]
    assert len(every.structured_content["report"]["anchors"]) > len(about.structured_content["report"]["anchors"])
