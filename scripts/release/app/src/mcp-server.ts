// An MCP server over stdio, built from the installed packages: a Runner's agent served with
// serveMcp. main.ts starts it as a child process and calls it with connectMcp.
import { scriptedModel } from '@signalyard/core/testing';
import { serveMcp } from '@signalyard/mcp';
import { createRunner, crewEngine } from 'signalyard';

const model = scriptedModel((request) => `echo: ${request.messages.at(-1)?.content ?? ''} [DONE]`);
const crew = {
  entryPoint: 'support',
  agents: [{ id: 'support' }],
  routing: { signals: { support: [{ signal: '[DONE]', target: '' }] } },
};
const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }] });
await serveMcp(runner, { agents: ['support'], stdio: true });
