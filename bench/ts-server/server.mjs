// The TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in package.json) serving the
// benchmark's tools for `cargo xtask bench`, the same as `mcp-bench-server`:
//
// - `echo` {text}: the text back, as one text content block;
// - `add` {a, b}: the sum, as text;
// - `search`: the same realistic input schema (a nested object, enums, patterns, a date
//   format, bounded arrays); finds nothing: "no results for QUERY in SCOPE";
// - `steps` {steps}: sends that many progress notifications (when the call has a progress
//   token), then answers "N steps";
// - `--extra-tools N`: N generated tools, `extra_000` on, for the `tools/list` scenario.
//
//     node server.mjs [--extra-tools N]                    stdio
//     node server.mjs --http 127.0.0.1:0 [--sse] [--extra-tools N]
//
// Over HTTP it serves stateless Streamable HTTP at /mcp with JSON replies
// (`enableJsonResponse`), or with event streams given `--sse` (in JSON mode the SDK drops a
// tool's progress notifications, so the progress scenario runs with `--sse`), a new
// McpServer and transport per request as the SDK's stateless example does, and prints the
// URL on the first line of stdout. This SDK speaks the initialize-era
// protocol (up to 2025-11-25), so the benchmark drives it `legacy`.
import http from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

function option(name) {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
}

const extraTools = Number(option('--extra-tools') ?? 0);
const sse = process.argv.includes('--sse');
const text = value => ({ content: [{ type: 'text', text: value }] });

const searchFilters = z
    .object({
        languages: z
            .array(z.string().regex(/^[a-z][a-z0-9+#-]{0,31}$/))
            .min(1)
            .max(5)
            .optional()
            .describe('Languages to keep, such as rust or typescript.'),
        repository: z
            .string()
            .regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/)
            .optional()
            .describe('A repository, owner/name.'),
        since: z.iso.date().optional().describe('Only results changed on or after this day.'),
        labels: z
            .array(z.string().min(1).max(50))
            .max(10)
            .optional()
            .describe('Labels that must all be present.'),
        min_stars: z.number().int().min(0).max(1000000).optional().describe('The least number of stars.')
    })
    .strict();

function makeServer() {
    const server = new McpServer({ name: 'bench-ts', version: '0.0.0' });
    server.registerTool(
        'echo',
        { description: 'Returns its text argument', inputSchema: { text: z.string().describe('The text to send back.') } },
        async ({ text: value }) => text(value)
    );
    server.registerTool(
        'add',
        { description: 'Adds two integers', inputSchema: { a: z.number().int(), b: z.number().int() } },
        async ({ a, b }) => text(String(a + b))
    );
    server.registerTool(
        'search',
        {
            description: 'Searches code, issues or docs (finds nothing: a benchmark tool)',
            inputSchema: {
                query: z.string().min(1).max(200).describe('What to look for.'),
                scope: z.enum(['code', 'issues', 'docs']).describe('Where to look.'),
                filters: searchFilters.optional().describe('What to keep.'),
                sort: z.enum(['relevance', 'newest', 'oldest']).optional().describe('How to order the results.'),
                limit: z.number().int().min(1).max(100).optional().describe('How many results at most.')
            }
        },
        async ({ query, scope }) => text(`no results for ${query} in ${scope}`)
    );
    server.registerTool(
        'steps',
        {
            description: 'Sends the given number of progress notifications, then answers',
            inputSchema: { steps: z.number().int().min(0).max(1000) }
        },
        async ({ steps }, extra) => {
            const progressToken = extra._meta?.progressToken;
            if (progressToken !== undefined) {
                for (let done = 1; done <= steps; done++) {
                    await extra.sendNotification({
                        method: 'notifications/progress',
                        params: { progressToken, progress: done, total: steps }
                    });
                }
            }
            return text(`${steps} steps`);
        }
    );
    for (let i = 0; i < extraTools; i++) {
        server.registerTool(
            `extra_${String(i).padStart(3, '0')}`,
            {
                description: `Fetches a record (generated tool ${i} of ${extraTools}, for benchmarks)`,
                inputSchema: {
                    id: z.number().int().min(0).describe('The record to fetch.'),
                    fields: z.array(z.string().max(64)).max(20).optional().describe('The fields to return; all when absent.')
                }
            },
            async ({ id }) => text(`record ${id} from extra tool ${i}`)
        );
    }
    return server;
}

const listen = option('--http');
if (listen === undefined) {
    await makeServer().connect(new StdioServerTransport());
} else {
    const colon = listen.lastIndexOf(':');
    const host = listen.slice(0, colon);
    const port = Number(listen.slice(colon + 1));
    const httpServer = http.createServer(async (req, res) => {
        if (new URL(req.url, 'http://127.0.0.1').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        try {
            const server = makeServer();
            const transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: undefined,
                enableJsonResponse: !sse
            });
            res.on('close', () => {
                transport.close();
                server.close();
            });
            await server.connect(transport);
            await transport.handleRequest(req, res);
        } catch (error) {
            console.error(error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    httpServer.keepAliveTimeout = 60_000;
    httpServer.listen(port, host, () => {
        const { address, port: bound } = httpServer.address();
        console.log(`http://${address}:${bound}/mcp`);
    });
}
