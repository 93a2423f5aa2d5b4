export { JetStreamInbox } from './jetstream-inbox.js';
export { DEFAULT_JETSTREAM_STREAM } from './jetstream-inbox-options.js';
export type {
  JetStreamInboxCommonOptions,
  JetStreamInboxConnectionOptions,
  JetStreamInboxOptions,
  JetStreamInboxServersOptions,
} from './jetstream-inbox-options.js';
