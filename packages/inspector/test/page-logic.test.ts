// The page's logic that needs no DOM, run in Node: how it shows control characters, and how its
// live event stream reconnects — after the inspector ended it, and after a 503's Retry-After.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

interface StreamState {
  state: 'connected' | 'reconnecting' | 'waiting' | 'refused';
  retryMs?: number;
  status?: number;
}
interface EventStreamModule {
  connectEventStream: (opts: {
    url: string;
    onEvent: (name: string, data: string) => void;
    onOpen?: (o: { reconnected: boolean }) => void;
    onState?: (s: StreamState) => void;
    fetch?: (url: string, init: RequestInit) => Promise<Response>;
  }) => { close(): void };
}
type Text = (value: Record<string, unknown>) => string;
interface EngineTextModule {
  handoffText: Text;
  decisionText: Text;
  approvalDecidedText: Text;
  terminateText: Text;
  eventFieldsText: Text;
  routeText: Text;
  causeText: (cause: Record<string, unknown> | undefined) => string;
  withoutMarkers: (text: string) => string;
}
interface VisibleTextModule {
  visible: (text: string) => string;
  visibleLines: (text: string) => string;
}

// The page's modules are plain browser JavaScript without type declarations: imported by path.
const modules = {
  stream: '../ui/event-stream.js',
  text: '../ui/visible-text.js',
  engine: '../ui/engine-text.js',
};
const { connectEventStream } = (await import(modules.stream)) as EventStreamModule;
const { visible, visibleLines } = (await import(modules.text)) as VisibleTextModule;
const {
  handoffText,
  decisionText,
  approvalDecidedText,
  terminateText,
  eventFieldsText,
  routeText,
  causeText,
  withoutMarkers,
} = (await import(modules.engine)) as EngineTextModule;

describe('the timeline shows a crew handoff', () => {
  it('a marker by its signal, a transfer tool call by its tool (the same handoff), the others by how', () => {
    const base = { type: 'handoff', from: 'triage', to: 'billing', via: 'signal', handoffs: 1 };
    expect(handoffText({ ...base, signal: '[ROUTE_BILLING]' })).toBe('triage → billing (via signal [ROUTE_BILLING])');
    expect(handoffText({ ...base, signal: '[ROUTE_BILLING]', tool: 'transfer_to_billing', reason: 'a refund' })).toBe(
      'triage → billing (transfer_to_billing)',
    );
    expect(handoffText({ ...base, via: 'parallel', from: 'lead', to: 'lead' })).toBe('lead → lead (via parallel)');
    expect(handoffText({ ...base, via: 'fallback' })).toBe('triage → billing (via fallback)');
    expect(handoffText({ ...base, via: 'parallel', from: 'lead', to: 'law', group: 'experts' })).toBe(
      'lead → law (via parallel, group experts)',
    );
  });
});

describe('the page says why, in words', () => {
  it("an approvals policy's decision: by a named rule, an unnamed one, or the default", () => {
    expect(decisionText({ decision: 'allow', rule: 'refunds-under-100' })).toBe('allowed by rule refunds-under-100');
    expect(decisionText({ decision: 'ask', rule: 1, ruleName: 'big-refunds' })).toBe(
      'held for a person by rule big-refunds',
    );
    expect(decisionText({ decision: 'deny', rule: 0 })).toBe('denied by rule 1 (unnamed)');
    expect(decisionText({ decision: 'allow' })).toBe("allowed by the policy's default");
    expect(
      approvalDecidedText({ toolName: 'refund', agentId: 'clerk', decision: 'deny', reason: 'never', group: 'g' }),
    ).toBe("refund by clerk in group g denied by the policy's default: never");
  });

  it('how a run ended, and any other event, as text', () => {
    expect(terminateText({ agentId: 'billing', reason: 'terminated_by_signal', signal: '[DONE]' })).toBe(
      'billing ended the run by its signal [DONE]',
    );
    expect(terminateText({ agentId: 'b', reason: 'terminated_by_signal', signal: '', tool: 'finish' })).toBe(
      'b ended the run by its signal (finish)',
    );
    expect(terminateText({ agentId: 'b', reason: 'max_rounds' })).toBe('b ended the run: max_rounds reached');
    expect(terminateText({ agentId: 'b', reason: 'something_new' })).toBe('b ended the run (something_new)');
    expect(
      eventFieldsText({ type: 'x', a: 1, list: ['p', 'q'], error: { message: 'boom' }, nested: { k: true } }),
    ).toBe('a 1 · list p, q · error boom · nested k: true');
  });

  it('a route decision: the route, or the runner default', () => {
    expect(routeText({ tier: null, routeName: null, action: 'continue' })).toBe(
      'no route matched: runner default → continue',
    );
    expect(routeText({ tier: 'agent', routeName: 'open-ticket', action: 'transition(open)' })).toBe(
      'tier agent · route open-ticket · transition(open)',
    );
    expect(routeText({ tier: 'agent', routeName: null, action: 'continue' })).toBe(
      'tier agent · route (unnamed) · continue',
    );
  });

  it("a version's cause: the runner default, the policy's decisions, a mid-turn commit", () => {
    const signal = { kind: 'user_message', text: 'refund 42' };
    expect(
      causeText({
        at: 't',
        signal,
        status: 'completed',
        summary: { approvals: [{ tool: 'refund', decision: 'allow', rule: 'small' }] },
      }),
    ).toBe('user_message “refund 42” · no route matched: runner default · completed · refund allowed by rule small');
    expect(causeText({ at: 't', signal: { kind: 'tool_approval' } })).toBe(
      'tool_approval · saved mid-turn (a commit before the turn ended)',
    );
    expect(causeText({ at: 't', signal, status: 'completed', tier: 'agent', routeName: 'r' })).toBe(
      'user_message “refund 42” · tier agent · route r · completed',
    );
    expect(causeText(undefined)).toBe('saved');
    expect(causeText({ at: 't', rewoundTo: 3 })).toBe('rewound to version 3');
  });

  it('the offline chat hides markers as the live one does', () => {
    expect(withoutMarkers('Done. [DONE]')).toBe('Done.');
    expect(withoutMarkers('Passing on [ROUTE_BILLING] now [done]')).toBe('Passing on now');
    expect(withoutMarkers('[ASK]')).toBe('');
    expect(withoutMarkers('a list [1] stays')).toBe('a list [1] stays');
  });
});

describe('the page shows control characters escaped', () => {
  it('escapes C0 and C1 controls and the bidirectional controls in a key, as \\uXXXX', () => {
    const key = 'agent:desk:\u001b[31mred\nfake row\u202Eevil\u0085\u007f\u0000';
    expect(visible(key)).toBe('agent:desk:\\u001B[31mred\\u000Afake row\\u202Eevil\\u0085\\u007F\\u0000');
    for (const c of [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200E',
      '\u200F',
    ]) {
      expect(visible(`a${c}b`)).toBe(`a\\u${c.charCodeAt(0).toString(16).toUpperCase()}b`);
    }
  });

  it('keeps ordinary text as it is: letters of every script, emoji (with their joiners), markup characters', () => {
    for (const text of ['Grüße, 你好, مرحبا', '👩‍👩‍👧 family', '<script>x</script> & "quotes"', '']) {
      expect(visible(text)).toBe(text);
      expect(visibleLines(text)).toBe(text);
    }
  });

  it('in a block of text keeps line feeds and tabs, and escapes the rest', () => {
    expect(visibleLines('line 1\n\tline 2\r\u001b[2J\u202Edone')).toBe('line 1\n\tline 2\\u000D\\u001B[2J\\u202Edone');
  });
});

describe("the page's event stream reads Server-Sent Events", () => {
  it('split anywhere across chunks (inside a line ending or a character too), with any line ending, joining data lines and skipping comments', async () => {
    const bytes = new TextEncoder().encode(
      'retry: 1500\r\n: connected\r\n\r\nevent: entry\rdata: {"a":"€"}\n\nevent: entry\ndata: one\ndata: two\r\n\r\n',
    );
    for (let cut = 0; cut <= bytes.length; cut++) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      const events: [string, string][] = [];
      const ended = new Promise<StreamState>((resolve) => {
        const client = connectEventStream({
          url: '/api/events',
          fetch: () => Promise.resolve(new Response(body)),
          onEvent: (name, data) => events.push([name, data]),
          onState: (s) => {
            if (s.state === 'reconnecting') {
              client.close();
              resolve(s);
            }
          },
        });
      });
      expect(await ended, `cut at ${cut}`).toEqual({ state: 'reconnecting', retryMs: 1500 });
      expect(events, `cut at ${cut}`).toEqual([
        ['entry', '{"a":"€"}'],
        ['entry', 'one\ntwo'],
      ]);
    }
  });
});

describe("the page's event stream reconnects", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A fetch answering each call with the next of `answers`, recording the calls. */
  function scriptedFetch(answers: (() => Response)[]) {
    const calls: string[] = [];
    const fetch = (url: string): Promise<Response> => {
      calls.push(url);
      const next = answers.shift();
      return next === undefined ? new Promise<Response>(() => undefined) : Promise.resolve(next());
    };
    return { fetch, calls };
  }

  const stream = (text: string) => () =>
    new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  const busy = (retryAfter: string) => () =>
    new Response('{"error":{"code":"too_many_streams"}}', { status: 503, headers: { 'retry-after': retryAfter } });

  it('after a 503, retries only once Retry-After has passed, then connects, catches up and reads events', async () => {
    const { fetch, calls } = scriptedFetch([busy('7'), stream('event: entry\ndata: {"seq":1}\n\n')]);
    const states: StreamState[] = [];
    const events: string[] = [];
    const opens: boolean[] = [];
    const client = connectEventStream({
      url: '/api/events',
      fetch,
      onState: (s) => states.push(s),
      onOpen: ({ reconnected }) => opens.push(reconnected),
      onEvent: (_name, data) => events.push(data),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(states).toEqual([{ state: 'waiting', retryMs: 7000 }]);
    await vi.advanceTimersByTimeAsync(6999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(states[1]).toEqual({ state: 'connected' });
    expect(opens).toEqual([true]); // it waited: events may have happened meanwhile
    expect(events).toEqual(['{"seq":1}']);
    client.close();
  });

  it('when the inspector ends the stream (the page fell behind), reconnects after its retry and catches up', async () => {
    const { fetch, calls } = scriptedFetch([
      stream('retry: 3000\n\nevent: entry\ndata: {"seq":1}\n\n'),
      stream('event: entry\ndata: {"seq":9}\n\n'),
    ]);
    const opens: boolean[] = [];
    const events: string[] = [];
    const client = connectEventStream({
      url: '/api/events',
      fetch,
      onOpen: ({ reconnected }) => opens.push(reconnected),
      onEvent: (_name, data) => events.push(data),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(opens).toEqual([false]);
    await vi.advanceTimersByTimeAsync(2999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(opens).toEqual([false, true]); // reconnected: the page reloads what it shows
    expect(events).toEqual(['{"seq":1}', '{"seq":9}']);
    client.close();
  });

  it('retries after a network failure, and stops at 401 (retrying cannot bring the token back)', async () => {
    const { fetch, calls } = scriptedFetch([
      () => {
        throw new TypeError('fetch failed');
      },
      () => new Response('{}', { status: 401 }),
    ]);
    const states: StreamState[] = [];
    connectEventStream({ url: '/api/events', fetch, onEvent: () => undefined, onState: (s) => states.push(s) });
    await vi.advanceTimersByTimeAsync(0);
    expect(states).toEqual([{ state: 'reconnecting', retryMs: 2000 }]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(states.at(-1)).toEqual({ state: 'refused', status: 401 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(2);
  });

  it.each([
    ['99999', 300_000],
    ['soon', 2000],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 2000],
  ])('reads Retry-After %j as a wait of %i ms (seconds, at most 5 minutes; else the default)', async (header, ms) => {
    const { fetch } = scriptedFetch([busy(header)]);
    const states: StreamState[] = [];
    const client = connectEventStream({
      url: '/api/events',
      fetch,
      onEvent: () => undefined,
      onState: (s) => states.push(s),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(states).toEqual([{ state: 'waiting', retryMs: ms }]);
    client.close();
  });

  it('close() stops it, also while it waits', async () => {
    const { fetch, calls } = scriptedFetch([busy('1'), stream('')]);
    const client = connectEventStream({ url: '/api/events', fetch, onEvent: () => undefined });
    await vi.advanceTimersByTimeAsync(0);
    client.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
  });
});
