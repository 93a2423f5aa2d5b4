// A Signalyard MCP tool call against the SDK's bare `client.callTool`, on the same stdio server
// (test/fixtures/test-server.mjs, its `echo` tool; each side has a child process of its own),
// in the same run, 100 sequential calls per batch. Target (docs/mcp.md, mcp.md): the Signalyard
// call (cache lookup, argument validation against the inputSchema, result conversion) at most
// 1.15x the bare SDK call. Also with an AsyncLocalStorage active (`…@als`, decisions-wave3 §6):
// both calls again inside `als.run(store, …)` in this process (the server is the same fixture),
// measured in the same rounds as the plain ones; the target holds in both modes.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectMcp } from '@signalyard/mcp';
import { described, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { modes, withAls } from '../../../scripts/bench/modes.mjs';

const CALLS = 100;
const server = fileURLToPath(new URL('../test/fixtures/test-server.mjs', import.meta.url));
const command = { command: process.execPath, args: [server, '--stdio'] };

const mcp = await connectMcp({ servers: { bench: command } });
const [echo] = await mcp.tools({ server: 'bench', allow: ['echo'] });
if (echo === undefined) throw new Error('the test server offers no echo tool');
const bare = new Client({ name: 'bench', version: '1.0.0' });
await bare.connect(new StdioClientTransport(command));

const ctx = { toolCallId: 'bench' };
if ((await echo.execute({ text: 'hi' }, ctx)) !== 'hi\n(echoed)') throw new Error('unexpected Signalyard answer');
const check = await bare.callTool({ name: 'echo', arguments: { text: 'hi' } });
if (!Array.isArray(check.content) || check.content.length !== 2) throw new Error('unexpected SDK answer');

const results = await measure(
  withAls([
    {
      name: 'Signalyard MCP tool: execute',
      batch: CALLS,
      fn: async () => {
        for (let i = 0; i < CALLS; i++) await echo.execute({ text: 'hi' }, ctx);
      },
    },
    {
      name: 'SDK: client.callTool',
      batch: CALLS,
      fn: async () => {
        for (let i = 0; i < CALLS; i++) await bare.callTool({ name: 'echo', arguments: { text: 'hi' } });
      },
    },
  ]),
  { time: 2000, warmupTime: 500 },
);
printTable('@signalyard/mcp: one tool call over stdio (per call)', results);
for (const [[ours, sdk], mode] of modes(results)) {
  figure({
    workload: 'mcp: a tool call over stdio, 100 sequential calls',
    name: `Signalyard MCP tool call / bare SDK client.callTool${mode}`,
    unit: 'x',
    samples: ratio(ours!, sdk!),
    target: { atMost: 1.15 },
    against: described(sdk!, `SDK client.callTool${mode}`),
  });
}
await mcp.close();
await bare.close();
