"""The Python SDK (`mcp` 2.x) client in handshake mode (`initialize`, a legacy revision)
against a server given on the command line: a stdio command, `--url URL` for Streamable
HTTP, or `--sse URL` for the 2024-11-05 HTTP+SSE transport. Prints one JSON object with what each
step returned; crates/mcp-legacy/tests/interop.rs asserts on it."""

import json
import sys

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

asked = []
logs = []


async def on_elicit(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"name": "Grace"})


async def on_sample(context, params):
    asked.append(params.messages[0].content.text)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Ships in harbour"),
        model="interop-model",
        stop_reason="endTurn",
    )


async def on_log(params):
    logs.append(params.data)


def dump(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main():
    if sys.argv[1] == "--url":
        transport = streamable_http_client(sys.argv[2])
    elif sys.argv[1] == "--sse":
        transport = sse_client(sys.argv[2])
    else:
        transport = stdio_client(StdioServerParameters(command=sys.argv[1], args=sys.argv[2:]))
    out = {}
    async with transport as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(
            read,
            write,
            sampling_callback=on_sample,
            elicitation_callback=on_elicit,
            logging_callback=on_log,
        ) as session:
            init = await session.initialize()
            out["protocolVersion"] = init.protocol_version
            out["serverInfo"] = dump(init.server_info)
            out["tools"] = [t.name for t in (await session.list_tools()).tools]
            await session.set_logging_level("info")
            out["echo"] = dump(await session.call_tool("echo", {"text": "hi"}))
            out["fails"] = dump(await session.call_tool("fails", {}))
            # A 2025-03-26 session has no elicitation: the call fails, the session goes on.
            try:
                out["interview"] = dump(await session.call_tool("interview", {}))
            except Exception as e:  # noqa: BLE001 - reported to the test, which asserts on it
                out["interview"] = {"error": {"code": getattr(e, "code", None), "message": str(e)}}
            out["read"] = dump(await session.read_resource("demo://hello"))
            out["prompt"] = dump(await session.get_prompt("greet", {"name": "Ada"}))
            await session.send_ping()
            out["asked"] = asked
            out["logs"] = logs
    print(json.dumps(out))


anyio.run(main)
