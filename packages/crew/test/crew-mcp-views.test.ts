// Agents' crew.yaml `mcp:` views resolved through the executor's McpToolSource at the start of
// each run, and tools reporting progress as `tool_progress` events.
import { describe, expect, it } from 'vitest';
import { SignalyardError, type ChatResponse, type McpToolSource, type McpToolView, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, CrewRunError, type CrewConfigInput, type CrewEvent } from '@signalyard/crew';
import { collect, rejectsCode } from '@signalyard/test-utils';

const crew: CrewConfigInput = {
  entryPoint: 'billing',
  agents: [{ id: 'billing', tools: ['own'], mcp: [{ server: 'crm', allow: ['get_*'], prefix: 'crm_' }] }],
  routing: { signals: { billing: [{ signal: '[DONE]', target: '' }] } },
};
const call = (name: string, args: unknown = {}): ChatResponse => ({
  content: 'working',
  toolCalls: [{ id: `c-${name}`, name, arguments: args }],
});
const tool = (name: string, execute: Tool['execute'] = async () => `${name} ran`): Tool => ({
  name,
  parameters: { type: 'object' },
  execute,
});

/** A source whose tool list can change between runs, recording the views it was asked for. */
function source(names: string[]): McpToolSource & { asked: unknown[]; names: string[] } {
  const s = {
    asked: [] as unknown[],
    names,
    async tools(views: McpToolView | readonly McpToolView[]) {
      s.asked.push(views);
      return s.names.map((n) => ({ ...tool(n), mcp: { server: 'crm', tool: n.replace('crm_', '') } }));
    },
  };
  return s;
}

describe('CrewExecutor with mcp: views', () => {
  it('asks the source for the views at the start of every run and offers its tools after the own ones', async () => {
    const mcp = source(['crm_get_order']);
    const model = scriptedModel({ billing: [call('crm_get_order'), 'ok [DONE]', 'again [DONE]'] });
    const executor = new CrewExecutor({ crew, model, tools: [tool('own')], mcp });
    const first = await executor.execute('hi');
    expect(first.state.history.find((m) => m.role === 'tool')?.content).toBe('crm_get_order ran');
    expect(model.calls[0]?.tools?.map((t) => t.name)).toEqual(['own', 'crm_get_order']);
    mcp.names = ['crm_get_order', 'crm_get_invoice'];
    await executor.execute('more', { state: first.state });
    expect(model.calls[2]?.tools?.map((t) => t.name)).toEqual(['own', 'crm_get_order', 'crm_get_invoice']);
    expect(mcp.asked).toEqual([crew.agents[0]?.mcp, crew.agents[0]?.mcp]);
  });

  it('tool_start and tool_result carry the MCP origin; a tool named like an own tool ends the run MCP_CONFIG_INVALID', async () => {
    const mcp = source(['crm_get_order']);
    const model = scriptedModel({ billing: [call('crm_get_order'), 'ok [DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model, tools: [tool('own')], mcp }).executeStream('hi'));
    const starts = events.filter((e): e is Extract<CrewEvent, { type: 'tool_start' }> => e.type === 'tool_start');
    expect(starts[0]?.mcp).toEqual({ server: 'crm', tool: 'get_order' });
    const clash = source(['own']);
    const end = (
      await collect(new CrewExecutor({ crew, model, tools: [tool('own')], mcp: clash }).executeStream('hi'))
    ).at(-1);
    expect(end?.type === 'error' && end.error.code).toBe('MCP_CONFIG_INVALID');
    expect(end?.type === 'error' && end.error.message).toContain(
      'the MCP tool "own" of server "crm" is named like one of its own tools',
    );
  });

  it('a tool named like a transfer tool ends the run MCP_CONFIG_INVALID', async () => {
    const twoAgents: CrewConfigInput = {
      ...crew,
      agents: [...crew.agents, { id: 'refunds' }],
      routing: {
        signals: {
          billing: [
            { signal: '[DONE]', target: '' },
            { signal: '[TO_REFUNDS]', target: 'refunds' },
          ],
        },
      },
      settings: { handoffMode: 'both' },
    };
    const transfer = 'transfer_to_refunds';
    const clash = source([transfer]);
    const error = await rejectsCode(
      new CrewExecutor({ crew: twoAgents, model: scriptedModel(['x']), tools: [tool('own')], mcp: clash }).execute(
        'hi',
      ),
      'MCP_CONFIG_INVALID',
    );
    expect(error.message).toContain(
      `the MCP tool ${JSON.stringify(transfer)} of server "crm" is named like its transfer tool`,
    );
  });

  it("a source's MCP_SERVER_UNKNOWN / MCP_CONFIG_INVALID end the run with that code (the source's error the cause); other errors CREW_MCP_FAILED", async () => {
    const failing = (error: Error): McpToolSource => ({ tools: () => Promise.reject(error) });
    const model = scriptedModel(['x']);
    for (const code of ['MCP_SERVER_UNKNOWN', 'MCP_CONFIG_INVALID']) {
      const cause = new SignalyardError({ code, message: `it failed with ${code}` });
      const error = await rejectsCode(
        new CrewExecutor({ crew, model, tools: [tool('own')], mcp: failing(cause) }).execute('hi'),
        code,
      );
      expect(CrewRunError.isInstance(error) && error.agentId).toBe('billing');
      expect(error.cause).toBe(cause);
      expect(error.message).toContain(`it failed with ${code}`);
    }
    for (const cause of [new SignalyardError({ code: 'MCP_CONNECT_FAILED', message: 'down' }), new Error('boom')]) {
      const error = await rejectsCode(
        new CrewExecutor({ crew, model, tools: [tool('own')], mcp: failing(cause) }).execute('hi'),
        'CREW_MCP_FAILED',
      );
      expect(error.cause).toBe(cause);
    }
  });

  it('answers a call failing MCP_OUTCOME_UNKNOWN with the bare "outcome unknown: not retried"; other failures "Error: …"', async () => {
    const unknown = new SignalyardError({
      code: 'MCP_OUTCOME_UNKNOWN',
      message: 'outcome unknown: not retried (the connection to MCP server "crm" dropped while "own" ran)',
    });
    for (const [thrown, content] of [
      [unknown, 'outcome unknown: not retried'],
      [new SignalyardError({ code: 'MCP_CALL_TIMEOUT', message: 'no answer' }), 'Error: no answer'],
    ] as const) {
      const model = scriptedModel({ billing: [call('own'), 'ok [DONE]'] });
      const failing = tool('own', () => Promise.reject(thrown));
      const events = await collect(
        new CrewExecutor({ crew, model, tools: [failing], mcp: source([]) }).executeStream('hi'),
      );
      expect(model.calls[1]?.messages.at(-1)).toEqual({ role: 'tool', content, toolCallId: 'c-own' });
      const result = events.find((e) => e.type === 'tool_result');
      expect(result?.type === 'tool_result' && result.result).toBe(thrown);
    }
  });

  it("reports a tool's progress as tool_progress events, malformed reports dropped", async () => {
    const slow = tool('own', async (_args, ctx) => {
      ctx.progress?.({ progress: 1, total: 2, message: 'half' });
      ctx.progress?.({ progress: Number.NaN });
      ctx.progress?.({ progress: 2 });
      return 'done';
    });
    const model = scriptedModel({ billing: [call('own'), 'ok [DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model, tools: [slow], mcp: source([]) }).executeStream('hi'));
    expect(events.filter((e) => e.type === 'tool_progress')).toEqual([
      {
        type: 'tool_progress',
        agentId: 'billing',
        toolCallId: 'c-own',
        toolName: 'own',
        progress: 1,
        total: 2,
        message: 'half',
      },
      { type: 'tool_progress', agentId: 'billing', toolCallId: 'c-own', toolName: 'own', progress: 2 },
    ]);
  });
});
