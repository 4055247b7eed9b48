"""A stdio server that crashes on demand (crates/mcp-cli/tests/gateway.rs): the gateway
must start it again and go on serving its tools."""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="crashy", version="0.0.0")


@server.tool(description="The process id of this server.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Exits the process at once.")
def crash() -> str:
    os._exit(1)


if __name__ == "__main__":
    server.run()
