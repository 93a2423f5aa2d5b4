// `signalyard mcp serve` through the committed bin, driven by the MCP SDK's own client: over
// stdio as a desktop client starts it (the client spawns the command, and closing the client's
// end of stdin stops it), and over HTTP with a bearer token (stopped by SIGTERM).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES, PACKAGE_DIR, BUILD_TIMEOUT_MS, ensureBuiltCli, lines, runInProcess } from './support.js';

// Each test spawns the built CLI, which loads the runner: allow for a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const CONFIGS = join(FIXTURES, 'mcp');
const BIN = join(PACKAGE_DIR, 'bin', 'signalyard.js');
const clients: Client[] = [];
const children: ChildProcess[] = [];
beforeAll(() => {
  ensureBuiltCli();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface Answer {
  readonly session: string;
  readonly status: string;
  readonly output?: string;
}

/** Calls `tool` and returns its text and structured content. */
async function call(
  client: Client,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ text: string; answer: Answer }> {
  const result = await client.callTool({ name: tool, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return {
    text: content.map((c) => c.text ?? '').join(''),
    answer: result.structuredContent as Answer,
  };
}

describe('signalyard mcp serve --stdio (the bin, the SDK client)', () => {
  it('serves every agent of the config as ask_<agent>; a session continues; stdout carries only the protocol; closing stdin stops it', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', 'serve', '--config', 'desk.config.mjs', '--stdio'],
      cwd: CONFIGS,
      env: { ...process.env, NO_COLOR: '1' },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const protocolErrors: Error[] = [];
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    client.onerror = (error) => protocolErrors.push(error);
    await client.connect(transport);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask_billing', 'ask_support']);

    const first = await call(client, 'ask_support', { text: 'Where is A-7?' });
    expect(first.text).toBe('Your order A-7 shipped yesterday.');
    expect(first.answer).toMatchObject({ status: 'completed', output: 'Your order A-7 shipped yesterday.' });
    expect(first.answer.session).toMatch(/^[0-9a-f-]{36}$/);

    const second = await call(client, 'ask_support', { session: first.answer.session, text: 'When will it arrive?' });
    expect(second.answer).toEqual({
      session: first.answer.session,
      status: 'completed',
      output: 'It arrives on Monday.',
    });

    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await client.close();
    await closed;
    // The config's console.log went to stderr (the client would have reported a line it could not parse).
    expect(protocolErrors).toEqual([]);
    expect(lines(stderr)).toEqual([
      'desk config loaded',
      'mcp: serving ask_support, ask_billing over stdio (until stdin closes or Ctrl-C)',
      'mcp: stopping (stdin closed)',
    ]);
  });
});

describe('signalyard mcp serve --http (the bin, the SDK client)', () => {
  it('serves the --agents chosen, checks the bearer token ($SIGNALYARD_MCP_TOKEN), and stops on SIGTERM with exit 0', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'mcp', 'serve', '--config', 'desk.config.mjs', '--http', '0', '--agents', 'billing', '--approvals'],
      // The token from the environment, out of the process list (--token works the same).
      {
        cwd: CONFIGS,
        env: { ...process.env, NO_COLOR: '1', SIGNALYARD_MCP_TOKEN: 's3cret' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const found = /^mcp: (http:\/\/\S+)$/m.exec(stdout);
        if (found?.[1] !== undefined) resolve(found[1]);
      });
      void exited.then((code) => {
        reject(new Error(`exited ${code} before serving: ${stderr}`));
      });
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(stdout).toContain('(serving ask_billing; Ctrl-C stops it)');

    const anonymous = new Client({ name: 'cli-test', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toThrow(/unauthorized/);

    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer s3cret' } } }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['approve_billing', 'ask_billing']);
    const paid = await call(client, 'ask_billing', { text: 'Is invoice 12 paid?' });
    expect(paid.answer).toMatchObject({ status: 'completed', output: 'Invoice 12 is paid.' });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Over HTTP stdout is not the protocol's: the config's console.log stays there.
    expect(lines(stdout)).toEqual(['desk config loaded', `mcp: ${url}`, '(serving ask_billing; Ctrl-C stops it)']);
    expect(lines(stderr)).toEqual(['mcp: stopping (SIGTERM)']);
  });
});

describe('signalyard mcp serve: bad command lines (one line on stderr, nothing served)', () => {
  const serve = (args: readonly string[]) => runInProcess(['mcp', 'serve', ...args], { cwd: CONFIGS });

  it.each([
    [['--config', 'desk.config.mjs'], 'missing transport: pass --stdio or --http <port>'],
    [
      ['--config', 'desk.config.mjs', '--stdio', '--http', '8940'],
      'pass one of --stdio or --http, not both (--http 8940)',
    ],
    [['--config', 'desk.config.mjs', '--stdio', '--token', 't'], '--token applies to --http only'],
    [['--config', 'desk.config.mjs', '--http', '70000'], '--http 70000: expected a port, 0 to 65535'],
    [
      ['--config', 'desk.config.mjs', '--stdio', '--agents', 'support,'],
      '--agents "support,": expected agent ids separated by commas',
    ],
    [['--stdio'], "required option '--config <module>' not specified; see 'signalyard mcp serve --help'"],
    [
      ['--config', 'desk.config.mjs', '--http', 'x'],
      "option '--http <port>' argument 'x' is invalid. expected a port, an integer >= 0; see 'signalyard mcp serve --help'",
    ],
  ])('%j → exit 2: %s', async (args, message) => {
    const result = await serve(args);
    expect(result).toEqual({ code: 2, stdout: '', stderr: `signalyard: error: ${message}\n` });
  });

  it('$SIGNALYARD_MCP_TOKEN set but empty → exit 2 with --http; ignored with --stdio, where no token applies', async () => {
    const empty = { SIGNALYARD_MCP_TOKEN: '' };
    const result = await runInProcess(['mcp', 'serve', '--config', 'desk.config.mjs', '--http', '0'], {
      cwd: CONFIGS,
      env: empty,
    });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'signalyard: error: SIGNALYARD_MCP_TOKEN is set but empty: expected a non-empty bearer token\n',
    });
    // With --stdio the variable plays no part: the command line is fine (it fails later, on the agent list).
    const stdio = await runInProcess(['mcp', 'serve', '--config', 'desk.config.mjs', '--stdio', '--agents', 'nobody'], {
      cwd: CONFIGS,
      env: empty,
    });
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toMatch(/has no agent "nobody"/);
  });

  it('an agent the config does not have → exit 2 naming it and the agents there are; the runner is closed', async () => {
    const result = await serve(['--config', 'desk.config.mjs', '--http', '0', '--agents', 'support,sales']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'signalyard: error: --agents: config "desk.config.mjs" has no agent "sales" (its agents: support, billing)\n',
    );
  });

  it('a port already in use → exit 2 saying so; nothing is left open', async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) => {
      taken.listen(0, '127.0.0.1', () => {
        resolve((taken.address() as { port: number }).port);
      });
    });
    try {
      const result = await serve(['--config', 'desk.config.mjs', '--http', String(port)]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(`^signalyard: error: .*could not listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.*\n$`),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('a missing config → exit 2; `signalyard mcp` alone asks for the subcommand', async () => {
    const missing = await serve(['--config', 'nowhere.config.mjs', '--stdio']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^signalyard: error: cannot load config "nowhere\.config\.mjs": no such file/);
    expect(await runInProcess(['mcp'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "signalyard: error: missing subcommand: serve (see 'signalyard mcp --help')\n",
    });
  });
});
