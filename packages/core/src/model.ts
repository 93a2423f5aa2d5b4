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
  /**
   * Reports how far a long call got (an MCP server's progress notifications, for one): a crew
   * run turns each report into a `tool_progress` event, which a Runner forwards as an
   * `engine_event`. Absent when nobody listens.
   */
  progress?: (update: ToolProgress) => void;
}

/** One progress report of a running tool ({@link ToolContext.progress}). */
export interface ToolProgress {
  /** How far it got; increases with each report. */
  readonly progress: number;
  /** The total `progress` will reach, when known. */
  readonly total?: number;
  /** What the tool is doing now. */
  readonly message?: string;
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
  /**
   * A hint from where the tool came from (an MCP server's annotations, for one), weaker than
   * `needsApproval`: {@link decideApproval} consults it after the policy's rules and
   * `needsApproval`, and before the policy's `default`. `'ask'` holds the call for a person;
   * `'allow'` runs it even under a policy whose `default` is `ask`. An explicit rule of the
   * policy always wins, and `needsApproval: true` still asks.
   */
  approvalHint?: 'allow' | 'ask';
  /**
   * Where the tool comes from when an MCP server offers it (set by `connectMcp` from
   * `@signalyard/mcp`): the server's name and the tool's name there. Crew tool events carry it, so
   * the inspector and traces show MCP calls with their server.
   */
  readonly mcp?: {
    /** The server's name, as the MCP client was configured with it. */
    readonly server: string;
    /** The tool's name on the server (before any prefix). */
    readonly tool: string;
  };
}

/**
 * One agent's view of an MCP server's tools, as crew.yaml's `mcp:` list holds it
 * (`agents: [{ id: billing, mcp: [{ server: crm, allow: ['get_*', 'refund'] }] }]`): the
 * server's name, globs (`*` only) of the tool names to keep (`allow`, default every tool) and to
 * drop (`deny`, which wins), and a `prefix` put before each kept name.
 */
export interface McpToolView {
  /** The server's name, as the MCP client was configured with it. */
  readonly server: string;
  /** Globs of the server's tool names to offer (`*` matches any run of characters); default all. */
  readonly allow?: readonly string[];
  /** Globs of the server's tool names never to offer; wins over `allow`. */
  readonly deny?: readonly string[];
  /** Put before each offered name (`crm_` makes `get_order` into `crm_get_order`). */
  readonly prefix?: string;
}

/**
 * Where crew agents get the tools of their crew.yaml `mcp:` views: what `connectMcp` from
 * `@signalyard/mcp` returns implements it, and `crewEngine(crew, { model, mcp })` /
 * `new CrewExecutor({ crew, model, mcp })` take it — so neither the crew nor the runner depends
 * on the MCP package. `tools(views)` resolves the views of one agent to ordinary {@link Tool}s
 * (the names unique among them); the executor asks again at the start of every run, so a
 * server's changed tool list is seen by the next run.
 */
export interface McpToolSource {
  /** The tools of one agent's views, in view order; rejects when a view names an unknown server or the names clash. */
  tools(views: McpToolView | readonly McpToolView[]): Promise<Tool[]>;
}
