/**
 * A NATS JetStream server of the tests' own (`@signalyard/test-utils/nats`, a subpath so that
 * tests which need no NATS never probe for the binary): {@link startNatsServer} runs the machine's
 * `nats-server -js` on a free port with a temporary store directory, and stops it. When the
 * binary is missing, the suites that need it ({@link describeNats}) are skipped with the reason
 * printed — or, with SIGNALYARD_REQUIRE_NATS=1 (CI), fail.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';

/** The binary the fixture runs: `NATS_SERVER`, else `nats-server` on the PATH. */
export const NATS_SERVER_BINARY = process.env.NATS_SERVER ?? 'nats-server';
const REQUIRED = process.env.SIGNALYARD_REQUIRE_NATS === '1';

/** Why the binary cannot be run, or `undefined` when it can. */
function probe(): string | undefined {
  const result = spawnSync(NATS_SERVER_BINARY, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (result.error !== undefined) return `${NATS_SERVER_BINARY} could not be run (${result.error.message})`;
  if (result.status !== 0) return `${NATS_SERVER_BINARY} --version exited with ${String(result.status)}`;
  return undefined;
}

const unavailable = probe();

/**
 * `describe` for tests that need `nats-server`: skipped with a printed reason when the binary is
 * missing, or failing when SIGNALYARD_REQUIRE_NATS=1 says it must be there.
 */
export function describeNats(name: string, fn: () => void): void {
  if (unavailable === undefined) {
    describe(name, fn);
  } else if (REQUIRED) {
    describe(name, () => {
      it('needs nats-server (SIGNALYARD_REQUIRE_NATS=1)', () => {
        throw new Error(
          `SIGNALYARD_REQUIRE_NATS=1 but ${unavailable}: install nats-server (2.9 or later) or set NATS_SERVER`,
        );
      });
    });
  } else {
    console.warn(
      `SKIPPED "${name}": ${unavailable}. Install nats-server to run it; SIGNALYARD_REQUIRE_NATS=1 makes this a failure.`,
    );
    describe.skip(name, fn);
  }
}

/** A running `nats-server -js` of a test's own. */
export interface NatsServer {
  /** Its client URL, `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its port. */
  readonly port: number;
  /** Its JetStream store directory (kept across {@link NatsServer.restart}). */
  readonly storeDir: string;
  /** Kills it with `signal` (default SIGKILL: no clean shutdown) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Pauses it (SIGSTOP) and resolves once it is stopped: connections stay open, nothing is answered. */
  pause(): Promise<void>;
  /** Resumes a paused server (SIGCONT). */
  resume(): void;
  /** Starts it again on the same port and store directory (after {@link NatsServer.kill}). */
  restart(): Promise<void>;
  /** Stops it and removes its store directory. */
  stop(): Promise<void>;
}

/** A TCP port nobody listens on now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/** Resolves once something accepts TCP connections on `port`; rejects after `ms`. */
async function listening(port: number, child: ChildProcess, output: () => string, ms = 15_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => {
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() - start > ms) throw new Error(`nats-server did not listen on ${port} within ${ms} ms: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once the process `pid` is stopped (its state in /proc is `T`), or after 2 s where /proc cannot tell. */
async function stopped(pid: number): Promise<void> {
  const until = Date.now() + 2000;
  while (Date.now() < until) {
    let state: string | undefined;
    try {
      state = /\) (\w)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
    } catch {
      state = undefined;
    }
    if (state === 'T' || state === 't') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits for `child` to exit. */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
}

/**
 * Starts `nats-server -js` on a free port (127.0.0.1) with a fresh temporary store directory.
 * Stop it with {@link NatsServer.stop} (an `afterAll`). `config`: the text of a server
 * configuration file (accounts, users, permissions) to run it with, besides those flags.
 */
export async function startNatsServer(opts: { config?: string } = {}): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'signalyard-nats-'));
  const configArgs: string[] = [];
  if (opts.config !== undefined) {
    const file = join(storeDir, 'server.conf');
    writeFileSync(file, opts.config);
    configArgs.push('-c', file);
  }
  let child: ChildProcess | undefined;
  let log = '';
  const launch = async (): Promise<void> => {
    log = '';
    const proc = spawn(
      NATS_SERVER_BINARY,
      [...configArgs, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    const keep = (chunk: Buffer): void => {
      log = (log + chunk.toString('utf8')).slice(-4000);
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    await listening(port, proc, () => log);
  };
  await launch();
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    if (child === undefined) return;
    const proc = child;
    child = undefined;
    proc.kill(signal);
    if (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT') await exited(proc);
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    kill,
    pause: async () => {
      const proc = child;
      if (proc?.pid === undefined) return;
      proc.kill('SIGSTOP');
      await stopped(proc.pid);
    },
    resume: () => child?.kill('SIGCONT'),
    restart: async () => {
      if (child !== undefined) throw new Error('nats-server is running: kill it before restart()');
      await launch();
    },
    stop: async () => {
      child?.kill('SIGCONT');
      await kill('SIGTERM');
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
