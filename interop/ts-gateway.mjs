// A TypeScript SDK client of `mcp gateway`: lists the tools of every upstream through the
// gateway, calls one tool of each, and answers server-everything's elicitation request
// (asked upstream, passed on by the gateway) by accepting a form.
// `node ts-gateway.mjs <v1|v2-auto> command args…`: `v1` is the v1 SDK
// (`@modelcontextprotocol/sdk`, the initialize handshake, 2025-11-25); `v2-auto` is the v2
// SDK (`@modelcontextprotocol/client`) in auto mode (2026-07-28 with a modern server).
// Prints one JSON object; crates/mcp-cli/tests/gateway.rs asserts on it.
const [sdk, command, ...args] = process.argv.slice(2);

const answer = async (request) => ({
  action: "accept",
  content: { name: `answered by ${sdk}`, check: true },
});

async function v1() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client(
    { name: "ts-v1-gateway", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, answer);
  const out = {};
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    out.protocolVersion = version;
    setProtocolVersion?.(version);
  };
  return { client, transport, out };
}

async function v2Auto() {
  const { Client } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client(
    { name: "ts-v2-gateway", version: "2.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: "auto" } },
  );
  client.setRequestHandler("elicitation/create", answer);
  return { client, transport, out: {} };
}

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

const { client, transport, out } = sdk === "v1" ? await v1() : await v2Auto();
try {
  await client.connect(transport);
  if (sdk !== "v1") {
    out.protocolVersion = client.getNegotiatedProtocolVersion();
  }
  out.serverName = client.getServerVersion()?.name;
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.everything = text(
    await client.callTool({ name: "everything__echo", arguments: { message: "hi" } }),
  );
  out.example = text(await client.callTool({ name: "example__add", arguments: { a: 2, b: 3 } }));
  out.python = text(await client.callTool({ name: "py__add", arguments: { a: 4, b: 5 } }));
  out.elicitation = text(
    await client.callTool({ name: "everything__trigger-elicitation-request", arguments: {} }),
  );
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await client.close();
console.log(JSON.stringify(out));
