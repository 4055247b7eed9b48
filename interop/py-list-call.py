"""The Python SDK (`mcp` 2.x) client listing a server's tools and calling `echo` and `add`:
the README's quick-start server (examples/minimal-server) as a new user's clients meet it.
`python py-list-call.py (--url URL | command args...)`. Prints one JSON object;
`cargo xtask minimal-server` asserts on it."""

import json
import sys

import anyio

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump(blocks):
    return [b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in blocks]


async def main():
    if sys.argv[1] == "--url":
        transport = streamable_http_client(sys.argv[2])
    else:
        transport = stdio_client(StdioServerParameters(command=sys.argv[1], args=sys.argv[2:]))
    out = {}
    try:
        async with transport as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                init = await session.initialize()
                out["protocolVersion"] = init.protocol_version
                out["serverName"] = init.server_info.name
                out["tools"] = [t.name for t in (await session.list_tools()).tools]
                out["echo"] = dump((await session.call_tool("echo", {"text": "hi"})).content)
                out["add"] = dump((await session.call_tool("add", {"a": 2, "b": 3})).content)
    except Exception as e:  # noqa: BLE001 - reported to the caller, which asserts on it
        out["error"] = repr(e)
    print(json.dumps(out))


anyio.run(main)
