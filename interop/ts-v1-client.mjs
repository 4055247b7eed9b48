// The TypeScript SDK v1 client (legacy only: initialize handshake) against a server given
// on the command line: a stdio command, `--url URL` for Streamable HTTP, or `--sse URL` for
// the 2024-11-05 HTTP+SSE transport. Prints one JSON
// object with what each step returned; the Rust test (crates/mcp-legacy/tests/interop.rs)
// asserts on it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport =
  command === "--url"
    ? new StreamableHTTPClientTransport(new URL(args[0]))
    : command === "--sse"
      ? new SSEClientTransport(new URL(args[0]))
      : new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client(
  { name: "ts-v1-interop", version: "1.0.0" },
  { capabilities: { elicitation: {}, sampling: {} } },
);
// What the server asked of this client, in order.
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { name: "Ada" } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  asked.push(request.params.messages[0].content.text);
  return {
    role: "assistant",
    content: { type: "text", text: "Quiet numbers hum" },
    model: "interop-model",
    stopReason: "endTurn",
  };
});
const logs = [];
client.fallbackNotificationHandler = async (n) => {
  if (n.method === "notifications/message") logs.push(n.params.data);
};

const out = {};
// The client tells its transport the version `initialize` negotiated.
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  out.protocolVersion = version;
  setProtocolVersion?.(version);
};
try {
  await client.connect(transport);
  out.serverVersion = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.instructions = client.getInstructions();
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  await client.setLoggingLevel("info");
  out.echo = await client.callTool({ name: "echo", arguments: { text: "hi" } });
  out.fails = await client.callTool({ name: "fails", arguments: {} });
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.read = await client.readResource({ uri: "demo://hello" });
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  out.prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
  // A 2025-03-26 session has no elicitation: the call fails, the session goes on.
  out.interview = await client
    .callTool({ name: "interview", arguments: {} })
    .catch((e) => ({ error: { code: e.code, message: e.message } }));
  out.asked = asked;
  out.ping = await client.ping();
  out.logs = logs;
  out.sessionId = transport.sessionId ?? null;
  if (command === "--url") await transport.terminateSession();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
await client.close();
console.log(JSON.stringify(out));
