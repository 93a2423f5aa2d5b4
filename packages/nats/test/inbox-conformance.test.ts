import { randomBytes } from 'node:crypto';
import { inboxConformance } from '@signalyard/core/testing';
import { JetStreamInbox } from '@signalyard/nats';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { afterAll, beforeAll, describe, it } from 'vitest';

let server: NatsServer | undefined;

describeNats('JetStreamInbox against a real nats-server', () => {
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  // A stream of its own per case, never provisioned: the inbox's first use creates it. A second
  // inbox over it (its own connection) plays a second process.
  inboxConformance(
    'JetStreamInbox',
    (limits) => {
      const stream = `CONF_${randomBytes(6).toString('hex')}`;
      const open = (): JetStreamInbox =>
        new JetStreamInbox({ servers: (server as NatsServer).url, stream, partitions: 8, pollMs: 100, ...limits });
      return Promise.resolve({ inbox: open(), another: open });
    },
    { describe, it },
  );
});
