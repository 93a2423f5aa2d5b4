import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpStdioServer } from '@signalyard/mcp';

/** The SDK-written test server (test/fixtures/test-server.mjs). */
const TEST_SERVER = fileURLToPath(new URL('./fixtures/test-server.mjs', import.meta.url));

/** A fresh file the test server appends one JSON line per call to. */
export function callLog(): string {
  return join(mkdtempSync(join(tmpdir(), 'signalyard-mcp-')), 'calls.jsonl');
}

/** The calls a test server logged: `{ pid, tool, args, meta }`. */
export function loggedCalls(
  file: string,
): { pid: number; tool: string; args?: unknown; meta?: Record<string, unknown> | null }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { pid: number; tool: string });
}

/** The test server over stdio. */
export function stdioServer(log: string, env: Record<string, string> = {}): McpStdioServer {
  return { command: process.execPath, args: [TEST_SERVER, '--stdio'], env: { MCP_TEST_LOG: log, ...env } };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The test server over Streamable HTTP in a child process, resolved once it listens. */
export async function httpServer(
  port: number,
  log: string,
  opts: { stateless?: boolean; env?: Record<string, string> } = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [TEST_SERVER, '--http', String(port), ...(opts.stateless === true ? ['--stateless'] : [])],
    {
      env: { ...process.env, MCP_TEST_LOG: log, ...opts.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`test server exited with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve();
    });
  });
  return child;
}

/** Ends a child process and waits for it to be gone. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}
