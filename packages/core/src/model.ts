/** A model's request to run a tool. */
export interface ToolCall {
  /** Unique within the reply; the tool's result message answers it by `toolCallId`. */
  id: string;
  /** The tool to run. */
  name: string;
  /** The arguments, as the model gave them (parsed JSON). */
  arguments: unknown;
}

/** One message of a conversation, in the shape every Signalyard model adapter maps from and to. */
export interface ChatMessage {
  /** Who says it: instructions, the user, the model, or a tool's result. */
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** The text (for a tool message: the result, JSON or `Error: …`). */
  content: string;
  /** For example the crew agent that spoke. */
  name?: string;
  /** Assistant messages that asked for tools. */
  toolCalls?: readonly ToolCall[];
  /** Tool messages: which call this answers. */
  toolCallId?: string;
}

/** The description of a tool a model may call; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the tool does, for the model. */
  description?: string;
  /** The JSON Schema of the tool's arguments. */
  parameters: Record<string, unknown>;
}

/** One model call. */
export interface ChatRequest {
  /** The conversation so far, oldest first. */
  messages: readonly ChatMessage[];
  /** The tools the model may call. */
  tools?: readonly ToolSpec[];
  /** Fires when the caller gives up: stop and reject. */
  abortSignal?: AbortSignal;
  /** The crew agent (or pipeline stage) making the call. */
  agentId?: string;
}

/** A model's reply: text, tool calls, and token usage when the provider reports it. */
export interface ChatResponse {
  /** The reply's text (may be empty when it only calls tools). */
  content: string;
  /** The tools the model asks to run, in order. */
  toolCalls?: readonly ToolCall[];
  /** Token counts, when the provider reports them. */
  usage?: {
    /** Tokens read. */
    inputTokens?: number;
    /** Tokens written. */
    outputTokens?: number;
  };
}

/**
 * The one interface through which crew agents and pipeline stages call a language model, so
 * any provider can be plugged in (see `@signalyard/ai-sdk`; tests use `scriptedModel` from
 * `@signalyard/core/testing`).
 */
export interface ChatModel {
  /** Generates one reply; rejects with `AbortedError` when `request.abortSignal` fires. */
  generate(request: ChatRequest): Promise<ChatResponse>;
  /**
   * Streams one reply (optional): `text-delta` parts as the text arrives, a `tool-call` part per
   * complete call, then exactly one `finish` part carrying the whole response. Callers read it
   * through `streamChat`, which falls back to `generate` for a model without `stream` and checks
   * these rules (`MODEL_STREAM_INVALID` otherwise).
   */
  stream?(request: ChatRequest): AsyncIterable<ChatStreamPart>;
}

/**
 * One part of a streamed model reply (see {@link ChatModel.stream}). The concatenated
 * `text-delta`s equal `finish.response.content`; the `tool-call` parts equal
 * `finish.response.toolCalls` (same ids, same order); `finish` comes once, last.
 */
export type ChatStreamPart =
  /** A piece of the reply's text; never empty. */
  | {
      /** `text-delta`. */
      readonly type: 'text-delta';
      /** The text to append. */
      readonly delta: string;
    }
  /** A complete tool call, its arguments parsed. */
  | {
      /** `tool-call`. */
      readonly type: 'tool-call';
      /** The call. */
      readonly call: ToolCall;
    }
  /** The whole response; exactly one, last. */
  | {
      /** `finish`. */
      readonly type: 'finish';
      /** The whole reply. */
      readonly response: ChatResponse;
    };

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Fires when the run is stopped: abandon the work. */
  abortSignal?: AbortSignal;
  /** The model's id for this call. */
  toolCallId: string;
  /** The crew agent that called the tool. */
  agentId?: string;
  /**
   * A key for downstream APIs that deduplicate (payments, email): `<receiptId>:tool:<n>`, where
   * `n` counts the turn's tool calls in the order the executor starts them. The same on every
   * redelivery of the inbox entry (a worker that died mid-turn, a retry after a lease was lost),
   * so a call repeated after a crash is recognised downstream; a call resumed after an approval
   * keeps the key of the turn that asked for it. Without a durable inbox, `receiptId` is a fresh
   * UUID per signal. Absent when the executor runs outside a Runner that sets it.
   */
  idempotencyKey?: string;
}

/**
 * A tool Signalyard runs itself when a model asks for it. A hand-written `Tool` receives its
 * arguments unvalidated.
 */
export interface Tool extends ToolSpec {
  /** Runs the tool; the value (as JSON) is the tool message the model reads; a rejection is answered as `Error: <message>`. */
  execute(args: unknown, ctx: ToolContext): Promise<unknown>;
  /**
   * Whether a call must be approved by a person before it runs: a flag, or a function of the
   * call's arguments (parsed, for a tool made with `defineTool`). An approval policy's rules
   * (`ApprovalPolicy`) are tried first; this decides when no rule matches.
   */
  needsApproval?: boolean | ((args: unknown, ctx: ToolContext) => boolean | Promise<boolean>);
}
