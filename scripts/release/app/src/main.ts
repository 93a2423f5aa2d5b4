// A user's app on the packages installed by name from the rehearsal's registry: every import
// below resolves from node_modules, as after `npm install signalyard …`. Each check throws (exit 1) when the packages misbehave.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aiSdkModel } from '@signalyard/ai-sdk';
import { ExitCode, run as runCli } from '@signalyard/cli';
import { Action, ConfigError, SignalKind, SignalyardError, isSignalyardError, signal } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { connectMcp } from '@signalyard/mcp';
import { JetStreamInbox } from '@signalyard/nats';
import { otelPlugin } from '@signalyard/otel';
import { PipelineRuntime, definePipeline } from '@signalyard/pipeline';
import { ComposedRouter } from '@signalyard/router';
import { SessionKey, formatSessionKey } from '@signalyard/sessions';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { createRunner, type Runner, type TurnResult } from 'signalyard';
import { keywordGatePlugin } from 'signalyard-plugin-keyword-gate';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-smoke-app-'));
const file = join(dir, 'sessions.db');

// A Runner with the third-party plugin, the otel plugin (no SDK: the API's no-op tracer), an
// FSM strategy and a durable SQLite store.
const definition = FsmStrategy.builder().initial('idle').transition('idle', 'start', 'working').define();
const makeRunner = (): Runner =>
  createRunner({
    agents: [
      {
        id: 'main',
        strategy: () => definition.create(),
        engine: (ctx): Promise<TurnResult> =>
          Promise.resolve({
            messages: [{ role: 'assistant', content: `seen ${ctx.history.length}` }],
            output: 'answered',
          }),
      },
    ],
    plugins: [keywordGatePlugin({ blocked: ['forbidden'] }), otelPlugin()],
    store: new SqliteCheckpointStore({ path: file }),
  });

const runner = makeRunner();
const hello = await runner.handle({ channel: 'cli', text: 'hello' });
assert.equal(hello.status, 'completed');
assert.equal(hello.output, 'answered');
const refused = await runner.handle({ channel: 'cli', text: 'something forbidden' });
assert.equal(refused.status, 'rejected');
assert.deepEqual(
  { tier: refused.decidedBy?.tier, route: refused.decidedBy?.route.name },
  { tier: 'plugin', route: 'keyword-gate' },
);
const echoed = await runner.handle({ channel: 'cli', text: '/echo from a plugin' });
assert.equal(echoed.output, 'from a plugin');
await runner.close();

// The history a turn sees is frozen (its plain messages and the list: the built core recognises
// the lists it froze, which a bundler once broke by dropping the call that marks them).
const frozenSeen: boolean[] = [];
const memoryRunner = createRunner({
  agents: [
    {
      id: 'main',
      engine: (ctx): Promise<TurnResult> => {
        frozenSeen.push(Object.isFrozen(ctx.history) && ctx.history.every((m) => Object.isFrozen(m)));
        return Promise.resolve({ messages: [{ role: 'assistant', content: 'ok' }] });
      },
    },
  ],
});
for (const text of ['one', 'two', 'three']) await memoryRunner.handle({ channel: 'cli', text });
assert.deepEqual(frozenSeen, [true, true, true]);
await memoryRunner.close();

// The session survives a restart on the same file.
const again = makeRunner();
const view = await again.session(hello.sessionKey);
assert.ok(view !== undefined && view.version >= 3, `expected a checkpointed session, got ${JSON.stringify(view)}`);
await again.close();
rmSync(dir, { recursive: true, force: true });

// The router on its own, a session key, a pipeline, a crew from crew.yaml.
const router = new ComposedRouter({ agent: [{ kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue }] });
assert.equal(router.route(signal(SignalKind.UserMessage, 'hi'))?.type, 'continue');
assert.equal(formatSessionKey(SessionKey.main('main', 'u1')).startsWith('agent:main:'), true);
const pipeline = definePipeline({
  name: 'smoke',
  stages: [
    { name: 'draft', run: () => ({ text: 'draft' }), defaultNext: 'review' },
    { name: 'review', run: (ctx) => ({ ok: (ctx.outputs.draft as { text: string }).text === 'draft' }) },
  ],
});
const envelope = await new PipelineRuntime(pipeline).run('go');
assert.equal(envelope.terminalReason, 'completed');
const crew = parseCrewConfig(readFileSync(new URL('../crew.yaml', import.meta.url), 'utf8'));
assert.equal(crew.entryPoint, 'teacher');
const executor = new CrewExecutor({
  crew,
  model: scriptedModel({
    teacher: ['[QUESTION] What is 2 + 2?', 'Well done. [END_EXAM]'],
    student: ['4 [ANSWER]'],
    reporter: ['The student is thinking.'],
  }),
});
const response = await executor.execute('start the exam');
assert.equal(response.isTerminal, true);

// Typed errors work across the installed copies.
assert.throws(
  () => keywordGatePlugin({ blocked: [] }),
  (e) => ConfigError.isInstance(e) && isSignalyardError(e),
);
assert.equal(typeof SignalyardError, 'function');

// The CLI's programmatic API, and the packages nothing above ran.
let out = '';
const capture = { write: (text: string) => (out += text) };
const code = await runCli(['validate', fileURLToPath(new URL('../crew.yaml', import.meta.url))], {
  stdout: capture,
  stderr: capture,
});
assert.equal(code, ExitCode.Ok, out);
assert.equal(typeof aiSdkModel, 'function');
assert.equal(typeof PostgresCheckpointStore, 'function');
// the JetStream inbox validates its options without touching the network
assert.throws(() => new JetStreamInbox({ servers: 'nats://127.0.0.1:4222', partitions: 0 }), ConfigError);

// MCP: a stdio server outside the workspace (mcp-server.ts, serveMcp over a Runner), connected
// with connectMcp and called as an ordinary tool.
const mcp = await connectMcp({
  servers: { app: { command: process.execPath, args: [fileURLToPath(new URL('./mcp-server.js', import.meta.url))] } },
});
const [ask] = await mcp.tools({ server: 'app', allow: ['ask_*'] });
assert.ok(ask !== undefined);
assert.equal(ask.name, 'ask_support');
const answer = (await ask.execute({ text: 'ping' }, { toolCallId: 'release-1' })) as {
  status?: string;
  output?: string;
};
assert.equal(answer.status, 'completed');
assert.equal(answer.output, 'echo: ping');
await mcp.close();

console.log('release app: runner, plugin, stores, router, sessions, pipeline, crew, mcp and cli all work');
