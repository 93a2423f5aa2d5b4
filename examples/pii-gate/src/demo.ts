// Runs the PII gate in a real Runner and prints what happens to a few messages.
import { createRunner } from 'signalyard';
import { piiGatePlugin } from './index.js';

const runner = createRunner({
  agents: [
    {
      id: 'support',
      engine: async () => ({ messages: [{ role: 'assistant', content: 'How can I help?' }], output: 'answered' }),
    },
  ],
  plugins: [piiGatePlugin()],
});
for (const text of [
  'My order is late',
  'my card is 4111 1111 1111 1111',
  'mail me at jane.doe@example.com',
  'here: sk-abcdefghijklmnopqrstuvwxyz123456',
]) {
  const o = await runner.handle({ channel: 'cli', text });
  const by =
    o.decidedBy === undefined ? 'runner default' : `${o.decidedBy.tier} route "${o.decidedBy.route.name ?? '?'}"`;
  console.log(
    `${JSON.stringify(text).padEnd(48)} ${o.status.padEnd(9)} via ${by}${o.output === undefined ? '' : ` -> ${JSON.stringify(o.output)}`}`,
  );
}
await runner.close();
