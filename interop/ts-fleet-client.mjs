// The TypeScript SDK v1 client (2025-11-25: initialize, a session) against a fleet of
// `mcp serve-example --redis` instances behind a load balancer (`--url URL`): each call
// may land on another instance. Prints one JSON object with what each step returned;
// crates/mcp-cli/tests/fleet_haproxy.rs asserts on it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[process.argv.indexOf("--url") + 1];
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client(
  { name: "ts-fleet", version: "1.0.0" },
  { capabilities: { elicitation: {} } },
);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { name: "Ada" } };
});
const updated = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  updated.push(n.params.uri);
});
const out = { asked, updated };
try {
  await client.connect(transport);
  out.protocol = transport.protocolVersion ?? null;
  out.sessionId = transport.sessionId ?? null;
  out.echoes = [];
  for (let n = 0; n < 6; n++) {
    const result = await client.callTool({ name: "echo", arguments: { text: `call ${n}` } });
    out.echoes.push(result.content[0].text);
  }
  out.greet = (await client.callTool({ name: "greet", arguments: {} })).content[0].text;
  await client.subscribeResource({ uri: "example://counter" });
  for (let n = 0; n < 50 && updated.length === 0; n++) {
    await client.callTool({ name: "increment", arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await transport.terminateSession();
} catch (e) {
  out.error = String(e?.stack ?? e);
}
console.log(JSON.stringify(out));
await client.close().catch(() => {});
process.exit(0);
