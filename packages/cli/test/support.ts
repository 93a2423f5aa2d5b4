import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, type CliIo } from '@signalyard/cli';

export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = join(PACKAGE_DIR, '..', '..');
export const FIXTURES = join(PACKAGE_DIR, 'test', 'fixtures');
const BUILT_CLI = join(PACKAGE_DIR, 'dist', 'cli.js');
/** The committed bin shim users run (it imports dist/cli.js). */
const BIN = join(PACKAGE_DIR, 'bin', 'signalyard.js');

/** What one run of the command produced. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The packages whose `dist/` the built bin loads (itself and its workspace dependencies). */
const BUILT_PACKAGES = [
  'core',
  'router',
  'fsm',
  'sessions',
  'crew',
  'pipeline',
  'signalyard',
  'store-sqlite',
  'store-postgres',
  'inspector',
  'mcp',
  'replay',
  'cli',
] as const;

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when a package has no `dist/index.js` (or the cli no `dist/cli.js`) newer than its sources. */
function isStale(pkg: string): boolean {
  const dir = join(REPO_ROOT, 'packages', pkg);
  const outputs = [join(dir, 'dist', 'index.js'), ...(pkg === 'cli' ? [join(dir, 'dist', 'cli.js')] : [])];
  const sources = Math.max(
    newestMtime(join(dir, 'src')),
    newestMtime(join(dir, 'package.json')),
    newestMtime(join(dir, 'tsup.config.ts')),
  );
  return outputs.some((file) => !existsSync(file) || statSync(file).mtimeMs < sources);
}

/**
 * How long a test file's `beforeAll` may take to build the CLI (and what it depends on) when its
 * output is stale: minutes on a fresh clone of a busy 2-core machine (another `pnpm test` beside
 * it, a build of the whole workspace), so generous: a slow build is not a failure.
 */
export const BUILD_TIMEOUT_MS = 900_000;

/**
 * Builds `dist/cli.js` and the `dist/` of the workspace packages it imports, when any is missing
 * or older than its sources (a fresh clone runs `pnpm test` without a build). Returns the bin.
 */
export function ensureBuiltCli(): string {
  if (BUILT_PACKAGES.some(isStale)) {
    try {
      execFileSync('pnpm', ['--filter', '@signalyard/cli...', 'run', 'build'], {
        cwd: REPO_ROOT,
        stdio: 'pipe',
        encoding: 'utf8',
      });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      throw new Error(`building @signalyard/cli failed:\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: error });
    }
  }
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing after the build`);
  return BUILT_CLI;
}

/**
 * Runs the built program with `node` as a child process (stdout and stderr are pipes, not
 * terminals); with `bin`, through the committed bin shim, as the installed command runs.
 */
export function runBuiltCli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; bin?: boolean } = {},
): Promise<CliResult> {
  const env = Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter(([, v]) => v !== undefined));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin === true ? BIN : BUILT_CLI, ...args], {
      cwd: options.cwd ?? FIXTURES,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the command in-process with captured streams (terminals when `tty`). */
export async function runInProcess(
  args: readonly string[],
  options: { tty?: boolean; env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s), isTTY: options.tty ?? false },
    stderr: { write: (s: string) => (stderr += s), isTTY: options.tty ?? false },
    env: options.env ?? {},
    cwd: options.cwd ?? FIXTURES,
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
}

/** A `signalyard inspect` running in-process (see {@link startInspect}). */
export interface RunningInspect {
  /** What it printed so far (stdout and stderr). */
  readonly output: () => string;
  /** The page's address, with its token. */
  readonly address: URL;
  /** Reads one of the page's JSON endpoints with the token. */
  readonly get: (path: string) => Promise<{ status: number; body: Record<string, unknown> }>;
  /** Aborts it; resolves with its exit code. */
  readonly stop: () => Promise<number>;
}

/**
 * Runs `signalyard inspect <args> --port 0` in-process until it has printed `until` (default: its
 * first line, the address); throws with its output when it exits first or prints no address.
 */
export async function startInspect(
  args: readonly string[],
  options: { cwd: string; until?: string },
): Promise<RunningInspect> {
  const controller = new AbortController();
  let out = '';
  let printed!: () => void;
  const ready = new Promise<void>((resolve) => (printed = resolve));
  const running = run(['inspect', ...args, '--port', '0'], {
    stdout: {
      write: (s: string) => {
        out += s;
        if (out.includes(options.until ?? '\n')) printed();
      },
    },
    stderr: { write: (s: string) => (out += s) },
    cwd: options.cwd,
    abortSignal: controller.signal,
  });
  await Promise.race([ready, running]);
  const match = /^inspector: (\S+)$/m.exec(out);
  if (match === null) {
    controller.abort();
    throw new Error(`inspect did not start (exit ${String(await running)}): ${out}`);
  }
  const address = new URL(match[1] as string);
  const token = address.searchParams.get('token') ?? '';
  return {
    output: () => out,
    address,
    get: async (path) => {
      const res = await fetch(`${address.origin}${path}${path.includes('?') ? '&' : '?'}token=${token}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    stop: async () => {
      controller.abort();
      return running;
    },
  };
}

/** The lines of a stream's output (without the final newline). */
export const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

// eslint-disable-next-line no-control-regex -- matching ANSI escapes is the point
export const ANSI = /\u001b\[/;

/** `file:line: path: message`, the problem format of the contract. */
export const PROBLEM_LINE = /^[^:\s][^:]*:\d+: [^:]+: .+$/;

/** The Mermaid of the exam crew, as `signalyard graph` prints it. */
export const EXAM_MERMAID = `flowchart LR
    start(("start"))
    a0["teacher (Teacher)"]
    a1["student (Student)"]
    a2["reporter (Reporter)"]
    g0{{"parallel_question (wait for all, 30s)"}}
    stop((("end")))
    start --> a0
    a0 -->|"[QUESTION]"| g0
    a0 -->|"[END_EXAM]"| stop
    a0 -.->|"fallback"| a1
    a1 -->|"[ANSWER]"| a0
    a2 -.->|"is_terminal"| stop
    g0 ==>|"fan-out"| a1
    g0 ==>|"fan-out"| a2
    g0 -->|"next_agent"| a0
`;

/** The JSON graph of the exam crew. */
export const EXAM_GRAPH = {
  version: 1,
  entryPoint: 'teacher',
  handoffMode: 'marker',
  resumeAt: 'entry',
  agents: [
    { id: 'teacher', name: 'Teacher', entry: true, waitForSignal: false, isTerminal: false },
    { id: 'student', name: 'Student', entry: false, waitForSignal: false, isTerminal: false },
    { id: 'reporter', name: 'Reporter', entry: false, waitForSignal: false, isTerminal: true },
  ],
  parallelGroups: [
    {
      id: 'parallel_question',
      agents: ['student', 'reporter'],
      waitForAll: true,
      timeoutSeconds: 30,
      nextAgent: 'teacher',
    },
  ],
  edges: [
    {
      kind: 'signal',
      from: 'teacher',
      to: 'parallel_question',
      toKind: 'parallel_group',
      signal: '[QUESTION]',
      description: 'ask both',
    },
    { kind: 'fallback', from: 'teacher', to: 'student', order: 0 },
    { kind: 'signal', from: 'student', to: 'teacher', toKind: 'agent', signal: '[ANSWER]' },
    { kind: 'fan_out', from: 'parallel_question', to: 'student' },
    { kind: 'fan_out', from: 'parallel_question', to: 'reporter' },
    { kind: 'next_agent', from: 'parallel_question', to: 'teacher' },
  ],
  terminations: [
    { kind: 'signal', agent: 'teacher', signal: '[END_EXAM]' },
    { kind: 'terminal_agent', agent: 'reporter' },
  ],
};

/** Every problem of test/fixtures/invalid-crew.yaml, as printed. */
export const INVALID_CREW_PROBLEMS = [
  'invalid-crew.yaml:1: entry_point: unknown agent "principal" (agents: "teacher", "student")',
  'invalid-crew.yaml:4: agents[0].handof_targets: unknown key "handof_targets" (expected id, name, description, system_prompt, handoff_targets, tools, mcp)',
  'invalid-crew.yaml:7: settings.max_handoffs: expected a positive integer, got 0',
  'invalid-crew.yaml:11: routing.signals.teacher[0].signal: invalid signal "QUESTION": expected "[NAME]" (starts with "[", ends with "]", no other bracket inside, not blank)',
  'invalid-crew.yaml:12: routing.signals.teacher[1].target: unknown target "nobody": expected an agent ("teacher", "student"), a parallel group (none), or "" to end the run',
];

/** Every problem of test/fixtures/invalid-routing.toml, as printed. */
export const INVALID_ROUTING_PROBLEMS = [
  'invalid-routing.toml:2: routing.default_agent: agent id "Main Bot" is not canonical: write "main-bot" (lowercase [a-z0-9_-], at most 64 characters)',
  'invalid-routing.toml:5: routing.session.dm_scope: DM scope "per-person" is not "main", "per-peer" or "per-channel-peer"',
  'invalid-routing.toml:8: routing.session.identity_links.john[0]: identity-link entry "123456" has no channel: write "channel:id" (a bare id would link that id on every channel)',
  'invalid-routing.toml:12: routing.bindings[0].match.channel: a peer binding needs a channel: without one it would match peer "user-vip" on every channel',
  'invalid-routing.toml:13: routing.bindings[0].match.chanel: unknown key "chanel" (expected "channel", "account_id", "peer", "guild_id", "team_id")',
];

/** The five rows of the sessions contract's "Acceptance examples", as `resolve` arguments. */
export const ACCEPTANCE_ROWS: readonly {
  readonly input: string;
  readonly args: readonly string[];
  readonly matchedBy: string;
  readonly agent: string;
  readonly key: string;
  readonly binding: string;
}[] = [
  {
    input: 'telegram, dm 123',
    args: ['--channel', 'telegram', '--peer', 'dm:123'],
    matchedBy: 'channel',
    agent: 'general',
    key: 'agent:general:dm:john',
    binding: 'routing.bindings[1] (agent general)',
  },
  {
    input: 'telegram, group grp1',
    args: ['--channel', 'telegram', '--peer', 'group:grp1'],
    matchedBy: 'channel',
    agent: 'general',
    key: 'agent:general:telegram:group:grp1',
    binding: 'routing.bindings[1] (agent general)',
  },
  {
    input: 'discord, dm 456',
    args: ['--channel', 'discord', '--peer', 'dm:456'],
    matchedBy: 'default',
    agent: 'main',
    key: 'agent:main:dm:john',
    binding: 'none (no binding matched: the default agent)',
  },
  {
    input: 'slack, team T12345, dm user789',
    args: ['--channel', 'slack', '--team', 'T12345', '--peer', 'dm:user789'],
    matchedBy: 'team',
    agent: 'work',
    key: 'agent:work:dm:user789',
    binding: 'routing.bindings[0] (agent work)',
  },
  {
    input: 'cli (no peer)',
    args: ['--channel', 'cli'],
    matchedBy: 'default',
    agent: 'main',
    key: 'agent:main:main',
    binding: 'none (no binding matched: the default agent)',
  },
];

/** The warnings `validate` prints for test/fixtures/routing-shadowed.toml (two bindings that can never win). */
export const SHADOWED_ROUTING_WARNINGS = [
  'routing-shadowed.toml:17: routing.bindings[2]: warning: this binding can never win: bindings[1] comes first at the same tier (peer) and matches every message this one matches (it does not require an account)',
  'routing-shadowed.toml:36: routing.bindings[5]: warning: this binding can never win: bindings[4] comes first at the same tier (team) and matches every message this one matches (it does not require a channel)',
];

/** The summary `validate` prints after them. */
export const SHADOWED_ROUTING_SUMMARY =
  'routing-shadowed.toml: valid routing config: 6 bindings, 0 identity links, default agent "main", dm_scope "per-peer"; 2 warnings';
