import type { CliOutput, Style } from './cli-io.js';

/** What a command needs from `run`: the streams, their styles and the working directory. */
export interface CommandContext {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** Styling for stdout (colour only when stdout is a terminal). */
  readonly out: Style;
  /** Styling for stderr (colour only when stderr is a terminal). */
  readonly err: Style;
  readonly cwd: string;
  /** The environment variables commands read (`CliIo.env`, default the process's). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** `n thing` / `n things`. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
