import { readdirSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { MemoryCheckpointStore, signal } from '@signalyard/core';
import { rejectsCode } from '@signalyard/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { InspectorError, startInspector, type Inspector, type InspectorOptions } from '../src/index.js';
import { http, says, testRunner } from './fixture.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies, read field by field
type Json = Record<string, any>;

const open: Inspector[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
});

async function start(opts: InspectorOptions): Promise<Inspector & { base: string; cookie: string }> {
  const inspector = await startInspector({ port: 0, ...opts });
  open.push(inspector);
  const base = new URL(inspector.url).origin;
  const port = new URL(inspector.url).port;
  return Object.assign(inspector, { base, cookie: `signalyard_inspector_${port}=${inspector.token}` });
}

async function getJson(i: { base: string; cookie: string }, path: string) {
  const res = await http(`${i.base}${path}`, { headers: { cookie: i.cookie } });
  return { status: res.status, body: JSON.parse(res.body) as Json };
}

async function postJson(i: { base: string; cookie: string }, path: string, body: unknown, headers = {}) {
  const res = await http(`${i.base}${path}`, {
    method: 'POST',
    headers: { cookie: i.cookie, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(res.body) as Json };
}

describe('startInspector: options', () => {
  it.each([
    [{}, 'expected a runner (live) or a store (offline), got neither'],
    [{ runner: { on() {} } }, 'it has no listSessions, session, sessionAt, history method'],
    [{ store: { load() {} } }, 'store: expected a CheckpointStore'],
    [{ store: new MemoryCheckpointStore(), port: 70000 }, 'port: expected an integer from 0'],
    [{ store: new MemoryCheckpointStore(), host: '' }, 'host: expected an address'],
    [{ store: new MemoryCheckpointStore(), token: 'a b' }, 'token: expected a non-empty string'],
    [{ store: new MemoryCheckpointStore(), allowedHosts: [''] }, 'allowedHosts: expected a list'],
    [{ store: new MemoryCheckpointStore(), by: '  ' }, 'by: expected a non-empty name'],
    [{ store: new MemoryCheckpointStore(), timelineLimit: 0 }, 'timelineLimit: expected an integer >= 1'],
    [{ store: new MemoryCheckpointStore(), abortSignal: {} }, 'abortSignal: expected an AbortSignal'],
    [{ store: new MemoryCheckpointStore(), maxEventStreams: 0 }, 'maxEventStreams: expected an integer >= 1, got 0'],
    [{ store: new MemoryCheckpointStore(), maxEventStreamBytes: 1.5 }, 'maxEventStreamBytes: expected an integer >= 1'],
    [{ store: new MemoryCheckpointStore(), clock: Date }, 'clock: expected a Clock ({ now(): number })'],
    [
      { store: new MemoryCheckpointStore(), diagrams: { desk: { fsm: 1 } } },
      'diagrams.desk.fsm: expected Mermaid text',
    ],
    [
      { store: new MemoryCheckpointStore(), diagrams: { desk: { state: 'x' } } },
      'diagrams.desk.state: unknown diagram',
    ],
    [{ store: new MemoryCheckpointStore(), diagrams: [] }, 'diagrams: expected'],
  ])('refuses %j, naming the problem', async (opts, problem) => {
    const error = await rejectsCode(startInspector(opts as InspectorOptions), 'INSPECTOR_OPTIONS_INVALID');
    expect(InspectorError.isInstance(error)).toBe(true);
    expect(error.message).toContain(problem);
  });

  it('refuses a non-object and lists every problem at once', async () => {
    await rejectsCode(startInspector(null as unknown as InspectorOptions), 'INSPECTOR_OPTIONS_INVALID');
    const error = await rejectsCode(startInspector({ port: -1, token: '' }), 'INSPECTOR_OPTIONS_INVALID');
    expect(error.message).toContain('neither');
    expect(error.message).toContain('port');
    expect(error.message).toContain('token');
  });

  it('InspectorError.isInstance matches only its own errors', () => {
    expect(InspectorError.isInstance(new Error('x'))).toBe(false);
    expect(InspectorError.isInstance(new InspectorError({ code: 'INSPECTOR_LISTEN_FAILED', message: 'x' }))).toBe(true);
  });

  it('a port in use is INSPECTOR_LISTEN_FAILED, and nothing is left listening', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const error = await rejectsCode(
      startInspector({ store: new MemoryCheckpointStore(), port }),
      'INSPECTOR_LISTEN_FAILED',
    );
    expect(error.message).toContain('the port is in use');
    await new Promise((resolve) => blocker.close(resolve));
  });

  it('an already aborted signal rejects with ABORTED', async () => {
    await rejectsCode(
      startInspector({ store: new MemoryCheckpointStore(), abortSignal: AbortSignal.abort() }),
      'ABORTED',
    );
  });

  it('binds 127.0.0.1 with a random 32-hex token by default; the url carries it', async () => {
    const i = await start({ store: new MemoryCheckpointStore() });
    expect(i.token).toMatch(/^[0-9a-f]{32}$/);
    expect(i.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?token=${i.token}$`));
  });
});

/** Sends `target` as the request line's target byte for byte (no client-side URL parsing); resolves with the response head. */
function rawGet(base: string, target: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`),
    );
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (head += chunk));
    socket.on('end', () => resolve(head));
    socket.on('error', reject);
  });
}

describe('startInspector: access rules', () => {
  it('answers 401 without the token, with a wrong token, and for the event stream', async () => {
    const i = await start({ store: new MemoryCheckpointStore() });
    for (const path of ['/', '/api/sessions', '/api/events', '/assets/app.js', '/?token=wrong']) {
      const res = await http(`${i.base}${path}`);
      expect(res.status, path).toBe(401);
    }
    const post = await http(`${i.base}/api/fork`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(post.status).toBe(401);
  });

  it('takes the token from the query once: sets an HttpOnly, SameSite=Strict cookie named after the port and redirects without it', async () => {
    const i = await start({ store: new MemoryCheckpointStore(), token: 'secret-token' });
    const port = new URL(i.url).port;
    const res = await http(i.url);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(String(res.headers['set-cookie'])).toBe(
      `signalyard_inspector_${port}=secret-token; HttpOnly; SameSite=Strict; Path=/`,
    );
    const page = await http(`${i.base}/`, {
      headers: { cookie: `other=1; signalyard_inspector_${port}=secret-token` },
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signalyard inspector');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it.each([
    ['/.//evil.com/', '/evil.com/'],
    ['/..//evil.com/', '/evil.com/'],
    ['//evil.com/', '/'],
    ['///evil.com/', '/'],
    ['/\\evil.com/', '/'],
    ['/.\\/evil.com/', '/evil.com/'],
    ['/%2F%2Fevil.com/', '/%2F%2Fevil.com/'],
    ['/%5C%5Cevil.com/', '/%5C%5Cevil.com/'],
    ['/%09/evil.com/', '/%09/evil.com/'],
    ['/%0a//evil.com/', '/%0a//evil.com/'],
    ['/.//%0d%0a/evil.com/', '/%0d%0a/evil.com/'],
  ])('redirects %s?token=… only to a path of its own origin (%s), never to another host', async (path, expected) => {
    const i = await start({ store: new MemoryCheckpointStore(), token: 'secret-token' });
    const head = await rawGet(i.base, `${path}?token=secret-token&x=1`);
    expect(head).toMatch(/^HTTP\/1\.1 303/);
    const location = /\r\nlocation: ([^\r]*)\r\n/i.exec(head)?.[1];
    expect(location).toBe(`${expected}?x=1`);
    expect(location).toMatch(/^\/(?![/\\])/);
    expect(new URL(location!, i.base).origin).toBe(i.base);
  });

  it('rejects a Host header outside allowedHosts (DNS rebinding) with 403, even with the token', async () => {
    const i = await start({ store: new MemoryCheckpointStore() });
    const port = new URL(i.url).port;
    const evil = await http(`${i.base}/api/info`, { headers: { cookie: i.cookie, host: `evil.example:${port}` } });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).error.code).toBe('host_not_allowed');
    const local = await http(`${i.base}/api/info`, { headers: { cookie: i.cookie, host: `localhost:${port}` } });
    expect(local.status).toBe(200);
  });

  it('allowedHosts replaces the loopback names', async () => {
    const i = await start({ store: new MemoryCheckpointStore(), allowedHosts: ['inspector.test'] });
    expect((await http(`${i.base}/api/info`, { headers: { cookie: i.cookie } })).status).toBe(403);
    const ok = await http(`${i.base}/api/info`, { headers: { cookie: i.cookie, host: 'inspector.test' } });
    expect(ok.status).toBe(200);
  });

  it('refuses a POST from another origin', async () => {
    const runner = testRunner();
    const i = await start({ runner });
    const res = await postJson(
      i,
      '/api/fork',
      { from: 'agent:desk:main', to: 'agent:desk:b' },
      { origin: 'http://evil.example' },
    );
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('origin_not_allowed');
    await runner.close();
  });
});

describe('startInspector: the API over a live runner', () => {
  it('lists sessions with their status, shows one with its FSM diagram highlighted, its versions and its timeline', async () => {
    const runner = testRunner();
    const i = await start({ runner }); // diagrams from runner.describe()
    await runner.dispatch('agent:desk:main', signal('user_message', { text: 'hello' }));
    await runner.dispatch('agent:review:main', signal('user_message', { text: 'review this' }));

    const { body: list } = await getJson(i, '/api/sessions');
    expect(list.sessions.map((s: { sessionKey: string }) => s.sessionKey)).toEqual([
      'agent:desk:main',
      'agent:review:main',
    ]);
    expect(list.sessions[0]).toMatchObject({ agentId: 'desk', version: 1, status: 'idle', pendingApprovals: 0 });
    const { body: filtered } = await getJson(i, '/api/sessions?prefix=agent:review:&limit=1');
    expect(filtered.sessions).toHaveLength(1);

    const { body: detail } = await getJson(i, '/api/session?key=agent:desk:main');
    expect(detail.session).toMatchObject({
      agentId: 'desk',
      version: 1,
      strategy: { current_state: 'open' },
      busy: false,
    });
    // A transition does not run the engine: the chat holds the user's message.
    expect(detail.session.transcript).toEqual([expect.objectContaining({ type: 'user', text: 'hello' })]);
    expect(detail.diagrams.fsm).toContain('class open current');

    const { body: history } = await getJson(i, '/api/history?key=agent:desk:main');
    expect(history.versions[0]).toMatchObject({ version: 1, cause: { tier: 'agent', routeName: 'open-ticket' } });

    const { body: timeline } = await getJson(i, '/api/timeline?key=agent:desk:main');
    const types = timeline.entries.map((e: { type: string }) => e.type);
    expect(types).toEqual(['outcome', 'transition', 'route', 'signal']);
    expect(timeline.source).toBe('runner');
    // Explained by the Runner while the inspector is attached: the route it beat.
    expect(timeline.entries[2]).toMatchObject({
      tier: 'agent',
      routeName: 'open-ticket',
      action: 'transition(open)',
      considered: [
        { tier: 'agent', routeName: 'open-ticket', outcome: 'matched' },
        { tier: 'agent', routeName: 'fallback-chat', outcome: 'outranked' },
      ],
    });
    // The page's entries are the runner's: same seq, time and duration.
    const own = runner.timeline('agent:desk:main');
    expect(timeline.entries.map((e: { seq: number }) => e.seq)).toEqual(own.map((e) => e.seq));
    expect(timeline.entries[0].durationMs).toBe(own[0]?.durationMs);
    expect(timeline.entries[1]).toMatchObject({ from: 'new', to: 'open', action: 'open' });
    expect(timeline.entries[0].status).toBe('completed');
    expect(timeline.entries[0].durationMs).toBeGreaterThanOrEqual(0);
    await runner.close();
  });

  it("catches up from the runner's timeline, draws every agent from describe() (the diagrams option overriding one), and stops explaining when closed", async () => {
    const runner = testRunner();
    await runner.dispatch('agent:desk:main', says('before the inspector'));
    await runner.dispatch('agent:support:main', says('charged twice'));
    const i = await start({ runner, diagrams: { review: { pipeline: 'flowchart LR\n  given --> here' } } });
    const { body: timeline } = await getJson(i, '/api/timeline?key=agent:desk:main');
    expect(timeline.entries.map((e: { type: string }) => e.type)).toEqual(['outcome', 'transition', 'route', 'signal']);
    expect(timeline.entries[2].considered).toBeNull(); // decided before anyone asked for explanations
    const { body: crew } = await getJson(i, '/api/timeline?key=agent:support:main');
    expect(crew.entries.some((e: { type: string; event?: { type: string } }) => e.event?.type === 'handoff')).toBe(
      true,
    );
    await runner.dispatch('agent:review:main', says('review'));
    const { body: support } = await getJson(i, '/api/session?key=agent:support:main');
    expect(support.diagrams.crew).toContain('flowchart LR');
    expect(support.diagrams.crew).toContain('"transfer_to_billing"');
    const { body: review } = await getJson(i, '/api/session?key=agent:review:main');
    expect(review.diagrams).toEqual({ pipeline: 'flowchart LR\n  given --> here' });
    expect((await getJson(i, '/api/timeline?key=not a key')).status).toBe(400);

    await i.close();
    const decisions: unknown[] = [];
    runner.on((e) => {
      if (e.type === 'route_decided') decisions.push(e.considered);
    });
    await runner.dispatch('agent:desk:main', says('after the inspector'));
    expect(decisions).toEqual([undefined]);
    await runner.close();
  });

  it('over a runner without timeline(), logs the events itself, stamped and timed by its clock', async () => {
    const runner = testRunner();
    let now = Date.parse('2030-01-02T03:04:05.000Z');
    const clock = { now: () => now };
    // The Runner taken structurally, without its timeline(): the inspector keeps its own log.
    const bare = {
      on: runner.on.bind(runner),
      listSessions: runner.listSessions.bind(runner),
      session: runner.session.bind(runner),
      sessionAt: runner.sessionAt.bind(runner),
      history: runner.history.bind(runner),
    };
    const i = await start({ runner: bare, clock });
    // The signal arrives at `now`; routing takes 1.5 s of the fake clock.
    const off = runner.on((e) => {
      if (e.type === 'route_decided') now += 1500;
    });
    await runner.dispatch('agent:desk:main', says('hello'));
    off();
    const { body: timeline } = await getJson(i, '/api/timeline?key=agent:desk:main');
    expect(timeline.source).toBe('inspector');
    expect(timeline.entries.map((e: { type: string; at: string }) => [e.type, e.at])).toEqual([
      ['outcome', '2030-01-02T03:04:06.500Z'],
      ['transition', '2030-01-02T03:04:06.500Z'],
      ['route', '2030-01-02T03:04:05.000Z'],
      ['signal', '2030-01-02T03:04:05.000Z'],
    ]);
    expect(timeline.entries[0].durationMs).toBe(1500);
    await runner.close();
  });

  it('serves at most maxEventStreams event streams; one more gets 503 with Retry-After, and a freed place is taken again', async () => {
    const runner = testRunner();
    const i = await start({ runner, maxEventStreams: 2 });
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(`${i.base}/api/events`, { headers: { cookie: i.cookie }, signal: controller.signal });
      return { res, controller };
    };
    const streams = await Promise.all([open(), open(), open(), open()]);
    const statuses = streams.map((s) => s.res.status).sort();
    expect(statuses).toEqual([200, 200, 503, 503]);
    for (const { res } of streams.filter((s) => s.res.status === 503)) {
      expect(res.headers.get('retry-after')).toBe('2');
      expect(((await res.json()) as Json).error.code).toBe('too_many_streams');
    }
    streams.find((s) => s.res.status === 200)!.controller.abort();
    // The server notices the closed stream; then the next page gets its place.
    await expect
      .poll(async () => {
        const next = await open();
        if (next.res.status === 200) streams.push(next);
        return next.res.status;
      })
      .toBe(200);
    for (const s of streams) s.controller.abort();
    await runner.close();
  });

  it('answers bad queries with 400 and what was expected, unknown sessions and paths with 404, wrong methods with 405', async () => {
    const runner = testRunner();
    const i = await start({ runner });
    await runner.dispatch('agent:desk:main', says('hi'));
    for (const path of [
      '/api/session',
      '/api/session?key=',
      '/api/history?key=agent:desk:main&limit=0',
      '/api/sessions?limit=x',
      '/api/session?key=agent:desk:main&version=-1',
    ]) {
      const res = await getJson(i, path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('request_invalid');
    }
    expect((await getJson(i, '/api/session?key=agent:desk:other')).status).toBe(404);
    expect((await getJson(i, '/api/session?key=agent:desk:main&version=9')).status).toBe(404);
    expect((await getJson(i, '/api/nothing')).status).toBe(404);
    expect((await getJson(i, '/api/fork')).status).toBe(405);
    expect((await postJson(i, '/api/sessions', {})).status).toBe(405);
    // A runner error keeps its code: an invalid session key.
    const bad = await getJson(i, '/api/history?key=not-a-key');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('RUNNER_INPUT_INVALID');
    await runner.close();
  });

  it('forks from a version; refuses an existing target (409), a bad body (400), a non-JSON body (415)', async () => {
    const runner = testRunner();
    const i = await start({ runner });
    await runner.dispatch('agent:desk:main', says('one'));
    await runner.dispatch('agent:desk:main', says('two'));
    const forked = await postJson(i, '/api/fork', { from: 'agent:desk:main', to: 'agent:desk:what-if', version: 1 });
    expect(forked).toEqual({ status: 200, body: { session: { sessionKey: 'agent:desk:what-if', version: 1 } } });
    expect((await runner.session('agent:desk:what-if'))?.history).toEqual([{ role: 'user', content: 'one' }]);
    const again = await postJson(i, '/api/fork', { from: 'agent:desk:main', to: 'agent:desk:what-if' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('SESSION_EXISTS');
    expect((await postJson(i, '/api/fork', { from: 'agent:desk:main', to: 'x', version: 0 })).status).toBe(400);
    expect((await postJson(i, '/api/fork', { to: 'x' })).status).toBe(400);
    expect((await postJson(i, '/api/fork', [])).status).toBe(400);
    const text = await http(`${i.base}/api/fork`, {
      method: 'POST',
      headers: { cookie: i.cookie, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
    const broken = await http(`${i.base}/api/fork`, {
      method: 'POST',
      headers: { cookie: i.cookie, 'content-type': 'application/json' },
      body: '{',
    });
    expect(broken.status).toBe(400);
    const rewound = await postJson(i, '/api/rewind', { sessionKey: 'agent:desk:main', version: 1 });
    expect(rewound.body).toEqual({ session: { sessionKey: 'agent:desk:main', version: 3 } });
    expect((await postJson(i, '/api/rewind', { sessionKey: 'agent:desk:main' })).status).toBe(400);
    await runner.close();
  });

  it('approve: 501 when the runner has no approve(); otherwise calls it with the decisions and `by`', async () => {
    const runner = testRunner();
    const plain = await start({ runner: { ...bound(runner), approve: undefined } });
    const none = await postJson(plain, '/api/approve', {
      sessionKey: 'agent:desk:main',
      decisions: [{ id: 'a1', approved: true }],
    });
    expect(none.status).toBe(501);

    const calls: unknown[] = [];
    const approving = await start({
      runner: {
        ...bound(runner),
        approve: (key, decisions, opts) => {
          calls.push([key, decisions, opts]);
          return runner.dispatch(key, signal('custom:approved', null));
        },
      },
      by: 'alice',
    });
    const ok = await postJson(approving, '/api/approve', {
      sessionKey: 'agent:desk:main',
      decisions: [{ id: 'a1', approved: false, reason: 'too much' }],
    });
    expect(ok.status).toBe(200);
    expect(calls).toEqual([['agent:desk:main', [{ id: 'a1', approved: false, reason: 'too much' }], { by: 'alice' }]]);
    for (const decisions of [
      [],
      [{ id: 'a1' }],
      [{ id: '', approved: true }],
      'yes',
      [{ id: 'a', approved: true, reason: 3 }],
    ]) {
      const bad = await postJson(approving, '/api/approve', { sessionKey: 'agent:desk:main', decisions });
      expect(bad.status, JSON.stringify(decisions)).toBe(400);
    }
    await runner.close();
  });

  it('streams timeline entries as Server-Sent Events, and close() ends the stream but not the runner', async () => {
    const runner = testRunner();
    const i = await start({ runner });
    const controller = new AbortController();
    const res = await fetch(`${i.base}/api/events`, { headers: { cookie: i.cookie }, signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    await runner.dispatch('agent:desk:main', says('live'));
    let text = '';
    while (!text.includes('"type":"outcome"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('event: entry');
    expect(text).toContain('"text":"live"');
    await i.close();
    expect((await reader.read()).done).toBe(true);
    // The runner still works.
    expect((await runner.dispatch('agent:desk:main', says('after'))).status).toBe('completed');
    await runner.close();
  });

  it('the abortSignal closes it', async () => {
    const controller = new AbortController();
    const i = await start({ store: new MemoryCheckpointStore(), abortSignal: controller.signal });
    controller.abort();
    await expect(http(`${i.base}/api/info`, { headers: { cookie: i.cookie } })).rejects.toThrow();
  });

  it('serves the page, each of its script modules, its style sheet and the diagram library from the package, and nothing else', async () => {
    const i = await start({ store: new MemoryCheckpointStore() });
    const modules = readdirSync(new URL('../ui/', import.meta.url)).filter((f) => f.endsWith('.js'));
    expect(modules).toContain('app.js');
    expect(modules.length).toBeGreaterThan(5); // the page is split into modules that import each other
    for (const [path, type] of [
      ...modules.map((f) => [`/assets/${f}`, 'text/javascript'] as const),
      ['/assets/style.css', 'text/css'],
      ['/assets/mermaid.min.js', 'text/javascript'],
    ] as const) {
      const res = await http(`${i.base}${path}`, { headers: { cookie: i.cookie } });
      expect(res.status, path).toBe(200);
      expect(String(res.headers['content-type'])).toContain(type);
    }
    for (const path of ['/assets/index.html', '/assets/../src/index.ts', '/assets/%2e%2e/package.json', '/app.js']) {
      expect((await http(`${i.base}${path}`, { headers: { cookie: i.cookie } })).status, path).toBe(404);
    }
  });
});

describe('startInspector: offline over a store', () => {
  it('shows the sessions and versions a runner saved, read-only', async () => {
    const store = new MemoryCheckpointStore();
    const runner = testRunner({ store });
    await runner.dispatch('agent:desk:main', says('one'));
    await runner.dispatch('agent:desk:main', says('two'));
    await runner.close();
    const i = await start({ store });
    expect((await getJson(i, '/api/info')).body).toEqual({
      mode: 'offline',
      actions: { approve: false, fork: false, rewind: false },
      by: 'inspector',
      inbox: false,
      replay: false,
    });
    const { body: list } = await getJson(i, '/api/sessions');
    expect(list.sessions).toEqual([
      expect.objectContaining({ sessionKey: 'agent:desk:main', agentId: 'desk', version: 2, status: 'unknown' }),
    ]);
    const { body: history } = await getJson(i, '/api/history?key=agent:desk:main');
    expect(history.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(history.versions[1].cause.signal).toMatchObject({ kind: 'user_message', text: 'one' });
    const { body: v1 } = await getJson(i, '/api/session?key=agent:desk:main&version=1');
    expect(v1.session.history).toEqual([{ role: 'user', content: 'one' }]);
    expect((await getJson(i, '/api/timeline?key=agent:desk:main')).body).toEqual({
      live: false,
      source: 'store',
      entries: [],
    });
    const fork = await postJson(i, '/api/fork', { from: 'agent:desk:main', to: 'agent:desk:b' });
    expect(fork.status).toBe(403);
    expect(fork.body.error.code).toBe('read_only');
    const approve = await postJson(i, '/api/approve', {
      sessionKey: 'agent:desk:main',
      decisions: [{ id: 'a', approved: true }],
    });
    expect(approve.status).toBe(403);
  });

  it('lists a checkpoint that is not a session with agent null, and cannot open it', async () => {
    const store = new MemoryCheckpointStore();
    await store.save('other:thing', { hello: 1 }, 0);
    const i = await start({ store });
    const { body } = await getJson(i, '/api/sessions');
    expect(body.sessions[0]).toMatchObject({ sessionKey: 'other:thing', agentId: null });
    expect((await getJson(i, '/api/session?key=other:thing')).status).toBe(404);
  });
});

/** The runner's methods, bound, as a plain object (to add or remove one). */
function bound(runner: ReturnType<typeof testRunner>) {
  return {
    on: runner.on.bind(runner),
    listSessions: runner.listSessions.bind(runner),
    session: runner.session.bind(runner),
    sessionAt: runner.sessionAt.bind(runner),
    history: runner.history.bind(runner),
    transcript: runner.transcript.bind(runner),
    fork: runner.fork.bind(runner),
    rewind: runner.rewind.bind(runner),
  };
}
