import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AbortedError, ToolArgumentsError, type Tool, type ToolProgress } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor } from 'signalyard';
import {
  connectMcp,
  IDEMPOTENCY_META_KEY,
  McpError,
  type McpClient,
  type McpEvent,
  type McpServerConfig,
} from '@signalyard/mcp';
import { deferred, rejectsCode } from '@signalyard/test-utils';
import { callLog, freePort, httpServer, kill, loggedCalls, stdioServer } from './support.js';
import type { ChildProcess } from 'node:child_process';

const open: McpClient[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(children.splice(0).map(kill));
});

const ctx = { toolCallId: 'c1', agentId: 'billing' };

async function client(
  servers: Record<string, McpServerConfig>,
  extra: Record<string, unknown> = {},
): Promise<McpClient> {
  const mcp = await connectMcp({ servers, ...extra });
  open.push(mcp);
  return mcp;
}

/** Each mechanism against the test server, over stdio and over Streamable HTTP. */
const transports: [string, (log: string) => Promise<McpServerConfig>][] = [
  ['stdio', async (log) => stdioServer(log)],
  [
    'Streamable HTTP',
    async (log) => {
      const port = await freePort();
      children.push(await httpServer(port, log));
      return { url: `http://127.0.0.1:${port}/mcp` };
    },
  ],
];

describe.each(transports)('connectMcp over %s', (_, serverOf) => {
  it('lists the tools of a view: allow and deny globs (deny wins), a prefix, descriptions and schemas', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) });
    const all = await mcp.tools({ server: 'shop' });
    expect(all.map((t) => t.name)).toContain('get_order');
    const view = await mcp.tools({
      server: 'shop',
      allow: ['get_*', 'refund', 'echo'],
      deny: ['*cho'],
      prefix: 'shop_',
    });
    expect(view.map((t) => t.name)).toEqual(['shop_get_order', 'shop_refund']);
    const [getOrder] = view;
    expect(getOrder?.description).toBe('Look an order up by id');
    expect(getOrder?.parameters).toMatchObject({ type: 'object', properties: { id: { type: 'string' } } });
    expect(getOrder?.mcp).toEqual({ server: 'shop', tool: 'get_order' });
    expect(await mcp.tools({ server: 'shop', allow: ['nothing_*'] })).toEqual([]);
  });

  it('calls a tool: structured content as JSON, text joined, images and resources as placeholders', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) });
    const tools = new Map((await mcp.tools({ server: 'shop' })).map((t) => [t.name, t]));
    await expect(tools.get('get_order')?.execute({ id: 'A-1' }, ctx)).resolves.toEqual({
      id: 'A-1',
      status: 'shipped',
      total: 42.5,
    });
    await expect(tools.get('echo')?.execute({ text: 'hi' }, ctx)).resolves.toBe('hi\n(echoed)');
    await expect(tools.get('picture')?.execute({}, ctx)).resolves.toBe(
      'here:\n[image image/png]\n[resource link file:///orders/1.pdf (application/pdf)]\n[resource mem://note (text/plain)]',
    );
  });

  it('answers isError results and schema-invalid arguments as tool errors; the server never sees a bad call', async () => {
    const log = callLog();
    const mcp = await client({ shop: await serverOf(log) });
    const tools = new Map((await mcp.tools({ server: 'shop' })).map((t) => [t.name, t]));
    const failed = await rejectsCode(
      tools.get('fail')?.execute({ why: 'closed' }, ctx) as Promise<unknown>,
      'MCP_TOOL_FAILED',
    );
    expect(failed.message).toBe('cannot: closed');
    const bad = await rejectsCode(
      tools.get('refund')?.execute({ id: 'A-1', amount: 'ten' }, ctx) as Promise<unknown>,
      'TOOL_ARGUMENTS_INVALID',
    );
    expect(ToolArgumentsError.isInstance(bad)).toBe(true);
    expect(bad.message).toContain('amount');
    await rejectsCode(tools.get('refund')?.execute([1, 2], ctx) as Promise<unknown>, 'TOOL_ARGUMENTS_INVALID');
    expect(loggedCalls(log).map((c) => c.tool)).toEqual(['fail']);
  });

  it('cuts a result over maxResultChars with a marker saying so', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) }, { maxResultChars: 10 });
    const [big] = await mcp.tools({ server: 'shop', allow: ['big'] });
    const small = await big?.execute({ size: 10 }, ctx);
    expect(small).toBe('xxxxxxxxxx');
    const cut = (await big?.execute({ size: 25 }, ctx)) as string;
    expect(cut.startsWith('xxxxxxxxxx\n[… cut: 15 of 25 characters')).toBe(true);
  });

  it('sends ToolContext.idempotencyKey in _meta', async () => {
    const log = callLog();
    const mcp = await client({ shop: await serverOf(log) });
    const [refund] = await mcp.tools({ server: 'shop', allow: ['refund'] });
    await refund?.execute({ id: 'A-1', amount: 5 }, { ...ctx, idempotencyKey: 'r-1:tool:0' });
    await refund?.execute({ id: 'A-1', amount: 5 }, ctx);
    const [first, second] = loggedCalls(log);
    expect(first?.meta?.[IDEMPOTENCY_META_KEY]).toBe('r-1:tool:0');
    expect(second?.meta?.[IDEMPOTENCY_META_KEY]).toBeUndefined();
  });

  it('reports progress through ToolContext.progress', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) });
    const [steps] = await mcp.tools({ server: 'shop', allow: ['steps'] });
    const seen: ToolProgress[] = [];
    const controller = new AbortController();
    const progress = (p: ToolProgress): void => {
      seen.push(p);
      if (seen.length === 3) controller.abort();
    };
    await rejectsCode(
      steps?.execute({}, { ...ctx, progress, abortSignal: controller.signal }) as Promise<unknown>,
      'ABORTED',
    );
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('an abort cancels the call on the server (notifications/cancelled) and rejects ABORTED', async () => {
    const log = callLog();
    const mcp = await client({ shop: await serverOf(log) });
    const [slow] = await mcp.tools({ server: 'shop', allow: ['slow'] });
    const controller = new AbortController();
    const started = deferred();
    const call = slow?.execute({}, { ...ctx, abortSignal: controller.signal, progress: () => started.resolve() });
    await started.promise;
    controller.abort();
    await rejectsCode(call as Promise<unknown>, 'ABORTED');
    // The server saw the cancel: a later call on the same connection answers after it logged it.
    const [echo] = await mcp.tools({ server: 'shop', allow: ['echo'] });
    await echo?.execute({ text: 'after' }, ctx);
    expect(loggedCalls(log).map((c) => c.tool)).toEqual(['slow', 'slow:cancelled', 'echo']);
  });

  it('replaces the tool cache on list_changed; a tool that disappeared answers MCP_TOOL_GONE', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) });
    const changed: McpEvent[] = [];
    const first = deferred();
    mcp.on((e) => {
      if (e.type !== 'tools_changed') return;
      changed.push(e);
      first.resolve();
    });
    const [add] = await mcp.tools({ server: 'shop', allow: ['add_tool'] });
    await add?.execute({ name: 'late_tool' }, ctx);
    await first.promise;
    const [late] = await mcp.tools({ server: 'shop', allow: ['late_tool'] });
    await expect(late?.execute({}, ctx)).resolves.toBe('late_tool ran');
    const removed = deferred();
    mcp.on((e) => e.type === 'tools_changed' && removed.resolve());
    const [remove] = await mcp.tools({ server: 'shop', allow: ['remove_tool'] });
    await remove?.execute({ name: 'late_tool' }, ctx);
    await removed.promise;
    expect(await mcp.tools({ server: 'shop', allow: ['late_tool'] })).toEqual([]);
    const gone = await rejectsCode(late?.execute({}, ctx) as Promise<unknown>, 'MCP_TOOL_GONE');
    expect(gone.message).toBe('MCP_TOOL_GONE: the MCP tool "late_tool" is no longer offered by server "shop"');
    // What a crew agent's model reads: the code, in a tool error message; the run goes on.
    const model = scriptedModel({
      billing: [{ content: 'Trying.', toolCalls: [{ id: 'g1', name: 'late_tool', arguments: {} }] }, 'Gone. [DONE]'],
    });
    const crew = {
      entryPoint: 'billing',
      agents: [{ id: 'billing', tools: ['late_tool'] }],
      routing: { signals: { billing: [{ signal: '[DONE]', target: '' }] } },
    };
    const response = await new CrewExecutor({ crew, model, tools: [late as Tool] }).execute('go');
    expect(response.visibleContent).toBe('Gone.');
    expect(model.calls[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      content: 'Error: MCP_TOOL_GONE: the MCP tool "late_tool" is no longer offered by server "shop"',
      toolCallId: 'g1',
    });
    expect(changed[0]).toEqual({ type: 'tools_changed', server: 'shop' });
  });

  it('close() ends the connection: the HTTP session is terminated, calls reject', async () => {
    const log = callLog();
    const config = await serverOf(log);
    const mcp = await connectMcp({ servers: { shop: config } });
    const [echo] = await mcp.tools({ server: 'shop', allow: ['echo'] });
    await mcp.close();
    await mcp.close(); // twice is fine
    expect(mcp.state('shop')).toBe('closed');
    await rejectsCode(echo?.execute({ text: 'late' }, ctx) as Promise<unknown>, 'MCP_CONNECT_FAILED');
    if ('url' in config) expect(loggedCalls(log).map((c) => c.tool)).toEqual(['session:closed']);
  });

  it('refresh() reloads the list by hand', async () => {
    const mcp = await client({ shop: await serverOf(callLog()) });
    const events: McpEvent[] = [];
    mcp.on((e) => events.push(e));
    await mcp.refresh('shop');
    await mcp.refresh();
    expect(events).toEqual([
      { type: 'tools_changed', server: 'shop' },
      { type: 'tools_changed', server: 'shop' },
    ]);
  });
});

describe('connectMcp: views, names and one connection per server', () => {
  it('shares one connection per server between every view', async () => {
    const log = callLog();
    const mcp = await client({ a: stdioServer(log) });
    const [one] = await mcp.tools({ server: 'a', allow: ['pid'] });
    const [two] = await mcp.tools({ server: 'a', allow: ['pid'], prefix: 'other_' });
    expect(await one?.execute({}, ctx)).toBe(await two?.execute({}, ctx));
  });

  it('refuses names that clash for one agent (naming both servers) and names that are not valid', async () => {
    const mcp = await client({ a: stdioServer(callLog()), b: stdioServer(callLog()) });
    const clash = await rejectsCode(
      mcp.tools([
        { server: 'a', allow: ['echo'] },
        { server: 'b', allow: ['echo'] },
      ]),
      'MCP_CONFIG_INVALID',
    );
    expect(clash.message).toContain('server "a"');
    expect(clash.message).toContain('server "b"');
    const prefixed = await mcp.tools([
      { server: 'a', allow: ['echo'] },
      { server: 'b', allow: ['echo'], prefix: 'b_' },
    ]);
    expect(prefixed.map((t) => t.name)).toEqual(['echo', 'b_echo']);
    await rejectsCode(mcp.tools({ server: 'a', allow: ['echo'], prefix: 'with space ' }), 'MCP_CONFIG_INVALID');
    await rejectsCode(mcp.tools({ server: 'a', allow: ['echo'], prefix: 'p'.repeat(64) }), 'MCP_CONFIG_INVALID');
  });

  it('MCP_SERVER_UNKNOWN for a view or refresh naming an unknown server; MCP_CONFIG_INVALID for a malformed view', async () => {
    const mcp = await client({ a: stdioServer(callLog()) });
    const unknown = await rejectsCode(mcp.tools({ server: 'crm' }), 'MCP_SERVER_UNKNOWN');
    expect(McpError.isInstance(unknown)).toBe(true);
    expect(unknown.message).toContain('"crm"');
    await rejectsCode(mcp.refresh('crm'), 'MCP_SERVER_UNKNOWN');
    await rejectsCode(mcp.tools({ server: 'a', allow: 'echo' } as never), 'MCP_CONFIG_INVALID');
    await rejectsCode(mcp.tools({ server: 'a', colour: 'red' } as never), 'MCP_CONFIG_INVALID');
    await rejectsCode(mcp.tools(null as never), 'MCP_CONFIG_INVALID');
  });

  it('approval hints from annotations: ask for destructive, none for non-destructive, allow for read-only only when trusted', async () => {
    const log = callLog();
    const mcp = await client({ plain: stdioServer(log), trusted: { ...stdioServer(log), trusted: true } });
    const hints = async (server: string) =>
      Object.fromEntries(
        (await mcp.tools({ server, allow: ['get_order', 'refund', 'archive_order'] })).map((t) => [
          t.name,
          t.approvalHint,
        ]),
      );
    expect(await hints('plain')).toEqual({ get_order: undefined, refund: 'ask', archive_order: undefined });
    expect(await hints('trusted')).toEqual({ get_order: 'allow', refund: 'ask', archive_order: undefined });
    const strict = await client({ s: stdioServer(log) }, { defaultApproval: 'ask-unless-read-only' });
    expect(
      Object.fromEntries(
        (await strict.tools({ server: 's', allow: ['get_order', 'archive_order'] })).map((t) => [
          t.name,
          t.approvalHint,
        ]),
      ),
    ).toEqual({ get_order: undefined, archive_order: 'ask' });
  });
});

describe('connectMcp: bad options and failed connections', () => {
  it.each<[string, unknown, string]>([
    ['no options', undefined, 'connectMcp needs options'],
    ['no servers', {}, 'servers'],
    ['an empty servers record', { servers: {} }, 'servers'],
    ['an unknown option', { servers: { a: { command: 'x' } }, retries: 3 }, '"retries"'],
    ['a server with neither command nor url', { servers: { a: {} } }, 'servers.a'],
    ['a server with both', { servers: { a: { command: 'x', url: 'http://h' } } }, 'exactly one'],
    ['a non-http url', { servers: { a: { url: 'ftp://h/mcp' } } }, 'servers.a.url'],
    ['bad args', { servers: { a: { command: 'x', args: [1] } } }, 'servers.a.args'],
    ['bad headers', { servers: { a: { url: 'http://h', headers: { a: 1 } } } }, 'servers.a.headers'],
    ['a zero timeout', { servers: { a: { command: 'x' } }, callTimeoutMs: 0 }, 'callTimeoutMs'],
    ['bad reconnect', { servers: { a: { command: 'x' } }, reconnect: { initialMs: -1 } }, 'reconnect.initialMs'],
    ['bad defaultApproval', { servers: { a: { command: 'x' } }, defaultApproval: 'never' }, 'defaultApproval'],
    ['an abortSignal that is not one', { servers: { a: { command: 'x' } }, abortSignal: true }, 'abortSignal'],
  ])('MCP_CONFIG_INVALID for %s', async (_, options, mentions) => {
    const error = await rejectsCode(connectMcp(options as never), 'MCP_CONFIG_INVALID');
    expect(error.message).toContain(mentions);
  });

  it('MCP_CONNECT_FAILED naming the server when it cannot be started or reached', async () => {
    const error = await rejectsCode(
      connectMcp({
        servers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } },
        connectTimeoutMs: 5000,
      }),
      'MCP_CONNECT_FAILED',
    );
    expect(error.message).toContain('"broken"');
    const port = await freePort();
    await rejectsCode(connectMcp({ servers: { down: { url: `http://127.0.0.1:${port}/mcp` } } }), 'MCP_CONNECT_FAILED');
  });
});

describe('connectMcp({ abortSignal })', () => {
  it('rejects ABORTED at once for a signal aborted already, starting nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signalyard-mcp-abort-'));
    const marker = join(dir, 'started');
    const reason = new Error('not now');
    const error = await rejectsCode(
      connectMcp({
        servers: {
          a: { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`] },
        },
        abortSignal: AbortSignal.abort(reason),
      }),
      'ABORTED',
    );
    expect(AbortedError.isInstance(error)).toBe(true);
    expect(error.cause).toBe(reason);
    expect(existsSync(marker)).toBe(false);
  });

  it('an abort while a stdio server starts ends its child and rejects ABORTED', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signalyard-mcp-abort-'));
    const pidFile = join(dir, 'pid');
    // Never answers initialize: the handshake hangs until the abort.
    const silent = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`;
    const controller = new AbortController();
    const connecting = connectMcp({
      servers: { silent: { command: process.execPath, args: ['-e', silent] }, ok: stdioServer(callLog()) },
      connectTimeoutMs: 60_000,
      abortSignal: controller.signal,
    });
    const pid = await waitFor(() => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    controller.abort();
    await rejectsCode(connecting, 'ABORTED');
    await waitFor(() => (alive(pid) ? undefined : true));
  });

  it('an abort while an HTTP server does not answer closes the request and rejects ABORTED', async () => {
    const sockets = new Set<Socket>();
    const connected = deferred();
    const closed = deferred();
    const server = createServer((socket) => {
      sockets.add(socket);
      connected.resolve();
      socket.on('close', () => closed.resolve());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const controller = new AbortController();
      const connecting = connectMcp({
        servers: { hung: { url: `http://127.0.0.1:${port}/mcp` } },
        connectTimeoutMs: 60_000,
        abortSignal: controller.signal,
      });
      await connected.promise;
      controller.abort();
      await rejectsCode(connecting, 'ABORTED');
      await closed.promise;
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('an abort after connectMcp resolved does nothing: the client keeps working', async () => {
    const controller = new AbortController();
    const mcp = await client({ a: stdioServer(callLog()) }, { abortSignal: controller.signal });
    controller.abort();
    const [echo] = await mcp.tools({ server: 'a', allow: ['echo'] });
    await expect(echo?.execute({ text: 'still' }, ctx)).resolves.toBe('still\n(echoed)');
    expect(mcp.state('a')).toBe('ready');
  });
});

/** Polls `probe` until it returns a value (the test's own timeout bounds the wait). */
async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('McpError', () => {
  it('isInstance recognises its own errors by marker, and no other error', () => {
    const error = new McpError({ code: 'MCP_TOOL_GONE', message: 'gone', server: 's', tool: 't' });
    expect(McpError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MCP_TOOL_GONE', server: 's', tool: 't', name: 'McpError' });
    expect(McpError.isInstance(new ToolArgumentsError({ toolName: 'x', issues: [{ path: '', message: 'bad' }] }))).toBe(
      false,
    );
    expect(McpError.isInstance(new Error('gone'))).toBe(false);
    expect(McpError.isInstance(null)).toBe(false);
  });
});
