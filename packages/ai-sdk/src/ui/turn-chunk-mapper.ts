import type { Outcome, TurnEvent } from '@signalyard/core';
import type { UIMessageChunk } from 'ai';
import {
  asRecord,
  asString,
  errorText,
  isDeniedResult,
  jsonSafe,
  readEventCall,
  readToolCall,
} from './engine-event-fields.js';
import type { HandoffData, RejectedData, RouteData } from './signalyard-ui-message.js';
import { TextBlocks, type Speaker } from './text-blocks.js';

/** What {@link TurnChunkMapper} needs to know. @internal */
export interface TurnChunkMapperOptions {
  /** Sent with `start`: the id of the assistant message the stream writes (continues). */
  readonly messageId?: string;
  /** Whether the `routed` event becomes a `data-route` part. */
  readonly sendRouting: boolean;
  /** Whether `data-handoff` parts carry how (`via`) and the routing marker (`signal`). */
  readonly includeSignals: boolean;
}

type EngineEvent = Readonly<Record<string, unknown>>;

/**
 * Maps the events of one streamed turn to AI SDK 6 UI message chunks, event by event: `start`
 * first, a text block per speaking agent, tool parts, approval requests, handoffs and the route
 * as data parts, and `finish` last. Keeps only what the mapping needs (open text blocks, the
 * calls whose input went out, who runs concurrently) and never throws on an event it cannot
 * read: such an event maps to nothing.
 * @internal
 */
export class TurnChunkMapper {
  readonly #opts: TurnChunkMapperOptions;
  readonly #blocks = new TextBlocks();
  /** Tool calls whose `tool-input-available` went out. */
  readonly #inputs = new Set<string>();
  /** Approval id → tool call id, from this stream's approval requests. */
  readonly #approvalCalls = new Map<string, string>();
  /** Tool calls a person denied (`approval_resolved` with `approved: false`). */
  readonly #denied = new Set<string>();
  /** Speakers running at the same time: members of a running parallel group, started pipeline stages. */
  readonly #running = new Set<string>();
  /** Parallel group name → its members' speaker keys. */
  readonly #groups = new Map<string, string[]>();
  #done = false;

  constructor(opts: TurnChunkMapperOptions) {
    this.#opts = opts;
  }

  /**
   * True once the stream's last chunk was produced: `finish`, an `error` after a failed
   * iteration, or the text ends of a turn that `restarted` (no `finish` then).
   */
  get done(): boolean {
    return this.#done;
  }

  /** The first chunk: `start`, with the message id when one was given. */
  start(): UIMessageChunk[] {
    const { messageId } = this.#opts;
    return [messageId === undefined ? { type: 'start' } : { type: 'start', messageId }];
  }

  /** The chunks for one event of the turn (none once done). */
  next(event: TurnEvent): UIMessageChunk[] {
    const e = asRecord(event);
    if (this.#done || e === undefined) return [];
    switch (e.type) {
      case 'text_delta':
        return this.#text(e);
      case 'engine_event': {
        const inner = asRecord(e.event);
        return inner === undefined ? [] : this.#engine(inner);
      }
      case 'routed':
        return this.#routed(e);
      case 'outcome': {
        const outcome = asRecord(e.outcome);
        return outcome === undefined ? [] : this.#outcome(outcome);
      }
      case 'restarted':
        // The turn starts over on another worker: what this message showed is void. The stream
        // ends here without `finish`, so a resuming client replays the new attempt cleanly.
        this.#done = true;
        return this.#blocks.closeAll();
      default:
        return [];
    }
  }

  /** The last chunks of a turn that ended without an `outcome` event: open blocks closed, `finish`. */
  end(): UIMessageChunk[] {
    if (this.#done) return [];
    this.#done = true;
    return [...this.#blocks.closeAll(), { type: 'finish' }];
  }

  /** The last chunks when reading the turn failed: open blocks closed, an `error` with the message. */
  fail(error: unknown): UIMessageChunk[] {
    if (this.#done) return [];
    this.#done = true;
    const message = error instanceof Error ? error.message : errorText(error);
    return [...this.#blocks.closeAll(), { type: 'error', errorText: message }];
  }

  #text(event: EngineEvent): UIMessageChunk[] {
    const { delta } = event;
    if (typeof delta !== 'string' || delta === '') return [];
    return this.#blocks.write(speakerOf(event), delta, (a, b) => this.#concurrent(a, b));
  }

  #concurrent(a: Speaker, b: Speaker): boolean {
    return (this.#running.has(a.key) && this.#running.has(b.key)) || siblings(a.path, b.path);
  }

  #engine(event: EngineEvent): UIMessageChunk[] {
    switch (event.type) {
      case 'agent_response':
        return this.#agentResponse(event);
      case 'tool_start': {
        const call = readEventCall(event);
        return call === undefined ? [] : this.#input(call);
      }
      case 'tool_result':
        return this.#toolResult(event);
      case 'approval_requested':
        return this.#approvalRequested(event);
      case 'approval_resolved': {
        const id = asString(event.id);
        const toolCallId = asString(event.toolCallId) ?? (id === undefined ? undefined : this.#approvalCalls.get(id));
        if (event.approved === false && toolCallId !== undefined) this.#denied.add(toolCallId);
        return [];
      }
      case 'handoff':
        return [...this.#blocks.closeAll(), ...handoffChunk(event, this.#opts.includeSignals)];
      case 'parallel_start': {
        const members = Array.isArray(event.agents)
          ? event.agents.flatMap((a) => (typeof a === 'string' ? [`crew:${a}`] : []))
          : [];
        const group = asString(event.group);
        if (group !== undefined) this.#groups.set(group, members);
        for (const member of members) this.#running.add(member);
        return this.#blocks.closeAll();
      }
      case 'parallel_member_end':
        return this.#stop(`crew:${asString(event.agentId) ?? ''}`);
      case 'parallel_end': {
        const group = asString(event.group);
        const members = group === undefined ? undefined : this.#groups.get(group);
        if (group !== undefined) this.#groups.delete(group);
        return (members ?? []).flatMap((member) => this.#stop(member));
      }
      case 'stage_start': {
        const stage = asString(event.stage);
        if (stage !== undefined) this.#running.add(`stage:${stage}`);
        return [];
      }
      case 'stage_end':
        return this.#stop(`stage:${asString(event.stage) ?? ''}`);
      default:
        return [];
    }
  }

  /** A speaker stops running: its block closes and it no longer runs alongside others. */
  #stop(key: string): UIMessageChunk[] {
    this.#running.delete(key);
    return this.#blocks.close(key);
  }

  #agentResponse(event: EngineEvent): UIMessageChunk[] {
    const agentId = asString(event.agentId);
    // The reply is complete: its text block ends here (the next reply of the agent opens a new one).
    const chunks = agentId === undefined ? [] : this.#blocks.close(`crew:${agentId}`);
    if (Array.isArray(event.toolCalls)) {
      for (const value of event.toolCalls) {
        const call = readToolCall(value);
        if (call !== undefined) chunks.push(...this.#input({ id: call.id, name: call.name, input: call.arguments }));
      }
    }
    return chunks;
  }

  /** `tool-input-available` for a call, once per call and only when its tool name is known. */
  #input(call: { id: string; name?: string; input: unknown }): UIMessageChunk[] {
    if (this.#inputs.has(call.id) || call.name === undefined) return [];
    this.#inputs.add(call.id);
    return [{ type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: jsonSafe(call.input) }];
  }

  #toolResult(event: EngineEvent): UIMessageChunk[] {
    const call = readEventCall(event);
    if (call === undefined) return [];
    const chunks = this.#input(call);
    const result = 'result' in event ? event.result : event.content;
    const isError = event.isError === true;
    if (event.denied === true || this.#denied.has(call.id) || (isError && isDeniedResult(result))) {
      chunks.push({ type: 'tool-output-denied', toolCallId: call.id });
    } else if (isError) {
      chunks.push({ type: 'tool-output-error', toolCallId: call.id, errorText: errorText(result) });
    } else {
      chunks.push({ type: 'tool-output-available', toolCallId: call.id, output: jsonSafe(result) });
    }
    return chunks;
  }

  #approvalRequested(event: EngineEvent): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (!Array.isArray(event.approvals)) return chunks;
    for (const value of event.approvals) {
      const approval = asRecord(value);
      const id = asString(approval?.id);
      const toolCallId = asString(approval?.toolCallId);
      if (approval === undefined || id === undefined || toolCallId === undefined) continue;
      this.#approvalCalls.set(id, toolCallId);
      // The AI SDK's reader needs the call's tool part before the request.
      const toolName = asString(approval.toolName);
      chunks.push(
        ...this.#input(
          toolName === undefined
            ? { id: toolCallId, input: approval.arguments }
            : { id: toolCallId, name: toolName, input: approval.arguments },
        ),
        { type: 'tool-approval-request', approvalId: id, toolCallId },
      );
    }
    return chunks;
  }

  #routed(event: EngineEvent): UIMessageChunk[] {
    if (!this.#opts.sendRouting) return [];
    const tier = asString(event.tier);
    const routeName = asString(event.routeName);
    const action = asRecord(event.action);
    const data = {
      ...(tier === undefined ? {} : { tier }),
      ...(routeName === undefined ? {} : { routeName }),
      ...(action === undefined ? {} : { action: jsonSafe(action) }),
    } as RouteData;
    return [{ type: 'data-route', data }];
  }

  #outcome(outcome: Partial<Outcome>): UIMessageChunk[] {
    this.#done = true;
    const chunks = this.#blocks.closeAll();
    if (outcome.status === 'failed') {
      const message = asString(asRecord(outcome.error)?.message);
      chunks.push({ type: 'error', errorText: message ?? 'The turn failed' });
    } else if (outcome.status === 'rejected') {
      const data: RejectedData = { reason: rejectReason(outcome) };
      chunks.push({ type: 'data-rejected', data });
    }
    chunks.push({ type: 'finish' });
    return chunks;
  }
}

function speakerOf(event: EngineEvent): Speaker {
  const source = asRecord(event.source);
  const rawPath = source?.path;
  const path = Array.isArray(rawPath) && rawPath.every((step) => typeof step === 'string') ? rawPath : undefined;
  const crewAgentId = asString(source?.crewAgentId) ?? path?.at(-1);
  const stage = asString(source?.stage);
  const key =
    crewAgentId !== undefined
      ? `crew:${crewAgentId}`
      : stage !== undefined
        ? `stage:${stage}`
        : `agent:${asString(event.agentId) ?? ''}`;
  return path === undefined ? { key } : { key, path };
}

/**
 * True for the paths of two members of one parallel group: the group's path plus a different
 * member each. (A handoff extends the path instead, so its speakers are never siblings.)
 */
function siblings(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (a.length !== b.length || a.length < 2) return false;
  for (let i = 0; i < a.length - 1; i++) if (a[i] !== b[i]) return false;
  return a[a.length - 1] !== b[b.length - 1];
}

/**
 * `data-handoff` `{ from, to, group? }` — the same for a marker and a transfer tool call; with
 * `includeSignals`, also `via`, the marker, and a transfer call's `tool` and `reason`.
 */
function handoffChunk(event: EngineEvent, includeSignals: boolean): UIMessageChunk[] {
  const from = asString(event.from);
  const to = asString(event.to);
  const via = asString(event.via);
  if (from === undefined || to === undefined || via === undefined) return [];
  const group = asString(event.group);
  const signal = includeSignals ? asString(event.signal) : undefined;
  const tool = includeSignals ? asString(event.tool) : undefined;
  const reason = includeSignals ? asString(event.reason) : undefined;
  const data: HandoffData = {
    from,
    to,
    ...(group === undefined ? {} : { group }),
    ...(includeSignals ? { via: via as HandoffData['via'] } : {}),
    ...(signal === undefined ? {} : { signal }),
    ...(tool === undefined ? {} : { tool }),
    ...(reason === undefined ? {} : { reason }),
  };
  return [{ type: 'data-handoff', data }];
}

function rejectReason(outcome: Partial<Outcome>): string {
  const action = asRecord(outcome.action);
  if (action?.type === 'reject' && typeof action.reason === 'string') return action.reason;
  return asString(asRecord(outcome.error)?.message) ?? 'rejected';
}
