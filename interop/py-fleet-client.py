"""The Python SDK (`mcp` 2.x) client in handshake mode (2025-11-25: initialize, a session)
against a fleet of `mcp serve-example --redis` instances behind a load balancer (`--url
URL`): each call may land on another instance. Prints one JSON object with what each step
returned; crates/mcp-cli/tests/fleet_haproxy.rs asserts on it."""

import json
import sys
import warnings

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

asked = []
updated = []


async def on_elicit(context, params):
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"name": "Grace"})


async def on_message(message):
    if isinstance(message, types.ResourceUpdatedNotification):
        updated.append(str(message.params.uri))


async def main(url):
    out = {"asked": asked, "updated": updated}
    try:
        async with streamable_http_client(url) as (read, write, *_):
            async with ClientSession(
                read, write, elicitation_callback=on_elicit, message_handler=on_message
            ) as session:
                init = await session.initialize()
                out["protocol"] = init.protocol_version
                out["echoes"] = []
                for n in range(6):
                    result = await session.call_tool("echo", {"text": f"call {n}"})
                    out["echoes"].append(result.content[0].text)
                greet = await session.call_tool("greet", {})
                out["greet"] = greet.content[0].text
                with warnings.catch_warnings():
                    # Deprecated in 2026-07-28 only: this session speaks 2025-11-25.
                    warnings.simplefilter("ignore")
                    await session.subscribe_resource("example://counter")
                for _ in range(50):
                    if updated:
                        break
                    await session.call_tool("increment", {})
                    await anyio.sleep(0.1)
    except Exception as e:  # reported, not raised: the test asserts on the output
        out["error"] = repr(e)
    print(json.dumps(out), flush=True)


anyio.run(main, sys.argv[sys.argv.index("--url") + 1])
