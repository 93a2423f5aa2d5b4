// MCP tools in crews and through a Runner: crew.yaml `mcp:` views resolved by crewEngine,
// server-everything driven end to end by a crew agent, and an approval-gated MCP tool paused in
// one runner and approved from another, called once.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, SignalKind, signal, type ChatResponse, type RunnerEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, createRunner, crewEngine, parseCrewConfig } from 'signalyard';
import { McpError, connectMcp, type McpClient } from '@signalyard/mcp';
import { rejectsCode } from '@signalyard/test-utils';
import { callLog, loggedCalls, stdioServer } from './support.js';

const open: McpClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const reply = (content: string, ...calls: [string, string, unknown][]): ChatResponse => ({
  content,
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
});
const say = (text: string) => signal(SignalKind.UserMessage, text);

const CREW_YAML = `
entry_point: billing
agents:
  - id: billing
    system_prompt: You answer billing questions.
    mcp:
      - server: shop
        allow: ['get_*', refund]
        prefix: shop_
  - id: greeter
routing:
  signals:
    billing:
      - signal: '[DONE]'
        target: ''
`;

describe('crew.yaml mcp: views through crewEngine', () => {
  it("offers an agent only its view's tools and runs them over the shared connection", async () => {
    const log = callLog();
    const mcp = await connectMcp({ servers: { shop: stdioServer(log) } });
    open.push(mcp);
    const model = scriptedModel({
      billing: [reply('Looking.', ['m1', 'shop_get_order', { id: 'A-7' }]), 'It shipped. [DONE]'],
    });
    const runner = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(parseCrewConfig(CREW_YAML), { model, mcp }) }],
    });
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    const outcome = await runner.dispatch('agent:desk:main', say('where is A-7?'));
    expect(outcome.status).toBe('completed');
    const [first, second] = model.calls;
    expect(first?.tools?.map((t) => t.name)).toEqual(['shop_get_order', 'shop_refund']);
    expect(second?.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: '{"id":"A-7","status":"shipped","total":42.5}',
    });
    expect(loggedCalls(log).map((c) => [c.tool, c.args])).toEqual([['get_order', { id: 'A-7' }]]);
    const toolEvents = events
      .filter((e) => e.type === 'engine_event')
      .map((e) => (e as { event: { type: string } }).event.type);
    expect(toolEvents).toEqual(expect.arrayContaining(['tool_start', 'tool_result']));
    const start = events.find((e) => e.type === 'engine_event' && e.event.type === 'tool_start');
    expect(start?.type === 'engine_event' && start.event.mcp).toEqual({ server: 'shop', tool: 'get_order' });
  });

  it('refuses an executor without an mcp source for a crew with views, and a source that is not one', () => {
    const crew = parseCrewConfig(CREW_YAML);
    const model = scriptedModel(['x']);
    expect(() => new CrewExecutor({ crew, model })).toThrow(/crew\.agents\[0\]\.mcp.*"shop"/s);
    expect(() => new CrewExecutor({ crew, model, mcp: {} as never })).toThrow(/McpToolSource/);
  });

  it('ends the run MCP_SERVER_UNKNOWN when a view names an unknown server (CrewExecutor and Runner alike)', async () => {
    const mcp = await connectMcp({ servers: { other: stdioServer(callLog()) } });
    open.push(mcp);
    const crew = parseCrewConfig(CREW_YAML);
    const executor = new CrewExecutor({ crew, model: scriptedModel(['x']), mcp });
    const error = await rejectsCode(executor.execute('hi'), 'MCP_SERVER_UNKNOWN');
    expect(error.message).toContain('Unknown MCP server "shop"');
    expect(McpError.isInstance(error.cause) && error.cause.server).toBe('shop');
    const runner = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crew, { model: scriptedModel(['x']), mcp }) }],
    });
    const outcome = await runner.dispatch('agent:desk:main', say('hi'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('MCP_SERVER_UNKNOWN');
    expect(outcome.error?.message).toContain('Unknown MCP server "shop"');
  });

  it('ends the run MCP_CONFIG_INVALID, naming both servers, when two views give tools named alike', async () => {
    const mcp = await connectMcp({ servers: { shop: stdioServer(callLog()), store: stdioServer(callLog()) } });
    open.push(mcp);
    const crew = parseCrewConfig(
      CREW_YAML.replace(
        '        prefix: shop_\n',
        '        prefix: shop_\n      - server: store\n        allow: [refund]\n        prefix: shop_\n',
      ),
    );
    const executor = new CrewExecutor({ crew, model: scriptedModel(['x']), mcp });
    const error = await rejectsCode(executor.execute('hi'), 'MCP_CONFIG_INVALID');
    expect(error.message).toMatch(/"shop_refund".*server "shop".*server "store"/);
    const runner = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crew, { model: scriptedModel(['x']), mcp }) }],
    });
    const outcome = await runner.dispatch('agent:desk:main', say('hi'));
    expect(outcome.error?.code).toBe('MCP_CONFIG_INVALID');
    expect(outcome.error?.message).toMatch(/server "shop".*server "store"/);
  });

  it('rejects malformed mcp: views in crew.yaml with their paths', () => {
    const bad = CREW_YAML.replace("allow: ['get_*', refund]", 'allow: get_order\n        colour: red');
    expect(() => parseCrewConfig(bad)).toThrow(/agents\[0\]\.mcp\[0\]\.allow[\s\S]*agents\[0\]\.mcp\[0\]\.colour/);
  });
});

describe('an approval-gated MCP tool through a Runner', () => {
  it('pauses on the destructive tool, is approved from another runner over the same store, and calls it once', async () => {
    const log = callLog();
    const mcp = await connectMcp({ servers: { shop: stdioServer(log) } });
    open.push(mcp);
    const store = new MemoryCheckpointStore();
    const crew = parseCrewConfig(CREW_YAML);
    const script = [reply('Refunding.', ['m1', 'shop_refund', { id: 'A-7', amount: 30 }]), 'Refunded. [DONE]'];
    const first = createRunner({
      store,
      agents: [{ id: 'desk', engine: crewEngine(crew, { model: scriptedModel({ billing: script }), mcp }) }],
    });
    const asked = await first.dispatch('agent:desk:main', say('refund A-7'));
    expect(asked.status).toBe('paused');
    const [pending] = asked.pendingApprovals ?? [];
    expect(pending).toMatchObject({ toolName: 'shop_refund', arguments: { id: 'A-7', amount: 30 } });
    expect(loggedCalls(log)).toEqual([]);
    await first.close();

    // The second runner's model starts after the held reply: only the answer to the tool result is left.
    const second = createRunner({
      store,
      agents: [
        { id: 'desk', engine: crewEngine(crew, { model: scriptedModel({ billing: ['Refunded. [DONE]'] }), mcp }) },
      ],
    });
    const done = await second.approve('agent:desk:main', [{ id: pending?.id ?? '', approved: true }], { by: 'lead' });
    expect(done.status).toBe('completed');
    const again = await second.approve('agent:desk:main', [{ id: pending?.id ?? '', approved: true }]);
    expect(again.status).toBe('rejected');
    expect(loggedCalls(log).map((c) => c.tool)).toEqual(['refund']);
    const view = await second.session('agent:desk:main');
    expect(view?.history.find((m) => m.role === 'tool')?.content).toBe('refunded 30 on A-7');
  });
});

describe('@modelcontextprotocol/server-everything, driven by a crew agent', () => {
  it('lists its tools and calls them end to end (text, an image placeholder), with its annotations as hints', async () => {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
    const mcp = await connectMcp({ servers: { everything: { command: process.execPath, args: [entry, 'stdio'] } } });
    open.push(mcp);
    const tools = await mcp.tools({
      server: 'everything',
      allow: ['echo', 'get-sum', 'get-tiny-image'],
      prefix: 'ev_',
    });
    expect(tools.map((t) => t.name).sort()).toEqual(['ev_echo', 'ev_get-sum', 'ev_get-tiny-image']);
    const model = scriptedModel({
      helper: [
        reply(
          'Working.',
          ['a', 'ev_get-sum', { a: 2, b: 3 }],
          ['b', 'ev_echo', { message: 'hello' }],
          ['c', 'ev_get-tiny-image', {}],
        ),
        'Done. [DONE]',
      ],
    });
    const crew = {
      entryPoint: 'helper',
      agents: [
        { id: 'helper', mcp: [{ server: 'everything', allow: ['echo', 'get-sum', 'get-tiny-image'], prefix: 'ev_' }] },
      ],
      routing: { signals: { helper: [{ signal: '[DONE]', target: '' }] } },
    };
    const response = await new CrewExecutor({ crew, model, mcp }).execute('add 2 and 3');
    expect(response.reason).toBe('terminated_by_signal');
    const results = response.state.history.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toContain('The sum of 2 and 3 is 5.');
    expect(results[1]).toContain('hello');
    expect(results[2]).toContain('[image image/png]');
    expect(tools.find((t) => t.name === 'ev_get-sum')?.approvalHint).toBeUndefined();
  });
});
