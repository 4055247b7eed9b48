"""The Python SDK (`mcp` 2.x) peer of the interop tests (crates/mcp-client/tests/interop.rs).

Serves over stdio by default, or over stateless Streamable HTTP on 127.0.0.1 with
`--http PORT`. The SDK serves the 2026-07-28 protocol to clients that send the
per-request `_meta` envelope (stdio: era chosen by the opening message; HTTP: a
non-handshake `MCP-Protocol-Version` header routes to the modern entry).
"""

import argparse

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer(name="interop-py", version="0.0.0")


class Sum(BaseModel):
    sum: int


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> Sum:
    return Sum(sum=a + b)


@server.tool(description="Always fails.")
def fail() -> str:
    raise ToolError("this tool always fails")


@server.resource("test://hello", name="hello", mime_type="text/plain")
def hello() -> str:
    return "Hello, world!"


@server.prompt(description="Greets someone.")
def greet(name: str) -> str:
    return f"Hello, {name}!"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http, stateless_http=True)


if __name__ == "__main__":
    main()
