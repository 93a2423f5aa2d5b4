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

/**
 * The characters a terminal acts on instead of printing: C0 controls (ESC starts escape
 * sequences, CR and LF move the cursor), DEL, C1 controls (CSI is an escape sequence on its own),
 * the bidirectional formatting characters (U+202E shows what follows reversed) and the line and
 * paragraph separators.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(ch: string): string {
  const short = SHORT_ESCAPES[ch];
  if (short !== undefined) return short;
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` made safe to print on a terminal: every character a terminal would act on (see
 * `TERMINAL_UNSAFE`: controls, bidirectional formatting, line separators) is shown as a visible
 * escape — `\n`, `\r`, `\t`, `\x1b`, `\x85`, `\u202e` — and everything else is printed as it is
 * (so a key made by this release prints exactly, and can be copied back into a command). The one
 * escaping of the CLI: everything it prints that came from outside (a stored key, an agent id, a
 * message, a cause) goes through it, also text written by an older release that allowed such
 * characters in keys.
 *
 * @example
 * ```ts
 * terminalText('agent:main:dm:eve\u001b[2J');  // 'agent:main:dm:eve\\x1b[2J'
 * ```
 */
export function terminalText(text: string): string {
  TERMINAL_UNSAFE.lastIndex = 0;
  return TERMINAL_UNSAFE.test(text) ? text.replace(TERMINAL_UNSAFE, visibleEscape) : text;
}

/** What {@link terminalJson} escapes: {@link TERMINAL_UNSAFE} but C0, which `JSON.stringify` escapes in strings and writes raw only as layout. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify(value, null, space)` safe to print on a terminal and still the same JSON:
 * `JSON.stringify` already escapes C0 controls inside strings; the other characters a terminal
 * acts on (DEL, C1, bidirectional formatting, line separators), which can only stand inside
 * strings, are written as `\uXXXX` escapes, which parse back to the same value.
 */
export function terminalJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    JSON_UNSAFE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
