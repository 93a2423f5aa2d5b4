import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { connectMcp, McpError, type McpClient, type McpEvent, type McpServerConfig } from '@signalyard/mcp';
import type { Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, type CrewEvent } from 'signalyard';
import { deferred, rejectsCode } from '@signalyard/test-utils';
import { callLog, freePort, httpServer, kill, loggedCalls, stdioServer } from './support.js';

// Kill the server mid-call and bring it back: a read-only call is retried once and answered, a
// destructive one is answered `outcome unknown: not retried` (and ran once), and the client is
// `ready` again without anything done by hand.

const open: McpClient[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(children.splice(0).map(kill));
});

const reconnect = { initialMs: 10, maxMs: 100 };

/** Calls `tool` with a progress callback that learns the server's pid when the call hangs. */
function hangingCall(mcp: McpClient, tool: string, n: number) {
  const pid = deferred<number>();
  const result = mcp
    .tools({ server: 'shop', allow: [tool] })
    .then(([t]) => t?.execute({ n }, { toolCallId: `c${n}`, progress: (p) => pid.resolve(Number(p.message)) }));
  return { pid: pid.promise, result };
}

function states(mcp: McpClient): McpEvent[] {
  const seen: McpEvent[] = [];
  mcp.on((e) => e.type === 'state' && seen.push(e));
  return seen;
}

describe('a stdio server killed mid-call', () => {
  async function client(log: string): Promise<McpClient> {
    const mcp = await connectMcp({ servers: { shop: stdioServer(log, { MCP_TEST_HANG: '1' }) }, reconnect });
    open.push(mcp);
    return mcp;
  }

  it('retries a read-only call once after the reconnect and answers it', async () => {
    const log = callLog();
    const mcp = await client(log);
    const seen = states(mcp);
    const call = hangingCall(mcp, 'hang_read', 1);
    const first = await call.pid;
    process.kill(first, 'SIGKILL');
    const answer = (await call.result) as string;
    expect(answer).toMatch(/^hang_read 1 answered by \d+$/);
    expect(answer).not.toContain(String(first));
    expect(mcp.state('shop')).toBe('ready');
    expect(seen.map((e) => (e.type === 'state' ? e.state : e.type))).toEqual(['reconnecting', 'ready']);
    expect(loggedCalls(log).filter((c) => c.tool === 'hang_read')).toHaveLength(2);
  });

  it('answers a destructive call "outcome unknown: not retried", runs it once, and is ready again', async () => {
    const log = callLog();
    const mcp = await client(log);
    const ready = deferred();
    mcp.on((e) => e.type === 'state' && e.state === 'ready' && ready.resolve());
    const call = hangingCall(mcp, 'hang_write', 1);
    process.kill(await call.pid, 'SIGKILL');
    const error = await rejectsCode(call.result, 'MCP_OUTCOME_UNKNOWN');
    expect(McpError.isInstance(error)).toBe(true);
    expect(error.message.startsWith('outcome unknown: not retried')).toBe(true);
    expect(loggedCalls(log).filter((c) => c.tool === 'hang_write')).toHaveLength(1);
    await ready.promise;
    const [write] = await mcp.tools({ server: 'shop', allow: ['hang_write'] });
    await expect(write?.execute({ n: 2 }, { toolCallId: 'c2' })).resolves.toMatch(/^hang_write 2 answered by/);
  });

  it('a crew agent whose destructive call was in flight is told exactly "outcome unknown: not retried"', async () => {
    const log = callLog();
    const mcp = await client(log);
    const [tool] = await mcp.tools({ server: 'shop', allow: ['hang_write'] });
    // Run without asking (the destructive hint would hold the call for a person).
    const { approvalHint: _, ...write } = tool as Tool;
    const crew = {
      entryPoint: 'billing',
      agents: [{ id: 'billing', tools: ['hang_write'] }],
      routing: { signals: { billing: [{ signal: '[DONE]', target: '' }] } },
    };
    const model = scriptedModel({
      billing: [
        { content: 'Writing.', toolCalls: [{ id: 'w1', name: 'hang_write', arguments: { n: 1 } }] },
        'Not sure it happened. [DONE]',
      ],
    });
    const events: CrewEvent[] = [];
    for await (const event of new CrewExecutor({ crew, model, tools: [write] }).executeStream('write it')) {
      events.push(event);
      if (event.type === 'tool_progress') process.kill(Number(event.message), 'SIGKILL');
    }
    expect(events.at(-1)?.type).toBe('end');
    expect(model.calls[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      content: 'outcome unknown: not retried',
      toolCallId: 'w1',
    });
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.type === 'tool_result' && result.isError).toBe(true);
    expect(result?.type === 'tool_result' && McpError.isInstance(result.result) && result.result.code).toBe(
      'MCP_OUTCOME_UNKNOWN',
    );
    expect(loggedCalls(log).filter((c) => c.tool === 'hang_write')).toHaveLength(1);
  });

  it('a server that stays down ends failed after maxAttempts; waiting calls then reject MCP_CONNECT_FAILED', async () => {
    const log = callLog();
    const mcp = await connectMcp({
      servers: { shop: stdioServer(log, { MCP_TEST_ONCE: '1' }) },
      reconnect: { initialMs: 5, maxMs: 5, maxAttempts: 2 },
    });
    open.push(mcp);
    const seen = states(mcp);
    const failed = deferred();
    mcp.on((e) => e.type === 'state' && e.state === 'failed' && failed.resolve());
    const [pid] = await mcp.tools({ server: 'shop', allow: ['pid'] });
    process.kill(Number(await pid?.execute({}, { toolCallId: 'p' })), 'SIGKILL');
    await failed.promise;
    expect(mcp.state('shop')).toBe('failed');
    expect(seen.map((e) => (e.type === 'state' ? e.state : ''))).toEqual(['reconnecting', 'failed']);
    const error = await rejectsCode(pid?.execute({}, { toolCallId: 'p2' }) as Promise<unknown>, 'MCP_CONNECT_FAILED');
    expect(error.message).toContain('"shop" is failed');
  });
});

describe('a Streamable HTTP server restarted mid-call', () => {
  it('retries the read-only call, answers the destructive one "outcome unknown", and is ready again', async () => {
    const log = callLog();
    const port = await freePort();
    const env = { MCP_TEST_HANG: '1' };
    children.push(await httpServer(port, log, { env }));
    const config: McpServerConfig = { url: `http://127.0.0.1:${port}/mcp` };
    const mcp = await connectMcp({ servers: { shop: config }, reconnect });
    open.push(mcp);
    const seen = states(mcp);

    const read = hangingCall(mcp, 'hang_read', 1);
    await read.pid;
    const reconnecting = deferred();
    mcp.on((e) => e.type === 'state' && e.state === 'reconnecting' && reconnecting.resolve());
    await kill(children[0] as ChildProcess);
    await reconnecting.promise;
    children.push(await httpServer(port, log, { env }));
    await expect(read.result).resolves.toMatch(/^hang_read 1 answered by \d+$/);

    const write = hangingCall(mcp, 'hang_write', 2);
    await write.pid;
    const outcome = rejectsCode(write.result, 'MCP_OUTCOME_UNKNOWN');
    await kill(children[1] as ChildProcess);
    const error = await outcome;
    expect(error.message.startsWith('outcome unknown: not retried')).toBe(true);
    children.push(await httpServer(port, log, { env }));
    const [echo] = await mcp.tools({ server: 'shop', allow: ['echo'] });
    await expect(echo?.execute({ text: 'back' }, { toolCallId: 'e' })).resolves.toBe('back\n(echoed)');
    expect(mcp.state('shop')).toBe('ready');
    expect(loggedCalls(log).filter((c) => c.tool === 'hang_write')).toHaveLength(1);
    expect(seen.filter((e) => e.type === 'state' && e.state === 'reconnecting').length).toBeGreaterThanOrEqual(2);
  });
});
