import type { McpToolSource, McpToolView, Tool, ToolSpec } from '@signalyard/core';
import { errorCode, errorText } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledCrew } from './compiled-crew.js';
import { CrewRunError, type CrewRunErrorCode } from './errors/crew-run-error.js';
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
 * @throws CrewRunError `MCP_SERVER_UNKNOWN` / `MCP_CONFIG_INVALID` when the source rejects with
 * an MCP error of that code (the `cause`), `MCP_CONFIG_INVALID` when it gives a tool named like
 * one of the agent's own or transfer tools, `CREW_MCP_FAILED` when it rejects otherwise.
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
    const servers = serversOf(a.mcp);
    const tools = new Map(agent.tools);
    const own = agent.toolSpecs ?? [];
    const transfers = (agent.requestTools ?? []).slice(own.length);
    const mcpSpecs: ToolSpec[] = [];
    for (const tool of given) {
      if (tools.has(tool.name) || agent.transfers?.has(tool.name) === true) {
        const server = serverOf(tool) ?? servers;
        throw mcpFailure(
          agent.id,
          `the MCP tool ${JSON.stringify(tool.name)} of server ${server} is named like ${tools.has(tool.name) ? 'one of its own tools' : 'its transfer tool'}: give the view a prefix`,
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

/** The codes of an MCP client's errors that a run's failure carries as they are (its `McpError` then the `cause`). */
const CARRIED_CODES: ReadonlySet<string> = new Set(['MCP_SERVER_UNKNOWN', 'MCP_CONFIG_INVALID']);

/** The server a tool from an MCP source names in its `mcp` origin, quoted; `undefined` when it has none. */
function serverOf(tool: Tool): string | undefined {
  const mcp: unknown = tool.mcp;
  const server = typeof mcp === 'object' && mcp !== null ? (mcp as { server?: unknown }).server : undefined;
  return typeof server === 'string' ? JSON.stringify(server) : undefined;
}

/** The servers of an agent's views, quoted, for a message. */
function serversOf(views: McpToolView | readonly McpToolView[]): string {
  const list = (Array.isArray(views) ? views : [views]) as readonly McpToolView[];
  return list.map((v) => JSON.stringify(v.server)).join(' or ');
}

/**
 * The run's failure for an agent whose MCP tools could not be had: with an MCP client's own
 * `MCP_SERVER_UNKNOWN` / `MCP_CONFIG_INVALID` error as `cause`, that code (so a Runner's outcome
 * shows it); a clash with the agent's own tools, `MCP_CONFIG_INVALID`; otherwise `CREW_MCP_FAILED`.
 */
function mcpFailure(agentId: string, why: string, state: CrewState, cause?: unknown): CrewRunError {
  const carried = cause === undefined ? 'MCP_CONFIG_INVALID' : errorCode(cause);
  const code = carried !== undefined && CARRIED_CODES.has(carried) ? (carried as CrewRunErrorCode) : 'CREW_MCP_FAILED';
  return new CrewRunError({
    code,
    message: `Agent ${JSON.stringify(agentId)} cannot run: ${why}`,
    state,
    agentId,
    ...(cause === undefined ? {} : { cause }),
  });
}
