"""A legacy HTTP+SSE server (the 2024-11-05 transport) built with the Python SDK (`mcp`
2.3.0, from interop/requirements.txt), for crates/mcp-legacy/tests/client_python_sse.rs.

Usage: py-sse-server.py PORT. Serves GET /sse (whose first event, `endpoint`, names the
POST URL) and POST /messages/ on 127.0.0.1.
"""

import sys

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer(name="py-sse", version="0.0.0")


class Name(BaseModel):
    name: str


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Asks the user's name, then greets them.")
async def ask(ctx: Context) -> str:
    result = await ctx.elicit("What is your name?", Name)
    if result.action == "accept":
        return f"Hello, {result.data.name}!"
    return f"no name ({result.action})"


@server.tool(description="Reports progress twice.")
async def slow(ctx: Context) -> str:
    await ctx.report_progress(1, 2, "halfway")
    await ctx.report_progress(2, 2, "done")
    return "finished"


@server.resource("test://hello", name="hello", mime_type="text/plain")
def hello() -> str:
    return "Hello, world!"


@server.prompt(description="Greets someone.")
def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run("sse", host="127.0.0.1", port=int(sys.argv[1]))
