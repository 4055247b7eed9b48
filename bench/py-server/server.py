"""The Python SDK (`mcp`, pinned in requirements.txt) serving the benchmark's tools for
`cargo xtask bench`, the same as `mcp-bench-server`:

- `echo` {text}: the text back, as one text content block;
- `add` {a, b}: the sum, as text;
- `search`: the same realistic input schema (a nested object, enums, patterns, a date
  format, bounded arrays); finds nothing: "no results for QUERY in SCOPE";
- `steps` {steps}: sends that many progress notifications (when the call has a progress
  token), then answers "N steps";
- `--extra-tools N`: N generated tools, `extra_000` on, for the `tools/list` scenario.

Tools return unstructured content only (no `structuredContent` copy of the text), like
the other servers of the benchmark.

    python server.py [--extra-tools N]                   stdio
    python server.py --http 127.0.0.1:0 [--sse] [--extra-tools N]

Over HTTP it serves stateless Streamable HTTP at /mcp with JSON replies, or with event
streams given `--sse` (in JSON mode the SDK drops a tool's progress notifications, so the
progress scenario runs with `--sse`), and prints the URL on the first line of stdout.
The SDK serves the 2026-07-28 protocol to clients that send the per-request `_meta`
envelope (stdio: the opening message picks the era; HTTP: a non-handshake
`MCP-Protocol-Version` header routes to the modern entry), so it is driven `modern`.
"""

import argparse
import socket
import sys
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp.server.mcpserver import Context, MCPServer

# WARNING: no INFO lines on stderr from every HTTP server start.
server = MCPServer(name="bench-py", version="0.0.0", log_level="WARNING")


@server.tool(description="Returns its text argument", structured_output=False)
def echo(text: str) -> str:
    return text


@server.tool(description="Adds two integers", structured_output=False)
def add(a: int, b: int) -> str:
    return str(a + b)


class SearchFilters(BaseModel):
    """What `search` keeps."""

    model_config = ConfigDict(extra="forbid")

    languages: Annotated[
        list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9+#-]{0,31}$")]] | None,
        Field(min_length=1, max_length=5, description="Languages to keep, such as rust or typescript."),
    ] = None
    repository: Annotated[
        str | None,
        Field(pattern=r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$", description="A repository, owner/name."),
    ] = None
    since: Annotated[
        str | None,
        Field(json_schema_extra={"format": "date"}, description="Only results changed on or after this day."),
    ] = None
    labels: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=50)]] | None,
        Field(max_length=10, description="Labels that must all be present."),
    ] = None
    min_stars: Annotated[int | None, Field(ge=0, le=1_000_000, description="The least number of stars.")] = None


@server.tool(
    description="Searches code, issues or docs (finds nothing: a benchmark tool)",
    structured_output=False,
)
def search(
    query: Annotated[str, Field(min_length=1, max_length=200, description="What to look for.")],
    scope: Annotated[Literal["code", "issues", "docs"], Field(description="Where to look.")],
    filters: Annotated[SearchFilters | None, Field(description="What to keep.")] = None,
    sort: Annotated[Literal["relevance", "newest", "oldest"] | None, Field(description="How to order.")] = None,
    limit: Annotated[int | None, Field(ge=1, le=100, description="How many results at most.")] = None,
) -> str:
    return f"no results for {query} in {scope}"


@server.tool(
    description="Sends the given number of progress notifications, then answers",
    structured_output=False,
)
async def steps(steps: Annotated[int, Field(ge=0, le=1000)], ctx: Context) -> str:
    for done in range(1, steps + 1):
        await ctx.report_progress(done, steps)
    return f"{steps} steps"


def make_extra(i: int):
    """The handler of generated tool `i`."""

    def extra(
        id: Annotated[int, Field(ge=0, description="The record to fetch.")],
        fields: Annotated[
            list[Annotated[str, Field(max_length=64)]] | None,
            Field(max_length=20, description="The fields to return; all when absent."),
        ] = None,
    ) -> str:
        return f"record {id} from extra tool {i}"

    return extra


def add_extra_tools(count: int) -> None:
    for i in range(count):
        server.add_tool(
            make_extra(i),
            name=f"extra_{i:03}",
            description=f"Fetches a record (generated tool {i} of {count}, for benchmarks)",
            structured_output=False,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", metavar="HOST:PORT")
    parser.add_argument("--sse", action="store_true", help="HTTP: event-stream replies")
    parser.add_argument("--extra-tools", type=int, default=0, metavar="N")
    args = parser.parse_args()
    add_extra_tools(args.extra_tools)
    if args.http is None:
        server.run()
        return
    import uvicorn

    host, _, port = args.http.rpartition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, int(port)))
    sock.listen(1024)
    bound_host, bound_port = sock.getsockname()[:2]
    app = server.streamable_http_app(json_response=not args.sse, stateless_http=True, host=bound_host)
    print(f"http://{bound_host}:{bound_port}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
