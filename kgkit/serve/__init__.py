"""Serving a corpus graph to agents: the query operators, an item's evidence and a document's
summary as tools of a Model Context Protocol server, one tenant, read-only.

    from kgkit.serve import ServeOptions, serve
    serve(ServeOptions("corpus.sqlite", tenant="team-a"))          # stdio, until the client goes

:mod:`kgkit.serve.tools` (what each tool takes and answers), :mod:`kgkit.serve.corpus` (evidence
and documents from the store's snapshot), :mod:`kgkit.serve.service` (a store opened for one
tenant, read-only, behind one ``call``), :mod:`kgkit.serve.mcp_server` (the SDK's server over
stdio or streamable HTTP). See docs/mcp.md.
"""
from kgkit.serve.service import GraphService, ServeOptions, ToolFailure, open_service

__all__ = ["GraphService", "ServeOptions", "ToolFailure", "open_service", "serve"]


def serve(options: ServeOptions) -> None:
    """Serve ``options``'s graph over MCP (needs the ``mcp`` extra)."""
    from kgkit.serve.mcp_server import serve as run

    run(options)
