"""A :class:`~kgkit.serve.service.GraphService` as a Model Context Protocol server, on the
official SDK (``mcp``, the optional extra ``kgkit[mcp]``), over stdio or streamable HTTP.

The SDK's low-level ``Server`` is used rather than its decorator layer because the tools'
schemas are data (the published ``query`` schema for answers, a domain's YAML for named
queries), not Python signatures. Tools answer with ``structuredContent`` (checked by the
client against the tool's output schema) and the same JSON as text; a refused or failed call
is a tool result with ``isError`` and the reason, so the agent can correct itself and the
server goes on. Resources: ``kgkit://documents`` (the list, the one resource listed), and the
templates ``kgkit://document/{id}`` (a document's summary) and ``kgkit://node/{id}`` (a node and
its items).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from kgkit.errors import ConfigError, KgkitError
from kgkit.serve.service import GraphService, ServeOptions, ToolFailure, as_text, log, open_service

NAME = "kgkit"
NODE_ITEMS = 200  # items a node resource lists at most
SCHEME = "kgkit://"
RESOURCE_NOT_FOUND = -32002  # the protocol's error code for a resource that does not exist


def _sdk():
    try:
        import mcp_types
        from mcp.server import Server
    except ImportError:
        raise ConfigError("kgkit serve --mcp needs the MCP SDK", hint="pip install 'kgkit[mcp]'") from None
    return Server, mcp_types


class Handlers:
    """The server's request handlers over one service (``types``: the SDK's ``mcp_types``)."""

    def __init__(self, service: GraphService, types):
        self.service, self.types = service, types
        self.listed = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema,
                                  output_schema=t.output_schema, annotations=self._hints(t.name))
                       for t in service.tools.values()]

    def _hints(self, name: str):
        return self.types.ToolAnnotations(read_only_hint=name != "decide", destructive_hint=False,
                                          idempotent_hint=True, open_world_hint=False)

    async def list_tools(self, ctx, params) -> Any:
        return self.types.ListToolsResult(tools=self.listed)

    async def call_tool(self, ctx, params) -> Any:
        t = self.types
        try:
            data = self.service.call(params.name, params.arguments)
        except ToolFailure as exc:
            log.info("refused %s: %s", params.name[:100], str(exc).splitlines()[0][:200])
            return t.CallToolResult(content=[t.TextContent(type="text", text=str(exc))], is_error=True)
        return t.CallToolResult(content=[t.TextContent(type="text", text=as_text(data))], structured_content=data)

    async def list_resources(self, ctx, params) -> Any:
        """The documents' list only: hosts list resources as they connect, and a document's own
        resource (the template) needs the store's snapshot, read on first use."""
        t = self.types
        return t.ListResourcesResult(resources=[t.Resource(
            uri=f"{SCHEME}documents", name="documents", mime_type="application/json",
            description="Every document in the graph with its counts; kgkit://document/{id} reads one.")])

    async def list_templates(self, ctx, params) -> Any:
        t = self.types
        return t.ListResourceTemplatesResult(resource_templates=[
            t.ResourceTemplate(uri_template=SCHEME + "document/{id}", name="document", mime_type="application/json",
                               description="A document's summary, by d_ id or name."),
            t.ResourceTemplate(uri_template=SCHEME + "node/{id}", name="node", mime_type="application/json",
                               description=f"A node, the documents naming it and up to {NODE_ITEMS} of its items."),
        ])

    async def read_resource(self, ctx, params) -> Any:
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        try:
            data = read(self.service, uri)
        except KgkitError as exc:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=exc.format(), data={"uri": uri[:200]}) from None
        return self.types.ReadResourceResult(contents=[self.types.TextResourceContents(
            uri=uri, mime_type="application/json", text=as_text(data))])


def build_server(service: GraphService):
    """The SDK server for ``service``: tools, resources, and the notice that answers are data."""
    from kgkit import __version__

    Server, types = _sdk()
    h = Handlers(service, types)
    return Server(NAME, version=__version__, title="kgkit corpus graph", instructions=service.instructions,
                  on_list_tools=h.list_tools, on_call_tool=h.call_tool, on_list_resources=h.list_resources,
                  on_list_resource_templates=h.list_templates, on_read_resource=h.read_resource)


def read(service: GraphService, uri: str) -> dict[str, Any]:
    """The data behind a ``kgkit://`` resource URI."""
    from kgkit.errors import NotFoundError

    corpus = service.corpus
    if uri == f"{SCHEME}documents":
        return corpus.documents(10**9)
    kind, _, ref = uri.removeprefix(SCHEME).partition("/") if uri.startswith(SCHEME) else ("", "", "")
    if kind == "document" and ref:
        return corpus.document(unquote(ref))
    if kind == "node" and ref:
        return corpus.node(unquote(ref), NODE_ITEMS)
    raise NotFoundError(f"no resource {uri[:200]!r}",
                        hint=f"resources: {SCHEME}documents, {SCHEME}document/{{id}}, {SCHEME}node/{{id}}")


def serve(options: ServeOptions) -> None:
    """Serve until the client goes (stdio) or the process is stopped (HTTP)."""
    import anyio

    _sdk()
    with open_service(options) as service:
        server = build_server(service)
        log.info("serving tenant %r of %s, %d tools%s", service.tenant, service.store.db.location, len(service.tools),
                 ", review decisions allowed" if service.writes else ", read-only")
        if options.transport == "http":
            anyio.run(_http, server, options.port)
        else:
            anyio.run(_stdio, server)


async def _stdio(server) -> None:
    """Until the client closes stdin, or SIGTERM or SIGINT, taken inside the loop so the server
    stops as a whole (then :class:`KeyboardInterrupt`, as for any kgkit command stopped so)."""
    import signal

    import anyio
    from mcp.server.stdio import stdio_server

    stopped = False
    async with anyio.create_task_group() as tasks:
        async def watch(*, task_status=anyio.TASK_STATUS_IGNORED) -> None:
            nonlocal stopped
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                task_status.started()
                async for _ in signals:
                    stopped = True
                    tasks.cancel_scope.cancel()

        await tasks.start(watch)
        async with stdio_server() as (read_stream, write_stream):
            log.info("over stdio")
            await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()
    if stopped:
        raise KeyboardInterrupt


async def _http(server, port: int) -> None:
    """Streamable HTTP on 127.0.0.1 only (the SDK's DNS-rebinding guard on), path ``/mcp``."""
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    log.info("streamable HTTP at http://127.0.0.1:%d/mcp", port)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()
