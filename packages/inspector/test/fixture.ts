// A Runner with the three kinds of agents the inspector shows — an FSM agent, a crew agent that
// hands off, a pipeline agent — and their diagrams; plus a small HTTP client for the tests and
// the inbox panel's checks.
import { request } from 'node:http';
import { Action, SignalKind, type CheckpointStore, type SignalRoute } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { definePipeline } from '@signalyard/pipeline';
import type { Locator, Page } from 'playwright-core';
import { createRunner, crewEngine, pipelineEngine, type Runner } from 'signalyard';
import { expect } from 'vitest';
import type { AgentDiagrams } from '../src/index.js';

const desk = FsmStrategy.builder()
  .initial('new')
  .transition('new', 'open', 'open')
  .transition('open', 'open', 'open')
  .transition('open', 'close', 'closed')
  .define();

// The crew hands off by transfer tool calls (handoff_mode: tool): the page shows each call as the
// handoff it made, with the model's reason.
const crewYaml = `
entry_point: triage
agents:
  - id: triage
  - id: billing
settings:
  handoff_mode: tool
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[DONE]", target: "" }
`;

const review = definePipeline({
  name: 'review',
  stages: [
    { name: 'plan', run: () => ({ steps: 2 }), defaultNext: 'check' },
    { name: 'check', run: () => ({ ok: true }) },
  ],
});

export const diagrams: Record<string, AgentDiagrams> = {
  desk: { fsm: desk.toMermaid() },
  review: { pipeline: review.toMermaid() },
};

/** The `desk` agent's routes: `open-ticket` (priority 10) beats `fallback-chat`. */
const deskRoutes: readonly SignalRoute[] = [
  { kind: SignalKind.UserMessage, name: 'open-ticket', priority: 10, action: Action.transition('open') },
  { kind: SignalKind.UserMessage, name: 'fallback-chat', action: Action.Continue },
];

/** The test runner: `desk` (FSM; user messages take the agent route `open-ticket`), `support` (crew), `review` (pipeline). */
export function testRunner(opts: { store?: CheckpointStore; replies?: number } = {}): Runner {
  const replies = opts.replies ?? 4;
  const transfer = (content: string, name: string, i: number, reason?: string) => ({
    content,
    toolCalls: [{ id: `${name}-${i}`, name, arguments: reason === undefined ? {} : { reason } }],
  });
  const crew = crewEngine(parseCrewConfig(crewYaml), {
    model: scriptedModel({
      triage: Array.from({ length: replies }, (_, i) =>
        transfer('Let me route you to billing.', 'transfer_to_billing', i, 'a refund request'),
      ),
      billing: Array.from({ length: replies }, (_, i) => transfer('Refund issued.', 'finish', i)),
    }),
  });
  return createRunner({
    ...(opts.store !== undefined && { store: opts.store }),
    agents: [
      {
        id: 'desk',
        strategy: () => desk.create(),
        routes: deskRoutes,
        engine: (ctx) => Promise.resolve({ messages: [{ role: 'assistant', content: `seen ${ctx.history.length}` }] }),
      },
      { id: 'support', engine: crew },
      { id: 'review', engine: pipelineEngine(review) },
    ],
    // Record from the start, so a page opened after the first signals catches up on them.
    timeline: true,
  });
}

/** A user message signal for `dispatch`. */
export const says = (text: string) => ({ kind: SignalKind.UserMessage, payload: { text } }) as const;

/** One raw HTTP request (so tests can send any Host header); resolves with status, headers and body. */
export function http(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Opens the page at `url` and checks its inbox panel once the dead letters are listed: the
 * sessions waiting (in order), the leases (each line matching), and the first dead letter's text.
 * Returns the panel.
 */
export async function expectInboxPanel(
  page: Page,
  url: string,
  expected: { readonly waiting: readonly string[]; readonly leases: readonly RegExp[]; readonly deadLetter: string },
): Promise<Locator> {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  const panel = page.locator('#inbox-panel');
  await panel.locator('#dead-letters li').waitFor();
  expect(await panel.locator('#inbox-waiting li').allTextContents()).toEqual(expected.waiting);
  expect(await panel.locator('#inbox-leases li').allTextContents()).toEqual(
    expected.leases.map((lease): unknown => expect.stringMatching(lease)),
  );
  expect(await panel.locator('#dead-letters li').textContent()).toContain(expected.deadLetter);
  return panel;
}
