// `signalyard inspect` in-process against a temporary SQLite file: it prints the page's address,
// serves the store's sessions read-only until its abort signal fires, and reports bad input.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { seed } from './session-fixtures.js';
import { runInProcess, startInspect } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-inspect-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
async function database(): Promise<string> {
  const file = `sessions-${++files}.db`;
  const store = new SqliteCheckpointStore({ path: join(dir, file) });
  await seed(store, 'agent:support:main');
  await store.close();
  return `sqlite:${file}`;
}

describe('signalyard inspect', () => {
  it('prints the address with its token, serves the sessions and versions read-only, and stops on abort (exit 0)', async () => {
    const url = await database();
    const inspector = await startInspect(['--store', url], { cwd: dir });
    const stdout = inspector.output();
    const address = /^inspector: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32})$/m.exec(stdout)?.[1];
    expect(address, stdout).toBeDefined();
    expect(stdout).toContain(`${url}, read-only`);
    const { origin, searchParams } = new URL(address!);
    const token = searchParams.get('token')!;
    const sessions = (await (await fetch(`${origin}/api/sessions?token=${token}`)).json()) as { sessions: unknown[] };
    expect(sessions.sessions).toEqual([
      expect.objectContaining({ sessionKey: 'agent:support:main', agentId: 'support', version: 4 }),
    ]);
    const history = (await (await fetch(`${origin}/api/history?key=agent:support:main&token=${token}`)).json()) as {
      versions: unknown[];
    };
    expect(history.versions).toHaveLength(4);
    const fork = await fetch(`${origin}/api/fork?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'agent:support:main', to: 'agent:support:b' }),
    });
    expect(fork.status).toBe(403);
    expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    expect(await inspector.stop()).toBe(0);
    await expect(fetch(`${origin}/api/sessions?token=${token}`)).rejects.toThrow();
  });

  it('a port in use, a bad port and a missing store are usage errors (exit 2), one line each', async () => {
    const url = await database();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = String((blocker.address() as { port: number }).port);
    const taken = await runInProcess(['inspect', '--store', url, '--port', port], { cwd: dir });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(
      /^signalyard: error: The inspector cannot listen on "127\.0\.0\.1" port \d+: the port is in use/,
    );
    await new Promise((resolve) => blocker.close(resolve));

    const badPort = await runInProcess(['inspect', '--store', url, '--port', 'x'], { cwd: dir });
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('expected a port');
    const missing = await runInProcess(['inspect', '--store', 'sqlite:nope.db'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
    const noStore = await runInProcess(['inspect'], { cwd: dir });
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toContain("required option '--store <url>'");
  });

  it('--inbox also serves the inbox in the same database: a session’s entries waiting and the overview', async () => {
    const url = await database();
    const inbox = new SqliteInbox({ path: join(dir, url.slice('sqlite:'.length)) });
    await inbox.accept({
      sessionKey: 'agent:support:main',
      signal: { kind: 'user_message', payload: { text: 'next' } },
      id: 'n1',
    });
    await inbox.close();
    const inspector = await startInspect(['--store', url, '--inbox'], { cwd: dir });
    expect(inspector.output()).toContain(`${url} with its inbox, read-only`);
    const get = async (path: string) => (await inspector.get(path)).body;
    expect(await get('/api/info?')).toMatchObject({ inbox: true });
    const waiting = await get('/api/inbox?key=agent:support:main');
    expect(waiting.entries).toEqual([expect.objectContaining({ seq: '1', kind: 'user_message', text: 'next' })]);
    expect((await get('/api/inbox/overview?')).pending).toEqual([{ sessionKey: 'agent:support:main', count: 1 }]);
    expect(await inspector.stop()).toBe(0);
  });

  it('--inbox-table without --inbox is a usage error (exit 2)', async () => {
    const url = await database();
    const result = await runInProcess(['inspect', '--store', url, '--inbox-table', 'x'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--inbox-table applies with --inbox only');
  });

  it('--replay serves a replay report at #replay (read again on reload); a missing file is exit 2 before anything starts', async () => {
    const url = await database();
    const report = { sessions: [{ sessionKey: 'agent:support:main', status: 'same', turns: [], divergences: [] }] };
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    const inspector = await startInspect(['--store', url, '--replay', 'report.json'], {
      cwd: dir,
      until: 'replay report:',
    });
    expect(inspector.output()).toContain(`replay report: ${inspector.address.href}#replay`);
    const get = async (path: string): Promise<unknown> => (await inspector.get(path)).body;
    expect(await get('/api/info')).toMatchObject({ replay: true });
    expect(await get('/api/replay')).toEqual(report);
    expect(await inspector.stop()).toBe(0);

    const missing = await runInProcess(['inspect', '--store', url, '--replay', 'nope.json'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read "nope.json": no such file');
  });
});
