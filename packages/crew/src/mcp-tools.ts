import type { McpToolSource, Tool, ToolSpec } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledCrew } from './compiled-crew.js';
import { CrewRunError } from './errors/crew-run-error.js';
import type { CrewState } from './crew-state.js';

/** The tools one agent's turns offer and run: its own (a `CompiledAgent` is one), or with its MCP tools added for one run. @internal */
export interface AgentTools {
  readonly tools: ReadonlyMap<string, Tool>;
  /** What a parallel member's requests carry (its own tools); undefined when there are none. */
  readonly toolSpecs: readonly ToolSpec[] | undefined;
  /** What the main loop's requests carry: its tools, then its transfer tools; undefined when there are none. */
  readonly requestTools: readonly ToolSpec[] | undefined;
}

/** The tools of `agent` in `run`: its MCP tools joined for the run when it has `mcp:` views. @internal */
export function agentTools(
  run: { readonly mcpTools: ReadonlyMap<string, AgentTools> | undefined },
  agent: CompiledAgent,
): AgentTools {
  return run.mcpTools?.get(agent.id) ?? agent;
}

const specOf = (tool: Tool): ToolSpec =>
  Object.freeze({
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parameters,
  });

/**
 * Resolves every agent's `mcp:` views through the crew's MCP source, once per run (so a server's
 * changed tool list reaches the next run): the agent's own tools first, then its MCP tools, then
 * its transfer tools. `undefined` when no agent has views.
 *
 * @throws CrewRunError `CREW_MCP_FAILED` when the source rejects (its error is the `cause`) or
 * gives a tool named like one of the agent's own or transfer tools.
 * @internal
 */
export async function resolveMcpTools(
  crew: CompiledCrew,
  source: McpToolSource | undefined,
  state: () => CrewState,
): Promise<ReadonlyMap<string, AgentTools> | undefined> {
  if (source === undefined) return undefined;
  let out: Map<string, AgentTools> | undefined;
  for (const a of crew.config.agents) {
    if (a.mcp === undefined) continue;
    const agent = crew.agents.get(a.id) as CompiledAgent;
    let given: Tool[];
    try {
      given = await source.tools(a.mcp);
    } catch (error) {
      throw mcpFailure(agent.id, `its MCP tools could not be resolved: ${errorText(error)}`, state(), error);
    }
    const tools = new Map(agent.tools);
    const own = agent.toolSpecs ?? [];
    const transfers = (agent.requestTools ?? []).slice(own.length);
    const mcpSpecs: ToolSpec[] = [];
    for (const tool of given) {
      if (tools.has(tool.name) || agent.transfers?.has(tool.name) === true) {
        throw mcpFailure(
          agent.id,
          `the MCP tool ${JSON.stringify(tool.name)} is named like another tool of the agent: give its view a prefix`,
          state(),
        );
      }
      tools.set(tool.name, tool);
      mcpSpecs.push(specOf(tool));
    }
    const specs = [...own, ...mcpSpecs];
    const request = [...specs, ...transfers];
    (out ??= new Map()).set(agent.id, {
      tools,
      toolSpecs: specs.length === 0 ? undefined : Object.freeze(specs),
      requestTools: request.length === 0 ? undefined : Object.freeze(request),
    });
  }
  return out;
}

function mcpFailure(agentId: string, why: string, state: CrewState, cause?: unknown): CrewRunError {
  return new CrewRunError({
    code: 'CREW_MCP_FAILED',
    message: `Agent ${JSON.stringify(agentId)} cannot run: ${why}`,
    state,
    agentId,
    ...(cause === undefined ? {} : { cause }),
  });
}
