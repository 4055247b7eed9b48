// The TypeScript SDK v2 (`@modelcontextprotocol/server`) peer of the interop tests
// (crates/mcp-client/tests/interop.rs).
//
// Serves over stdio by default (`serveStdio`: the opening exchange picks the era; a
// `server/discover` with the `_meta` envelope selects 2026-07-28), or over Streamable
// HTTP on 127.0.0.1 with `--http PORT` (`createMcpHandler` with `legacy: 'reject'`: a
// stateless, modern-only 2026-07-28 endpoint at /mcp).
import http from 'node:http';
import { Readable } from 'node:stream';

import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

function makeServer() {
    const server = new McpServer({ name: 'interop-ts', version: '0.0.0' });
    server.registerTool(
        'add',
        {
            description: 'Adds two integers.',
            inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
            outputSchema: z.object({ sum: z.number().int() })
        },
        async ({ a, b }) => {
            const output = { sum: a + b };
            return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
        }
    );
    server.registerTool('fail', { description: 'Always fails.' }, async () => ({
        content: [{ type: 'text', text: 'this tool always fails' }],
        isError: true
    }));
    server.registerResource('hello', 'test://hello', { mimeType: 'text/plain' }, async uri => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello, world!' }]
    }));
    server.registerPrompt(
        'greet',
        { description: 'Greets someone.', argsSchema: z.object({ name: z.string() }) },
        ({ name }) => ({
            messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }]
        })
    );
    return server;
}

const httpFlag = process.argv.indexOf('--http');
if (httpFlag === -1) {
    serveStdio(makeServer);
} else {
    const port = Number(process.argv[httpFlag + 1]);
    const handler = createMcpHandler(makeServer, { legacy: 'reject' });
    const server = http.createServer(async (req, res) => {
        try {
            if (new URL(req.url, 'http://127.0.0.1').pathname !== '/mcp') {
                res.writeHead(404).end();
                return;
            }
            const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
            const request = new Request(`http://${req.headers.host}${req.url}`, {
                method: req.method,
                headers: Object.entries(req.headers).flatMap(([k, v]) =>
                    Array.isArray(v) ? v.map(x => [k, x]) : [[k, String(v)]]
                ),
                body: hasBody ? Readable.toWeb(req) : undefined,
                duplex: hasBody ? 'half' : undefined
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body) {
                for await (const chunk of response.body) res.write(chunk);
            }
            res.end();
        } catch (error) {
            console.error(error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    server.listen(port, '127.0.0.1', () => console.error(`listening on 127.0.0.1:${port}`));
}
