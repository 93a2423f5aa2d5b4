import type { EngineEvent } from '@signalyard/core';
import { SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { contentText } from './content.js';
import {
  ATTR_CONTENT,
  ATTR_CREW_AGENTS,
  ATTR_CREW_AGENT_ID,
  ATTR_CREW_FROM,
  ATTR_CREW_GROUP,
  ATTR_CREW_HANDOFFS,
  ATTR_CREW_MEMBER_STATUS,
  ATTR_CREW_REASON,
  ATTR_CREW_SIGNAL,
  ATTR_CREW_SUCCEEDED,
  ATTR_CREW_TO,
  ATTR_CREW_TOOL,
  ATTR_CREW_TOOLS,
  ATTR_CREW_TOOL_CALL_ID,
  ATTR_CREW_TOOL_ERROR,
  ATTR_MCP_SERVER,
  ATTR_MCP_TOOL,
  ATTR_CREW_VIA,
  ATTR_PIPELINE_FAILED,
  ATTR_PIPELINE_INTERRUPT_KIND,
  ATTR_PIPELINE_NEXT,
  ATTR_PIPELINE_STAGE,
  EVENT_CREW_HANDOFF,
  EVENT_CREW_PARALLEL_END,
  EVENT_CREW_PARALLEL_START,
  EVENT_CREW_PAUSE,
  EVENT_CREW_TERMINATE,
  EVENT_CREW_TOOL_CALLS,
  EVENT_CREW_TOOL_RESULT,
  EVENT_CREW_TOOL_START,
  EVENT_PIPELINE_INTERRUPT,
  SPAN_CREW_AGENT,
  SPAN_PIPELINE_STAGE,
} from './names.js';

/** Separates a parallel group's name from a member's agent id in a span key (neither holds it). */
const KEY_SEPARATOR = '\u0000';

/**
 * The spans of the engine events of one turn: crew `agent_start`/`agent_response` pairs as
 * `signalyard.crew.agent` spans (parallel members paired by group and agent id), pipeline
 * `stage_start`/`stage_end` pairs as `signalyard.pipeline.stage` spans, and the rest (handoffs,
 * tool calls, terminations, parallel groups, interrupts) as span events. Events it does not know,
 * or whose fields are not what the crew and pipeline engines send, are ignored.
 *
 * A main-loop agent's span stays open after its final reply until the crew moves on (a handoff,
 * a termination or pause, a parallel group, the next agent), so the handoff it made is recorded
 * as an event of its own span. {@link EngineSpans.end} ends whatever is still open.
 */
export class EngineSpans {
  readonly #tracer: Tracer;
  readonly #parent: Context;
  readonly #content: boolean;
  /** The main-loop agent's span (no `group`), its agent id, and whether it gave its final reply. */
  #main: Span | undefined;
  #mainId = '';
  /** Parallel-group members' spans, by `group + KEY_SEPARATOR + agentId`. */
  #members: Map<string, Span> | undefined;
  /** Pipeline stages in flight, by stage name (DAG stages run concurrently). */
  #stages: Map<string, Span> | undefined;

  constructor(tracer: Tracer, parent: Context, recordContent: boolean) {
    this.#tracer = tracer;
    this.#parent = parent;
    this.#content = recordContent;
  }

  /** Records one engine event; `host` (the turn span) receives the events that belong to no agent or stage. */
  handle(event: EngineEvent, host: Span): void {
    switch (event.type) {
      case 'agent_start':
        this.#agentStart(event);
        return;
      case 'agent_response':
        this.#agentResponse(event);
        return;
      case 'tool_start':
      case 'tool_result':
        this.#tool(event);
        return;
      case 'handoff':
        this.#handoff(event, host);
        return;
      case 'terminate':
      case 'pause':
        this.#finish(event, host);
        return;
      case 'parallel_start':
        this.#parallelStart(event, host);
        return;
      case 'parallel_member_end':
        this.#memberEnd(event);
        return;
      case 'parallel_end':
        this.#parallelEnd(event, host);
        return;
      case 'stage_start':
        this.#stageStart(event);
        return;
      case 'stage_end':
        this.#stageEnd(event);
        return;
      case 'interrupt':
        this.#interrupt(event, host);
        return;
      default:
        return;
    }
  }

  /** Ends every span still open (events went missing, or the turn ended early). */
  end(): void {
    this.#endMain();
    if (this.#members !== undefined) {
      for (const span of this.#members.values()) span.end();
      this.#members.clear();
    }
    if (this.#stages !== undefined) {
      for (const span of this.#stages.values()) span.end();
      this.#stages.clear();
    }
  }

  // ------------------------------------------------------------------ crew agents

  #agentStart(event: EngineEvent): void {
    const agentId = event.agentId;
    if (typeof agentId !== 'string') return;
    const group = event.group;
    if (typeof group === 'string') {
      const members = (this.#members ??= new Map<string, Span>());
      const key = group + KEY_SEPARATOR + agentId;
      members.get(key)?.end();
      members.set(
        key,
        this.#tracer.startSpan(
          SPAN_CREW_AGENT,
          { attributes: { [ATTR_CREW_AGENT_ID]: agentId, [ATTR_CREW_GROUP]: group } },
          this.#parent,
        ),
      );
      return;
    }
    this.#endMain();
    this.#main = this.#tracer.startSpan(
      SPAN_CREW_AGENT,
      { attributes: { [ATTR_CREW_AGENT_ID]: agentId } },
      this.#parent,
    );
    this.#mainId = agentId;
  }

  /** The open span of the agent an event names: a member's when it carries a `group`, else the main loop's. */
  #agentSpan(event: EngineEvent): Span | undefined {
    const agentId = event.agentId;
    if (typeof agentId !== 'string') return undefined;
    const group = event.group;
    if (typeof group === 'string') return this.#members?.get(group + KEY_SEPARATOR + agentId);
    return this.#mainId === agentId ? this.#main : undefined;
  }

  #agentResponse(event: EngineEvent): void {
    const span = this.#agentSpan(event);
    if (span === undefined) return;
    const content = event.content;
    const calls = event.toolCalls;
    if (Array.isArray(calls) && calls.length > 0) {
      // A reply asking for tools: the agent's turn goes on.
      const attributes: Attributes = { [ATTR_CREW_TOOLS]: calls.map((c: unknown) => toolName(c)) };
      if (this.#content && typeof content === 'string') attributes[ATTR_CONTENT] = content;
      span.addEvent(EVENT_CREW_TOOL_CALLS, attributes);
      return;
    }
    if (this.#content && typeof content === 'string') span.setAttribute(ATTR_CONTENT, content);
    // The final reply. A member's span ends at its parallel_member_end (which carries its
    // status); the main loop's when the crew moves on (see the class comment).
  }

  #tool(event: EngineEvent): void {
    const span = this.#agentSpan(event);
    if (span === undefined) return;
    const call = event.call;
    const attributes: Attributes = { [ATTR_CREW_TOOL]: toolName(call) };
    const id = typeof call === 'object' && call !== null ? (call as { id?: unknown }).id : undefined;
    if (typeof id === 'string') attributes[ATTR_CREW_TOOL_CALL_ID] = id;
    const mcp = event.mcp;
    if (typeof mcp === 'object' && mcp !== null) {
      copyString(mcp as EngineEvent, 'server', attributes, ATTR_MCP_SERVER);
      copyString(mcp as EngineEvent, 'tool', attributes, ATTR_MCP_TOOL);
    }
    if (event.type === 'tool_start') {
      if (this.#content) attributes[ATTR_CONTENT] = contentText((call as { arguments?: unknown } | null)?.arguments);
      span.addEvent(EVENT_CREW_TOOL_START, attributes);
      return;
    }
    attributes[ATTR_CREW_TOOL_ERROR] = event.isError === true;
    if (this.#content) attributes[ATTR_CONTENT] = contentText(errorAsContent(event.result));
    span.addEvent(EVENT_CREW_TOOL_RESULT, attributes);
  }

  #handoff(event: EngineEvent, host: Span): void {
    const from = event.from;
    const attributes: Attributes = {};
    if (typeof from === 'string') attributes[ATTR_CREW_FROM] = from;
    copyString(event, 'to', attributes, ATTR_CREW_TO);
    copyString(event, 'via', attributes, ATTR_CREW_VIA);
    copyString(event, 'signal', attributes, ATTR_CREW_SIGNAL);
    const handoffs = event.handoffs;
    if (typeof handoffs === 'number') attributes[ATTR_CREW_HANDOFFS] = handoffs;
    this.#onMainOrHost(from, EVENT_CREW_HANDOFF, attributes, host);
  }

  /** `terminate` or `pause`: the crew run ends at this agent. */
  #finish(event: EngineEvent, host: Span): void {
    const attributes: Attributes = {};
    const agentId = event.agentId;
    if (typeof agentId === 'string') attributes[ATTR_CREW_AGENT_ID] = agentId;
    copyString(event, 'reason', attributes, ATTR_CREW_REASON);
    copyString(event, 'signal', attributes, ATTR_CREW_SIGNAL);
    this.#onMainOrHost(agentId, event.type === 'pause' ? EVENT_CREW_PAUSE : EVENT_CREW_TERMINATE, attributes, host);
  }

  /** Adds an event to the main-loop agent's span when it is `agentId`'s (then ends it), else to `host`. */
  #onMainOrHost(agentId: unknown, name: string, attributes: Attributes, host: Span): void {
    if (this.#main !== undefined && this.#mainId === agentId) {
      this.#main.addEvent(name, attributes);
      this.#endMain();
      return;
    }
    host.addEvent(name, attributes);
  }

  #endMain(): void {
    this.#main?.end();
    this.#main = undefined;
    this.#mainId = '';
  }

  // ------------------------------------------------------------------ parallel groups

  #parallelStart(event: EngineEvent, host: Span): void {
    // The agent that fanned out is done: its group runs beside it, under the turn.
    this.#endMain();
    const attributes: Attributes = {};
    copyString(event, 'group', attributes, ATTR_CREW_GROUP);
    copyStrings(event, 'agents', attributes, ATTR_CREW_AGENTS);
    host.addEvent(EVENT_CREW_PARALLEL_START, attributes);
  }

  #memberEnd(event: EngineEvent): void {
    const group = event.group;
    const agentId = event.agentId;
    if (typeof group !== 'string' || typeof agentId !== 'string') return;
    const key = group + KEY_SEPARATOR + agentId;
    const span = this.#members?.get(key);
    if (span === undefined) return;
    this.#members?.delete(key);
    const status = event.status;
    if (typeof status === 'string') span.setAttribute(ATTR_CREW_MEMBER_STATUS, status);
    const error = event.error;
    if (status === 'failed' || status === 'timed_out') {
      span.setStatus(
        error instanceof Error
          ? { code: SpanStatusCode.ERROR, message: error.message }
          : { code: SpanStatusCode.ERROR },
      );
      if (error instanceof Error) span.recordException(error);
    }
    span.end();
  }

  #parallelEnd(event: EngineEvent, host: Span): void {
    const group = event.group;
    if (typeof group === 'string' && this.#members !== undefined) {
      // Members stopped without a parallel_member_end (the run was aborted).
      const prefix = group + KEY_SEPARATOR;
      for (const [key, span] of this.#members) {
        if (!key.startsWith(prefix)) continue;
        span.setAttribute(ATTR_CREW_MEMBER_STATUS, 'aborted');
        span.end();
        this.#members.delete(key);
      }
    }
    const attributes: Attributes = {};
    copyString(event, 'group', attributes, ATTR_CREW_GROUP);
    copyStrings(event, 'succeeded', attributes, ATTR_CREW_SUCCEEDED);
    host.addEvent(EVENT_CREW_PARALLEL_END, attributes);
  }

  // ------------------------------------------------------------------ pipeline stages

  #stageStart(event: EngineEvent): void {
    const stage = event.stage;
    if (typeof stage !== 'string') return;
    const stages = (this.#stages ??= new Map<string, Span>());
    stages.get(stage)?.end();
    stages.set(
      stage,
      this.#tracer.startSpan(SPAN_PIPELINE_STAGE, { attributes: { [ATTR_PIPELINE_STAGE]: stage } }, this.#parent),
    );
  }

  #stageEnd(event: EngineEvent): void {
    const stage = event.stage;
    if (typeof stage !== 'string') return;
    const span = this.#stages?.get(stage);
    if (span === undefined) return;
    this.#stages?.delete(stage);
    const failed = event.failed === true;
    const attributes: Attributes = { [ATTR_PIPELINE_FAILED]: failed };
    copyString(event, 'next', attributes, ATTR_PIPELINE_NEXT);
    if (this.#content && event.output !== undefined) attributes[ATTR_CONTENT] = contentText(event.output);
    span.setAttributes(attributes);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `stage "${stage}" failed` });
    span.end();
  }

  #interrupt(event: EngineEvent, host: Span): void {
    const interrupt = event.interrupt;
    const attributes: Attributes = {};
    if (typeof interrupt === 'object' && interrupt !== null) {
      const { kind, stage, payload } = interrupt as { kind?: unknown; stage?: unknown; payload?: unknown };
      if (typeof kind === 'string') attributes[ATTR_PIPELINE_INTERRUPT_KIND] = kind;
      if (typeof stage === 'string') attributes[ATTR_PIPELINE_STAGE] = stage;
      if (this.#content && payload !== undefined) attributes[ATTR_CONTENT] = contentText(payload);
    }
    host.addEvent(EVENT_PIPELINE_INTERRUPT, attributes);
  }
}

function toolName(call: unknown): string {
  const name = typeof call === 'object' && call !== null ? (call as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : '';
}

/** A tool's error as its message (an Error has no JSON form worth recording). */
function errorAsContent(result: unknown): unknown {
  return result instanceof Error ? result.message : result;
}

function copyString(event: EngineEvent, field: string, attributes: Attributes, name: string): void {
  const value = event[field];
  if (typeof value === 'string') attributes[name] = value;
}

function copyStrings(event: EngineEvent, field: string, attributes: Attributes, name: string): void {
  const value = event[field];
  if (Array.isArray(value)) attributes[name] = value.filter((v): v is string => typeof v === 'string');
}
