import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { ToolArgumentsError, type Tool, type ToolContext } from '@signalyard/core';
import { McpError } from './errors/mcp-error.js';
import type { McpDefaultApproval } from './mcp-options.js';
import type { ServerConnection } from './server-connection.js';
import { toolResultValue } from './tool-result.js';

/** The `_meta` key a call's `ToolContext.idempotencyKey` is sent under. */
export const IDEMPOTENCY_META_KEY = 'signalyard/idempotencyKey';

/** Where an MCP tool comes from: a Signalyard `Tool` made by `connectMcp` carries it as `mcp`. */
export interface McpToolOrigin {
  /** The server's name (as `connectMcp({ servers })` names it). */
  readonly server: string;
  /** The tool's name on the server (before any prefix). */
  readonly tool: string;
}

/** A Signalyard `Tool` that calls an MCP server's tool (what `McpClient.tools()` returns). */
export interface McpTool extends Tool {
  /** The server and the tool's name there (inspector and tracing show them). */
  readonly mcp: McpToolOrigin;
}

/** What every tool of one client shares. @internal */
export interface ToolFactoryContext {
  readonly defaultApproval: McpDefaultApproval;
  readonly maxResultChars: number;
  readonly validator: jsonSchemaValidator;
  readonly validators: WeakMap<object, JsonSchemaValidator<unknown>>;
}

/**
 * The approval hint an MCP tool's annotations give (untrusted hints; the MCP defaults are
 * `destructiveHint: true`, `readOnlyHint: false`): see {@link McpDefaultApproval}.
 */
function approvalHintOf(
  annotations: McpToolDefinition['annotations'],
  trusted: boolean,
  mode: McpDefaultApproval,
): 'allow' | 'ask' | undefined {
  const readOnly = annotations?.readOnlyHint === true;
  if (readOnly) return trusted ? 'allow' : undefined;
  if (mode === 'ask-unless-read-only') return 'ask';
  return annotations?.destructiveHint !== false ? 'ask' : undefined;
}

/**
 * `definition` of `connection`'s server as a Signalyard {@link McpTool} named `name` (the
 * prefixed name). Each call looks the tool up in the server's current list (gone →
 * `MCP_TOOL_GONE`), validates the arguments against its `inputSchema` (→ `ToolArgumentsError`),
 * sends `ctx.idempotencyKey` in `_meta`, cancels on `ctx.abortSignal`, reports progress through
 * `ctx.progress`, and turns the result into what the model reads. @internal
 */
export function mcpTool(
  connection: ServerConnection,
  definition: McpToolDefinition,
  name: string,
  shared: ToolFactoryContext,
): McpTool {
  const server = connection.name;
  const remote = definition.name;
  const hint = approvalHintOf(definition.annotations, connection.trusted, shared.defaultApproval);
  const description = definition.description ?? definition.title;
  return Object.freeze({
    name,
    ...(description !== undefined && { description }),
    parameters: definition.inputSchema,
    ...(hint !== undefined && { approvalHint: hint }),
    mcp: Object.freeze({ server, tool: remote }),
    async execute(args: unknown, ctx?: ToolContext): Promise<unknown> {
      const current = connection.tools.get(remote);
      if (current === undefined) {
        throw new McpError({
          code: 'MCP_TOOL_GONE',
          message: `MCP_TOOL_GONE: the MCP tool ${JSON.stringify(remote)} is no longer offered by server ${JSON.stringify(server)}`,
          server,
          tool: remote,
        });
      }
      const input = args ?? {};
      const problem = argumentsProblem(current, input, shared);
      if (problem !== undefined)
        throw new ToolArgumentsError({ toolName: name, issues: [{ path: '', message: problem }] });
      const annotations = current.annotations;
      // A hand-made call may pass no context at all.
      const c: Partial<ToolContext> = ctx ?? {};
      const progress = c.progress;
      const result = await connection.call(remote, input as Record<string, unknown>, {
        retrySafe: annotations?.readOnlyHint === true || annotations?.idempotentHint === true,
        ...(c.abortSignal !== undefined && { abortSignal: c.abortSignal }),
        ...(c.idempotencyKey !== undefined && { meta: { [IDEMPOTENCY_META_KEY]: c.idempotencyKey } }),
        ...(progress !== undefined && {
          onProgress: (p: { progress: number; total?: number; message?: string }) => {
            progress({
              progress: p.progress,
              ...(p.total !== undefined && { total: p.total }),
              ...(p.message !== undefined && { message: p.message }),
            });
          },
        }),
      });
      return toolResultValue(result, { server, tool: remote, maxChars: shared.maxResultChars });
    },
  });
}

/** Why `input` does not fit the tool's `inputSchema` (`undefined` when it does). */
function argumentsProblem(
  definition: McpToolDefinition,
  input: unknown,
  shared: ToolFactoryContext,
): string | undefined {
  if (typeof input !== 'object' || Array.isArray(input)) return 'expected an object of arguments';
  let validate = shared.validators.get(definition);
  if (validate === undefined) {
    validate = shared.validator.getValidator<unknown>(definition.inputSchema);
    shared.validators.set(definition, validate);
  }
  const checked = validate(input);
  return checked.valid ? undefined : checked.errorMessage;
}
