// The TypeScript SDK v2 client (`@modelcontextprotocol/client`) against the dual-era demo
// server: `node ts-v2-client.mjs <legacy|auto> (--url URL | command args…)`. `legacy` is the
// SDK's default (the plain initialize handshake); `auto` probes with `server/discover` and
// goes modern when the server answers it. Prints one JSON object with what each step
// returned; crates/mcp-legacy/tests/interop.rs asserts on it.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, command, ...args] = process.argv.slice(2);
const transport =
  command === "--url"
    ? new StreamableHTTPClientTransport(new URL(args[0]))
    : new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client(
  { name: "ts-v2-interop", version: "2.0.0" },
  {
    capabilities: { elicitation: {}, sampling: {} },
    versionNegotiation: { mode },
  },
);
const asked = [];
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { name: "Lin" } };
});
client.setRequestHandler("sampling/createMessage", async (request) => {
  asked.push(request.params.messages[0].content.text);
  return {
    role: "assistant",
    content: { type: "text", text: "Rivers keep time" },
    model: "interop-model",
    stopReason: "endTurn",
  };
});

const out = {};
try {
  await client.connect(transport);
  out.era = client.getProtocolEra();
  out.protocolVersion = client.getNegotiatedProtocolVersion();
  out.serverVersion = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  out.fails = await client.callTool({ name: "fails", arguments: {} });
  out.read = await client.readResource({ uri: "demo://hello" });
  out.prompt = await client.getPrompt({ name: "greet", arguments: { name: "Lin" } });
  out.interview = await client.callTool({ name: "interview", arguments: {} });
  out.asked = asked;
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await client.close();
console.log(JSON.stringify(out));
