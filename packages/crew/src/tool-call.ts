import type { Tool, ToolCall, ToolProgress } from '@signalyard/core';
import { agentTools } from './mcp-tools.js';
import { untilAborted } from '@signalyard/core/internal';
import type { CompiledAgent } from './compiled-crew.js';
import { OUTCOME_UNKNOWN_TEXT, toolErrorContent, toolResultContent } from './crew-history.js';
import { CrewToolError } from './errors/crew-tool-error.js';
import { isAborted, nextIdempotencyKey, type Run } from './run-context.js';

/** How a tool call ended: the `tool_result` event's `result` and `isError`, and the `tool` message text. @internal */
export interface ToolAnswer {
  readonly result: unknown;
  readonly isError: boolean;
  readonly content: string;
}

/**
 * The answers to a reply's transfer calls, by the call's position (`undefined` at an ordinary
 * call, which runs as a tool); `undefined` when the reply has no transfer call.
 * @internal
 */
export type TransferAnswers = readonly (ToolAnswer | undefined)[] | undefined;

/**
 * Runs one tool call — `tool_start`, the tool, `tool_result` — and returns how it ended: a tool
 * the agent does not have, a tool that throws and a result with no text are answers with
 * `isError`, not failures. `undefined` when the run was aborted while the tool ran (no
 * `tool_result` then). `idempotencyKey`: the call's `ToolContext.idempotencyKey` (default: the
 * run's next one, taken as the call starts).
 * @internal
 */
export async function runToolCall(
  run: Run,
  agent: CompiledAgent,
  call: ToolCall,
  abortSignal: AbortSignal,
  group: string | undefined,
  idempotencyKey: string | undefined = nextIdempotencyKey(run),
): Promise<ToolAnswer | undefined> {
  const emit = run.emit;
  const { tools } = agentTools(run, agent);
  const tool = tools.get(call.name);
  const mcp = mcpOrigin(tool);
  emit?.({
    type: 'tool_start',
    agentId: agent.id,
    call,
    ...(group !== undefined && { group }),
    ...(mcp !== undefined && { mcp }),
  });
  let result: unknown;
  let isError = false;
  if (tool === undefined) {
    const names = [...tools.keys()].map((n) => JSON.stringify(n)).join(', ');
    result = new CrewToolError({
      code: 'CREW_UNKNOWN_TOOL',
      message: `Unknown tool ${JSON.stringify(call.name)}: agent ${JSON.stringify(agent.id)} has ${names === '' ? 'no tools' : `the tools ${names}`}`,
      agentId: agent.id,
      toolName: call.name,
    });
    isError = true;
  } else {
    try {
      result = await untilAborted(
        tool.execute(call.arguments, {
          abortSignal,
          toolCallId: call.id,
          agentId: agent.id,
          ...(idempotencyKey !== undefined && { idempotencyKey }),
          ...(emit !== undefined && { progress: progressEmitter(emit, agent.id, call, group) }),
        }),
        abortSignal,
      );
    } catch (error) {
      if (isAborted(abortSignal)) return undefined;
      result = error;
      isError = true;
    }
  }
  let content = isError ? undefined : toolResultContent(result);
  if (typeof content === 'object') {
    // Unserializable: answered as a failed call, so the model sees why and the run goes on.
    result = new CrewToolError({
      code: 'CREW_TOOL_RESULT_INVALID',
      message: `Tool ${JSON.stringify(call.name)} of agent ${JSON.stringify(agent.id)} returned a result that cannot be sent to the model: ${content.problem}`,
      agentId: agent.id,
      toolName: call.name,
    });
    isError = true;
    content = undefined;
  }
  const answer: ToolAnswer = { result, isError, content: content ?? toolErrorContent(result) };
  emitAnswer(run, agent, call, answer, group);
  return answer;
}

/** The `tool_result` event of an answered call. @internal */
export function emitAnswer(
  run: Run,
  agent: CompiledAgent,
  call: ToolCall,
  answer: ToolAnswer,
  group: string | undefined,
): void {
  const { result, isError } = answer;
  const mcp = mcpOrigin(agentTools(run, agent).tools.get(call.name));
  run.emit?.({
    type: 'tool_result',
    agentId: agent.id,
    call,
    result,
    isError,
    ...(group !== undefined && { group }),
    ...(mcp !== undefined && { mcp }),
  });
}

/** A tool's MCP origin (`Tool.mcp`) when it is a well-formed one. */
function mcpOrigin(tool: Tool | undefined): { server: string; tool: string } | undefined {
  const mcp: unknown = tool?.mcp;
  if (typeof mcp !== 'object' || mcp === null) return undefined;
  const { server, tool: name } = mcp as { server?: unknown; tool?: unknown };
  return typeof server === 'string' && typeof name === 'string' ? { server, tool: name } : undefined;
}

/** The answer to a refused call: `denied`, or `denied: <reason>`. @internal */
export function deniedAnswer(reason: string | undefined): ToolAnswer {
  const content = reason === undefined || reason === '' ? 'denied' : `denied: ${reason}`;
  return { result: content, isError: true, content };
}

/** The answer to a claimed call with no recorded result: it is never run again. @internal */
export const OUTCOME_UNKNOWN: ToolAnswer = Object.freeze({
  result: OUTCOME_UNKNOWN_TEXT,
  isError: true,
  content: OUTCOME_UNKNOWN_TEXT,
});

/** `ToolContext.progress` for one call: each report as a `tool_progress` event (malformed ones dropped). */
function progressEmitter(
  emit: NonNullable<Run['emit']>,
  agentId: string,
  call: ToolCall,
  group: string | undefined,
): (update: ToolProgress) => void {
  return (update) => {
    if (typeof update !== 'object' || (update as unknown) === null || !Number.isFinite(update.progress)) return;
    emit({
      type: 'tool_progress',
      agentId,
      toolCallId: call.id,
      toolName: call.name,
      progress: update.progress,
      ...(typeof update.total === 'number' && Number.isFinite(update.total) && { total: update.total }),
      ...(typeof update.message === 'string' && { message: update.message }),
      ...(group !== undefined && { group }),
    });
  };
}
