// The MCP Apps peer of the interop tests (crates/mcp-client/tests/interop.rs): a
// TypeScript SDK v2 server whose App-linked tools and UI resource are registered with the
// official MCP Apps SDK's server helpers (`@modelcontextprotocol/ext-apps/server`,
// `registerAppTool` and `registerAppResource`), served over stdio.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { RESOURCE_MIME_TYPE, registerAppResource, registerAppTool } from '@modelcontextprotocol/ext-apps/server';

const VIEW = 'ui://get-time/mcp-app.html';
const HTML = '<!DOCTYPE html><html><body><code id="time">…</code></body></html>';

function makeServer() {
    const server = new McpServer({ name: 'interop-ts-apps', version: '0.0.0' });
    registerAppTool(
        server,
        'get-time',
        { title: 'Get Time', description: 'Returns the current server time.', _meta: { ui: { resourceUri: VIEW } } },
        async () => ({ content: [{ type: 'text', text: '2026-07-28T12:00:00Z' }] })
    );
    registerAppTool(
        server,
        'refresh-time',
        { description: 'Refreshes the view.', _meta: { ui: { resourceUri: VIEW, visibility: ['app'] } } },
        async () => ({ content: [{ type: 'text', text: '2026-07-28T12:00:01Z' }] })
    );
    registerAppResource(
        server,
        'Get Time View',
        VIEW,
        { description: 'Shows the time.', _meta: { ui: { prefersBorder: true } } },
        async () => ({
            contents: [
                {
                    uri: VIEW,
                    mimeType: RESOURCE_MIME_TYPE,
                    text: HTML,
                    _meta: { ui: { csp: { connectDomains: ['https://api.example.com'] }, permissions: { clipboardWrite: {} } } }
                }
            ]
        })
    );
    return server;
}

serveStdio(makeServer);
