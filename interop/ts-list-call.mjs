// A TypeScript SDK client that lists a server's tools and calls `echo` and `add`: the
// README's quick-start server (examples/minimal-server) as a new user's clients meet it.
// `node ts-list-call.mjs <v1|v2-auto> (--url URL | command args…)`: `v1` is the v1 SDK
// (`@modelcontextprotocol/sdk`, the initialize handshake, 2025-11-25); `v2-auto` is the v2
// SDK (`@modelcontextprotocol/client`) in auto mode, which probes with `server/discover`
// and goes modern (2026-07-28) when the server answers it. Prints one JSON object;
// `cargo xtask minimal-server` asserts on it.
const [sdk, command, ...args] = process.argv.slice(2);

async function v1() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { StreamableHTTPClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const transport =
    command === "--url"
      ? new StreamableHTTPClientTransport(new URL(args[0]))
      : new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "ts-v1-list-call", version: "1.0.0" }, { capabilities: {} });
  const out = {};
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    out.protocolVersion = version;
    setProtocolVersion?.(version);
  };
  return { client, transport, out };
}

async function v2Auto() {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const transport =
    command === "--url"
      ? new StreamableHTTPClientTransport(new URL(args[0]))
      : new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client(
    { name: "ts-v2-list-call", version: "2.0.0" },
    { capabilities: {}, versionNegotiation: { mode: "auto" } },
  );
  return { client, transport, out: {} };
}

const { client, transport, out } = sdk === "v1" ? await v1() : await v2Auto();
try {
  await client.connect(transport);
  if (sdk !== "v1") {
    out.era = client.getProtocolEra();
    out.protocolVersion = client.getNegotiatedProtocolVersion();
  }
  out.serverName = client.getServerVersion()?.name;
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.echo = (await client.callTool({ name: "echo", arguments: { text: "hi" } })).content;
  out.add = (await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })).content;
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await client.close();
console.log(JSON.stringify(out));
