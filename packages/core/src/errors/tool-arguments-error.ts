import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

/** One reason a tool's arguments were rejected: where (`items[2].name`, `''` for the whole) and why. */
export interface ToolArgumentIssue {
  /** Where in the arguments, dotted (`items.0.sku`; `""` for the arguments themselves). */
  readonly path: string;
  /** What the schema expected there. */
  readonly message: string;
}

const marker = Symbol.for('signalyard.error.ToolArgumentsError');

/** The code of {@link ToolArgumentsError}. */
export type ToolArgumentsErrorCode =
  /** A model called a tool made with `defineTool` with arguments its zod schema rejects; `issues` names each one. Engines answer it to the model as a tool error message, so the model can retry. Fix: usually nothing (the model corrects itself); if it keeps failing, make the tool's description and schema clearer. */
  'TOOL_ARGUMENTS_INVALID';
const MAX_LISTED = 20;

/**
 * A model called a tool made with `defineTool` with arguments its schema rejects (code
 * `TOOL_ARGUMENTS_INVALID`). Thrown (as a rejection) by the tool's `execute` before the
 * definition's `execute` runs.
 *
 * It is not a run error: engines that run tools (the crew executor, pipeline stages) answer
 * **any** rejection of `Tool.execute` with a `tool` message describing the error
 * (`isError: true`), so the model sees this message — which names every problem — and can
 * call again with corrected arguments.
 */
export class ToolArgumentsError extends SignalyardError<ToolArgumentsErrorCode> {
  private readonly [marker] = true;
  /** The tool that was called. */
  readonly toolName: string;
  /** Every problem with the arguments, in schema order. Never empty. */
  readonly issues: readonly ToolArgumentIssue[];

  constructor(options: { toolName: string; issues: readonly ToolArgumentIssue[]; cause?: unknown }) {
    const issues = Object.freeze(options.issues.map((i) => Object.freeze({ path: i.path, message: i.message })));
    const listed = issues.slice(0, MAX_LISTED).map((i) => `${i.path === '' ? 'arguments' : i.path}: ${i.message}`);
    if (issues.length > MAX_LISTED) listed.push(`… and ${issues.length - MAX_LISTED} more`);
    super({
      code: 'TOOL_ARGUMENTS_INVALID',
      message: `Invalid arguments for tool ${JSON.stringify(options.toolName)}: ${listed.join('; ')}`,
      cause: options.cause,
    });
    this.toolName = options.toolName;
    this.issues = issues;
  }

  /** True when `error` is a `ToolArgumentsError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is ToolArgumentsError {
    return hasErrorMarker(error, marker);
  }
}
