// serveMcp: agents of a Runner as MCP tools, called by the SDK's own Client (HTTP and stdio) and
// by connectMcp (a crew calling another crew).
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChatModel, ChatResponse, ChatStreamPart, Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, createRunner, crewEngine, type Runner, type TurnResult } from 'signalyard';
import {
  connectMcp,
  serveMcp,
  type McpClient,
  type McpServableRunner,
  type McpTurnAnswer,
  type ServedMcp,
} from '@signalyard/mcp';
import { deferred, rejectsCode, type Deferred } from '@signalyard/test-utils';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const crewOf = (tools: string[] = []) => ({
  entryPoint: 'support',
  agents: [{ id: 'support', tools }],
  routing: { signals: { support: [{ signal: '[DONE]', target: '' }] } },
});

/** A model that streams `parts` as deltas, waiting on `gate` (when given) before it finishes. */
function streamingModel(parts: string[], gate?: Deferred): ChatModel {
  return {
    async generate() {
      return { content: parts.join('') };
    },
    async *stream(): AsyncIterable<ChatStreamPart> {
      for (const delta of parts) yield { type: 'text-delta', delta };
      await gate?.promise;
      yield { type: 'finish', response: { content: parts.join('') } };
    },
  };
}

/** A runner whose agent `support` answers every turn with `result`, streaming nothing. */
const supportReplying = (result: TurnResult): Runner =>
  createRunner({ agents: [{ id: 'support', engine: { turn: () => Promise.resolve(result) } }] });

async function serve(runner: Runner, opts: { token?: string; approvals?: boolean } = {}): Promise<ServedMcp> {
  const served = await serveMcp(runner, {
    agents: ['support'],
    http: { port: 0, ...(opts.token !== undefined && { token: opts.token }) },
    ...(opts.approvals !== undefined && { approvals: opts.approvals }),
  });
  closers.push(() => served.close());
  return served;
}

async function sdkClient(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), headers === undefined ? undefined : { requestInit: { headers } }),
  );
  closers.push(() => client.close());
  return client;
}

const structured = (result: unknown): McpTurnAnswer =>
  (result as CallToolResult).structuredContent as unknown as McpTurnAnswer;
const textOf = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;

describe('serveMcp over Streamable HTTP, called by the SDK Client', () => {
  it('serves ask_<agent>: the visible reply as text, { session, status, output }, and the session continues', async () => {
    const model = scriptedModel(
      (request) => `Reply to ${request.messages.filter((m) => m.role === 'user').length} messages [DONE]`,
    );
    const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crewOf(), { model }) }] });
    const served = await serve(runner);
    const client = await sdkClient(served.url as string);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask_support']);
    const first = await client.callTool({ name: 'ask_support', arguments: { text: 'hello' } });
    expect(textOf(first)).toBe('Reply to 1 messages');
    const { session, status, output } = structured(first);
    expect(status).toBe('completed');
    expect(output).toBe('Reply to 1 messages');
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const second = await client.callTool({ name: 'ask_support', arguments: { text: 'again', session } });
    expect(textOf(second)).toBe('Reply to 2 messages');
    const view = await runner.session(`agent:support:mcp:dm:${session}`);
    expect(view?.history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hello', 'again']);
  });

  it('sends streamed deltas as progress notifications, and a cancel ends only the wait', async () => {
    const gate = deferred();
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: streamingModel(['Hello ', 'there.'], gate) }) }],
    });
    const client = await sdkClient((await serve(runner)).url as string);
    const messages: string[] = [];
    const two = deferred();
    const controller = new AbortController();
    const call = client.callTool({ name: 'ask_support', arguments: { text: 'hi', session: 'desk-1' } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        messages.push(p.message ?? '');
        if (messages.join('') === 'Hello there.') two.resolve();
      },
    });
    await two.promise;
    expect(messages.length).toBeGreaterThanOrEqual(2);
    controller.abort();
    await expect(call).rejects.toThrow();
    // The turn goes on after the client stopped waiting, and is saved.
    const saved = deferred();
    runner.on((e) => e.type === 'outcome' && saved.resolve());
    gate.resolve();
    await saved.promise;
    const view = await runner.session('agent:support:mcp:dm:desk-1');
    expect(view?.history.map((m) => m.content)).toEqual(['hi', 'Hello there.']);
  });

  it('answers a paused turn at once with its pending approvals; approve_<agent> resumes it and the tool runs once', async () => {
    const runs: unknown[] = [];
    const refund: Tool = {
      name: 'refund',
      parameters: { type: 'object' },
      needsApproval: true,
      execute: async (args) => (runs.push(args), 'refunded'),
    };
    const reply: ChatResponse = {
      content: 'Refunding.',
      toolCalls: [{ id: 'm1', name: 'refund', arguments: { amount: 9 } }],
    };
    const model = scriptedModel({ support: [reply, 'Done. [DONE]'] });
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(['refund']), { model, tools: [refund] }) }],
    });
    const client = await sdkClient((await serve(runner, { approvals: true })).url as string);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['ask_support', 'approve_support']);
    const paused = await client.callTool({ name: 'ask_support', arguments: { text: 'refund me', session: 's1' } });
    const answer = structured(paused);
    expect(answer.status).toBe('paused');
    expect(answer.pendingApprovals).toHaveLength(1);
    const id = answer.pendingApprovals?.[0] as string;
    expect(typeof id).toBe('string');
    expect(textOf(paused)).toContain(`awaiting approval: ${id} refund`);
    expect(runs).toEqual([]);
    const done = await client.callTool({
      name: 'approve_support',
      arguments: { session: 's1', decisions: [{ id, approved: true }] },
    });
    expect(structured(done)).toMatchObject({ session: 's1', status: 'completed', output: 'Done.' });
    expect(runs).toEqual([{ amount: 9 }]);
  });

  it('checks the bearer token: 401 without it, served with it', async () => {
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: scriptedModel(['ok [DONE]']) }) }],
    });
    const served = await serve(runner, { token: 's3cret' });
    await expect(sdkClient(served.url as string)).rejects.toThrow(/unauthorized/);
    await expect(sdkClient(served.url as string, { authorization: 'Bearer wrong' })).rejects.toThrow(/unauthorized/);
    const client = await sdkClient(served.url as string, { authorization: 'Bearer s3cret' });
    expect(textOf(await client.callTool({ name: 'ask_support', arguments: { text: 'x' } }))).toBe('ok');
  });

  it('takes any session id SessionKey.directMessage takes, and echoes it as sent', async () => {
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: scriptedModel(() => 'ok [DONE]') }) }],
    });
    const client = await sdkClient((await serve(runner)).url as string);
    for (const [session, key] of [
      ['a:b', 'agent:support:mcp:dm:a%3ab'],
      ['User@Example.com', 'agent:support:mcp:dm:user@example.com'],
      ['Desk 1', 'agent:support:mcp:dm:desk 1'],
      ['é', 'agent:support:mcp:dm:é'],
    ]) {
      const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x', session } });
      expect(structured(result)).toEqual({ session, status: 'completed', output: 'ok' });
      expect((await runner.session(key as string))?.history[0]?.content).toBe('x');
    }
  });

  it.each([
    ['an empty id', '', 'expected a non-empty id'],
    ['a blank id', '   ', 'expected a non-empty id'],
    ['a control character', 'a\u001bb', 'control character U+001B'],
    ['an id over the key cap', 'x'.repeat(1100), '1,024-character cap'],
  ])('refuses %s as a tool error naming the value', async (_, session, problem) => {
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: scriptedModel(['ok [DONE]']) }) }],
    });
    const client = await sdkClient((await serve(runner, { approvals: true })).url as string);
    for (const name of ['ask_support', 'approve_support']) {
      const args =
        name === 'ask_support' ? { text: 'x', session } : { session, decisions: [{ id: 'a1', approved: true }] };
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`Invalid session ${JSON.stringify(session.slice(0, 200)).slice(0, -1)}`);
      expect(textOf(result)).toContain(problem);
    }
  });

  it("answers with the outcome's reply when the engine does not stream", async () => {
    const runner = supportReplying({
      output: 'Plain reply.',
      messages: [{ role: 'assistant', content: 'Plain reply.' }],
    });
    const client = await sdkClient((await serve(runner)).url as string);
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x', session: 's' } });
    expect(textOf(result)).toBe('Plain reply.');
    expect(structured(result)).toEqual({ session: 's', status: 'completed', output: 'Plain reply.' });
  });

  it('answers with a crew reply (markers hidden) when the crew model does not stream', async () => {
    const model = scriptedModel(['Hello from a generate-only model. [DONE]']);
    const generateOnly: ChatModel = { generate: (req) => model.generate(req) };
    const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: generateOnly }) }] });
    const client = await sdkClient((await serve(runner)).url as string);
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x' } });
    expect(textOf(result)).toBe('Hello from a generate-only model.');
    expect(structured(result).output).toBe('Hello from a generate-only model.');
  });

  it("answers with the reply the turn's save recorded when the output carries none (an engine returning messages)", async () => {
    const runner = supportReplying({
      output: { tokens: 12 },
      messages: [
        { role: 'assistant', content: '', toolCalls: [{ id: 't', name: 'x', arguments: {} }] },
        { role: 'tool', content: 'ok', toolCallId: 't' },
        { role: 'assistant', content: 'From the messages.' },
      ],
    });
    const client = await sdkClient((await serve(runner)).url as string);
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x', session: 's' } });
    expect(textOf(result)).toBe('From the messages.');
    expect(structured(result)).toEqual({ session: 's', status: 'completed', output: 'From the messages.' });
  });

  it("a runner without history: a non-streaming engine's messages give no reply (status only)", async () => {
    const runner = supportReplying({ output: { n: 1 }, messages: [{ role: 'assistant', content: 'hidden' }] });
    const bare: McpServableRunner = {
      streamDispatch: (key, s) => runner.streamDispatch(key, s),
      streamApprove: (key, d, o) => runner.streamApprove(key, d, o),
    };
    const served = await serveMcp(bare, { agents: ['support'], http: { port: 0 } });
    closers.push(() => served.close());
    const client = await sdkClient(served.url as string);
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x', session: 's' } });
    expect(structured(result)).toEqual({ session: 's', status: 'completed' });
  });

  it('answers nothing but the status when a non-streaming engine says nothing', async () => {
    const runner = createRunner({
      agents: [{ id: 'support', engine: { turn: () => Promise.resolve({ output: { n: 1 } }) } }],
    });
    const client = await sdkClient((await serve(runner)).url as string);
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'x', session: 's' } });
    expect(textOf(result)).toBe('');
    expect(structured(result)).toEqual({ session: 's', status: 'completed' });
  });

  it.each<[string, unknown]>([
    ['no agents', { agents: [], http: { port: 0 } }],
    ['a non-canonical agent id', { agents: ['Support Desk'], http: { port: 0 } }],
    ['neither http nor stdio', { agents: ['support'] }],
    ['both http and stdio', { agents: ['support'], http: { port: 0 }, stdio: true }],
    ['a bad port', { agents: ['support'], http: { port: 70000 } }],
    ['an unknown option', { agents: ['support'], http: { port: 0 }, cors: true }],
  ])('MCP_CONFIG_INVALID for %s', async (_, options) => {
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: scriptedModel([]) }) }],
    });
    await rejectsCode(serveMcp(runner, options as never), 'MCP_CONFIG_INVALID');
    await rejectsCode(serveMcp({} as never, { agents: ['support'], http: { port: 0 } }), 'MCP_CONFIG_INVALID');
  });
});

describe('serveMcp over stdio, called by the SDK Client', () => {
  it('answers ask_<agent> from a child process', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/serve-stdio.ts', import.meta.url));
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', '--conditions', '@signalyard/source', fixture],
      }),
    );
    closers.push(() => client.close());
    const result = await client.callTool({ name: 'ask_support', arguments: { text: 'ping', session: 'one' } });
    expect(textOf(result)).toBe('You said: ping');
    expect(structured(result)).toEqual({ session: 'one', status: 'completed', output: 'You said: ping' });
  });
});

describe('a crew calling another crew over MCP (connectMcp against serveMcp)', () => {
  it("the front desk's agent asks the support crew's agent through ask_support", async () => {
    const backModel = scriptedModel({ support: ['Order A-7 shipped yesterday. [DONE]'] });
    const back = createRunner({ agents: [{ id: 'support', engine: crewEngine(crewOf(), { model: backModel }) }] });
    const served = await serve(back);
    const mcp: McpClient = await connectMcp({ servers: { desk: { url: served.url as string } } });
    closers.push(() => mcp.close());
    const front = {
      entryPoint: 'front',
      agents: [{ id: 'front', mcp: [{ server: 'desk', allow: ['ask_*'], prefix: 'desk_' }] }],
      routing: { signals: { front: [{ signal: '[DONE]', target: '' }] } },
    };
    const frontModel = scriptedModel({
      front: [
        {
          content: 'Asking support.',
          toolCalls: [{ id: 'q1', name: 'desk_ask_support', arguments: { text: 'Where is A-7?' } }],
        },
        'Support says it shipped. [DONE]',
      ],
    });
    const response = await new CrewExecutor({ crew: front, model: frontModel, mcp }).execute('where is my order?');
    const answer = JSON.parse(response.state.history.find((m) => m.role === 'tool')?.content ?? '{}') as McpTurnAnswer;
    expect(answer).toMatchObject({ status: 'completed', output: 'Order A-7 shipped yesterday.' });
    expect(frontModel.calls[0]?.tools?.map((t) => t.name)).toEqual(['desk_ask_support']);
    const view = await back.session(`agent:support:mcp:dm:${answer.session}`);
    expect(view?.history[0]?.content).toBe('Where is A-7?');
  });
});
