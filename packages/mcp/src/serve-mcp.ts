import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  SignalKind,
  signal,
  type ApprovalDecision,
  type Outcome,
  type SessionCause,
  type SessionVersion,
  type Signal,
  type TurnEvent,
} from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import * as z from 'zod';
import { configInvalid } from './errors/mcp-error.js';
import { mcpSessionKey } from './mcp-session-key.js';
import { checkServeOptions, type ServeMcpOptions } from './serve-options.js';

/** A streamed turn, as a Runner's `streamDispatch` / `streamApprove` return it: its events, and its outcome. */
export interface McpTurnStream extends AsyncIterable<TurnEvent> {
  /** The turn's outcome. */
  readonly outcome: Promise<Outcome>;
}

/**
 * What `serveMcp` needs of a Runner (the `signalyard` package's `Runner` has it; this package
 * does not depend on it): streamed dispatch and approval.
 */
export interface McpServableRunner {
  /** Applies `signal` to the session `sessionKey`, streamed. */
  streamDispatch(sessionKey: string, signal: Signal): McpTurnStream;
  /** Decides pending approvals of the session `sessionKey`, streamed. */
  streamApprove(sessionKey: string, decisions: readonly ApprovalDecision[], opts?: { by?: string }): McpTurnStream;
  /**
   * The session's saved versions, newest first (the Runner's `history`). Optional: when present,
   * a turn whose engine streamed no text and whose `output` carries no reply is answered with the
   * visible reply its save recorded (`cause.summary.reply`).
   */
  history?(sessionKey: string, opts?: { limit?: number }): AsyncIterable<SessionVersion>;
}

/** A running MCP server (what {@link serveMcp} resolves with). */
export interface ServedMcp {
  /** The endpoint (`http://host:port/mcp`) when served over HTTP. */
  readonly url?: string;
  /** The port, when served over HTTP (useful with `port: 0`). */
  readonly port?: number;
  /** Stops serving (HTTP: stops listening and ends open requests; stdio: closes the transport). Turns in flight complete. */
  close(): Promise<void>;
}

/** The structured content of an `ask_<agent>` / `approve_<agent>` answer. */
export interface McpTurnAnswer {
  /** The session id as the caller sent it, or the UUID generated for a new session (pass it back as it is to continue the conversation). */
  readonly session: string;
  /** The turn's outcome status: `completed`, `paused` (awaiting approval), `rejected`, `failed`, … */
  readonly status: Outcome['status'];
  /** The turn's visible reply (markers hidden), as the text content shows it; absent when the turn said nothing. */
  readonly output?: string;
  /** The ids of the approvals the session awaits (status `paused`): answer them with `approve_<agent>`. */
  readonly pendingApprovals?: readonly string[];
}

/**
 * Serves agents of a Runner as MCP tools: each agent id `a` of `agents` as `ask_a`
 * `{ session?: string, text: string }`, routed as a `user_message` of the session
 * `agent:<a>:mcp:dm:<session>` (exactly what `SessionKey.directMessage(a, 'mcp', session,
 * 'per-channel-peer')` formats, for any id that factory takes: `User@Example.com` →
 * `…:dm:user@example.com`, `a:b` → `…:dm:a%3ab`; an id it refuses is answered as a tool error
 * naming it; a fresh UUID when `session` is absent — callers reach only the `mcp` channel's
 * sessions of the agents served). The answer is the turn's visible reply as text (for an engine
 * that does not stream, the reply its outcome or its save carries), with `structuredContent`
 * {@link McpTurnAnswer}; streamed text goes out as progress notifications
 * `{ progress: n, message: delta }` when the client sent a progress token. A paused turn awaiting
 * approval answers at once with status `paused` and the pending approval ids; with
 * `approvals: true`, `approve_a` `{ session, decisions }` decides them. A client's cancel ends
 * only its wait: the turn completes and is saved.
 *
 * Over HTTP it is stateless (`StreamableHTTPServerTransport` with no session ids, a new
 * `McpServer` per request: with a durable inbox any replica answers), and `token` is checked as
 * a bearer token; over stdio it speaks on this process's stdin/stdout (`StdioServerTransport`).
 *
 * @throws McpError (as a rejection) `MCP_CONFIG_INVALID` for bad options (an agent id that is not
 * a lowercase id, neither or both of `http` and `stdio`, a bad port), or when the port cannot be
 * bound.
 * @example
 * ```ts
 * const served = await serveMcp(runner, { agents: ['support'], http: { port: 8940, host: '127.0.0.1', token } });
 * // an MCP client calls ask_support { text: 'Where is my order?' } → { session, status: 'completed', … }
 * await served.close();
 * ```
 */
export async function serveMcp(runner: McpServableRunner, options: ServeMcpOptions): Promise<ServedMcp> {
  const checked = checkServeOptions(runner, options);
  const build = (): McpServer => buildServer(runner, checked.agents, checked.approvals, checked.name);
  if (checked.stdio) {
    const server = build();
    const transport = new StdioServerTransport();
    await server.connect(transport);
    return { close: () => server.close() };
  }
  const { port, host, token, path } = checked.http;
  const http = createServer((req, res) => {
    handleHttp(req, res, build, token, path).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: errorText(error) }, id: null }));
    });
  });
  const bound = await listen(http, port, host);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${bound}${path}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => {
          resolve();
        });
        http.closeAllConnections();
      }),
  };
}

async function listen(http: HttpServer, port: number, host: string): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    http.once('error', (error) => {
      reject(configInvalid(`serveMcp could not listen on ${host}:${port}: ${errorText(error)}`));
    });
    http.listen(port, host, () => {
      resolve((http.address() as { port: number }).port);
    });
  });
}

async function handleHttp(
  req: IncomingMessage,
  res: ServerResponse,
  build: () => McpServer,
  token: string | undefined,
  path: string,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname !== path) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: the MCP endpoint is ${path}`);
    return;
  }
  if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'unauthorized' }, id: null }));
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'parse error' }, id: null }));
    return;
  }
  // Stateless: a new server and transport per request, no session ids.
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close().then(() => server.close());
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const decisionSchema = z.object({ id: z.string().min(1), approved: z.boolean(), reason: z.string().optional() });

function buildServer(
  runner: McpServableRunner,
  agents: readonly string[],
  approvals: boolean,
  name: string,
): McpServer {
  const server = new McpServer({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  for (const agentId of agents) {
    server.registerTool(
      `ask_${agentId}`,
      {
        description: `Send a message to the agent "${agentId}" and get its reply. Pass the returned session to continue the same conversation.`,
        inputSchema: { session: z.string().optional(), text: z.string() },
        // Adds to a conversation, destroys nothing: a Signalyard client calls it without asking.
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      async (args, extra) => {
        const session = args.session ?? randomUUID();
        const key = mcpSessionKey(agentId, session);
        if ('problem' in key) return toolError(key.problem);
        const turn = runner.streamDispatch(key.key, signal(SignalKind.UserMessage, args.text));
        const text = args.text.slice(0, 200);
        const ours = (c: SessionCause): boolean => c.signal?.kind === SignalKind.UserMessage && c.signal.text === text;
        return await answer(turn, { runner, key: key.key, session, ours }, extra);
      },
    );
    if (!approvals) continue;
    server.registerTool(
      `approve_${agentId}`,
      {
        description: `Decide the pending tool approvals of a session of the agent "${agentId}" (ids from pendingApprovals).`,
        inputSchema: { session: z.string(), decisions: z.array(decisionSchema).min(1) },
      },
      async (args, extra) => {
        const key = mcpSessionKey(agentId, args.session);
        if ('problem' in key) return toolError(key.problem);
        const decisions: ApprovalDecision[] = args.decisions.map((d) =>
          d.reason === undefined
            ? { id: d.id, approved: d.approved }
            : { id: d.id, approved: d.approved, reason: d.reason },
        );
        const turn = runner.streamApprove(key.key, decisions, { by: 'mcp' });
        const ours = (c: SessionCause): boolean => c.signal?.kind === SignalKind.ToolApproval;
        return await answer(turn, { runner, key: key.key, session: args.session, ours }, extra);
      },
    );
  }
  return server;
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

interface CallExtra {
  readonly signal: AbortSignal;
  readonly _meta?: { progressToken?: string | number };
  sendNotification(notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; message?: string };
  }): Promise<void>;
}

/** Which call a turn answers: the runner and session key, the session id as the caller gave it, and how its save's cause looks. */
interface AnswerTarget {
  readonly runner: McpServableRunner;
  readonly key: string;
  readonly session: string;
  /** Whether a saved version's cause is this call's signal (a user message with its text, an approval). */
  readonly ours: (cause: SessionCause) => boolean;
}

/** Reads the turn to its end (streaming deltas as progress) unless the client cancels its wait first. */
async function answer(stream: McpTurnStream, target: AnswerTarget, extra: CallExtra): Promise<CallToolResult> {
  const token = extra._meta?.progressToken;
  let text = '';
  let n = 0;
  const read = (async () => {
    for await (const event of stream) {
      if (event.type === 'restarted') text = ''; // a redelivery starts the reply over
      if (event.type !== 'text_delta') continue;
      text += event.delta;
      if (token !== undefined && !extra.signal.aborted) {
        await extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: n++, message: event.delta },
          })
          .catch(() => undefined);
      }
    }
    return await stream.outcome;
  })();
  // A cancel ends only this wait: the turn goes on (and is saved); its reading is kept going.
  const cancelled = new Promise<undefined>((resolve) => {
    if (extra.signal.aborted) resolve(undefined);
    extra.signal.addEventListener(
      'abort',
      () => {
        resolve(undefined);
      },
      { once: true },
    );
  });
  const outcome = await Promise.race([read, cancelled]);
  if (outcome === undefined) {
    read.catch(() => undefined);
    return { content: [{ type: 'text', text: 'cancelled: the turn goes on' }] };
  }
  // An engine that did not stream: the reply its outcome carries, or the one its save recorded.
  if (text === '') text = replyOfOutput(outcome.output) ?? (await savedReply(target, outcome)) ?? '';
  const structured: Record<string, unknown> = { session: target.session, status: outcome.status };
  if (text !== '') structured.output = text;
  if (outcome.pendingApprovals !== undefined && outcome.pendingApprovals.length > 0)
    structured.pendingApprovals = outcome.pendingApprovals.map((p) => p.id);
  const shown =
    outcome.status === 'paused' && outcome.pendingApprovals !== undefined
      ? `${text}${text === '' ? '' : '\n'}(awaiting approval: ${outcome.pendingApprovals.map((p) => `${p.id} ${p.toolName}`).join(', ')})`
      : outcome.status === 'failed'
        ? `${text}${text === '' ? '' : '\n'}failed: ${outcome.error?.message ?? 'the turn failed'}`
        : text;
  return {
    content: [{ type: 'text', text: shown }],
    structuredContent: structured,
    ...(outcome.status === 'failed' && { isError: true }),
  };
}

/**
 * The visible reply an outcome's `output` carries, for a turn that streamed no text: a string
 * output itself, or the `visibleContent` of a crew's `CrewResponse` (markers hidden).
 */
function replyOfOutput(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (typeof output !== 'object' || output === null) return undefined;
  const visible = (output as { visibleContent?: unknown }).visibleContent;
  return typeof visible === 'string' ? visible : undefined;
}

/**
 * The visible reply the turn's save recorded (`cause.summary.reply`, what the Runner keeps: a
 * crew's reply with its markers hidden, else the last assistant message asking for no tools),
 * read from the session's newest version when it is this call's (same signal, same status).
 * `undefined` when the runner keeps no history or the newest version is another turn's.
 */
async function savedReply(target: AnswerTarget, outcome: Outcome): Promise<string | undefined> {
  if (target.runner.history === undefined || outcome.status === 'rejected' || outcome.status === 'unrouted')
    return undefined;
  try {
    for await (const version of target.runner.history(target.key, { limit: 1 })) {
      const cause = version.cause;
      if (cause?.status !== outcome.status || !target.ours(cause)) return undefined;
      return cause.summary?.reply;
    }
  } catch {
    // A store that cannot be read: the answer goes without the reply.
  }
  return undefined;
}
