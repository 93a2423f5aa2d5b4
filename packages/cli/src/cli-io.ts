/**
 * A stream the command writes to: `process.stdout`, `process.stderr`, or anything with `write`.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const stderr: CliOutput = { write: (text: string) => lines.push(text), isTTY: false };
 * ```
 */
export interface CliOutput {
  /** Writes text (the command always passes whole lines, newline included). */
  write(text: string): unknown;
  /** True when the stream is a terminal. Colour is used only then. */
  readonly isTTY?: boolean;
  /** The terminal's width, used to wrap help text (80 when unknown). */
  readonly columns?: number;
}

/**
 * Where {@link run} reads its environment and writes its output. Every field is optional and
 * defaults to the process's own (`process.stdout`, `process.stderr`, `process.env`,
 * `process.cwd()`), so tests and embedders can capture output and pin the environment.
 *
 * @example
 * ```ts
 * let out = '';
 * await run(['graph', 'crew.yaml', '--format', 'json'], {
 *   stdout: { write: (s: string) => (out += s) },
 *   env: { NO_COLOR: '1' },
 *   cwd: '/path/to/project',
 * });
 * const graph = JSON.parse(out) as CrewGraph;
 * ```
 */
export interface CliIo {
  /** Receives the command's product: the summary, the graph, the resolution, help. */
  readonly stdout?: CliOutput;
  /** Receives configuration problems and error lines. */
  readonly stderr?: CliOutput;
  /** Read for `NO_COLOR` and `TERM`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Relative file arguments are resolved against this directory (and printed as given). */
  readonly cwd?: string;
  /** Stops `inspect` (which otherwise serves until the process gets SIGINT or SIGTERM). */
  readonly abortSignal?: AbortSignal;
}

/** ANSI styling for one stream; every function is the identity when colour is off. */
export interface Style {
  readonly enabled: boolean;
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly cyan: (text: string) => string;
  readonly yellow: (text: string) => string;
}

const plain = (text: string): string => text;
const sgr =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`;

const NO_STYLE: Style = Object.freeze({
  enabled: false,
  bold: plain,
  dim: plain,
  red: plain,
  green: plain,
  cyan: plain,
  yellow: plain,
});
const ANSI_STYLE: Style = Object.freeze({
  enabled: true,
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  cyan: sgr(36, 39),
  yellow: sgr(33, 39),
});

/**
 * Colour only on a terminal: the stream must say `isTTY`, `NO_COLOR` must be unset or empty
 * (https://no-color.org), and `TERM` must not be `dumb`.
 */
export function styleFor(stream: CliOutput, env: Readonly<Record<string, string | undefined>>): Style {
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return stream.isTTY === true && !noColor && env.TERM !== 'dumb' ? ANSI_STYLE : NO_STYLE;
}
