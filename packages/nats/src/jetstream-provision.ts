import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { Kvm } from '@nats-io/kv';
import { type KV } from '@nats-io/kv';
import { configMismatch, isApiCode, unavailable } from './jetstream-errors.js';
import type { ResolvedJetStreamInboxOptions } from './jetstream-inbox-options.js';
import { nanos, type JetStreamNames } from './jetstream-names.js';

/** The KV buckets of one inbox. @internal */
export interface InboxBuckets {
  readonly leases: KV;
  readonly outcomes: KV;
  readonly dead: KV;
  readonly attempts: KV;
  readonly receipts: KV;
}

const PARTITIONS = /partitions=(\d+)/;

/** The entries stream's configuration. @internal */
function entriesStreamConfig(
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
): Partial<StreamConfig> & { name: string } {
  return {
    name: names.stream,
    subjects: [`${names.stream}.*.*`],
    description: `Signalyard inbox entries, partitions=${o.partitions}`,
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    allow_direct: true,
    duplicate_window: nanos(o.dedupeWindowMs),
    max_msgs: o.maxPending,
    discard: DiscardPolicy.New,
  };
}

function eventsStreamConfig(
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
): Partial<StreamConfig> & { name: string } {
  return {
    name: names.events,
    subjects: [`${names.events}.*`],
    description: 'Signalyard inbox turn events, one subject per entry',
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    allow_direct: true,
    max_age: nanos(o.outcomeTtlMs),
  };
}

/** The durable pull consumer of partition `n`: explicit acks, `ack_wait` = `leaseMs`, unlimited deliveries, from the first entry not acknowledged. @internal */
export function partitionConsumerConfig(
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
  n: number,
): Partial<ConsumerConfig> {
  return {
    durable_name: names.consumer(n),
    filter_subject: names.partitionSubjects(n),
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(o.leaseMs),
    max_deliver: -1,
    deliver_policy: DeliverPolicy.All,
  };
}

async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
  check: (found: StreamConfig) => void,
): Promise<void> {
  try {
    await jsm.streams.add(config);
    return;
  } catch (error) {
    // 10058: the name is in use. 10065 "subjects overlap": also what a process that loses the race
    // to create this very stream may hear (nats-server 2.9) — then the stream is there by its name;
    // when it is not, another stream holds the subjects and that is the error.
    if (isApiCode(error, 10065)) {
      const found = await jsm.streams.info(config.name).catch(() => undefined);
      if (found === undefined) throw error;
      check(found.config);
      return;
    }
    if (!isApiCode(error, 10058)) throw error;
  }
  check((await jsm.streams.info(config.name)).config);
}

/**
 * Creates or checks everything the inbox keeps on the server: the entries stream, the events
 * stream, one durable consumer per partition, and the KV buckets. Idempotent and safe from many
 * processes at once (creating what exists with the same settings is a no-op on the server).
 * @throws InboxError `INBOX_CONFIG_INVALID` naming the first setting an existing object
 * contradicts; `INBOX_UNAVAILABLE`.
 * @internal
 */
export async function provisionInbox(
  jsm: JetStreamManager,
  kvm: Kvm,
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
): Promise<InboxBuckets> {
  try {
    const where = `Stream ${JSON.stringify(names.stream)}`;
    await ensureStream(jsm, entriesStreamConfig(names, o), (found) => {
      const partitions = Number(PARTITIONS.exec(found.description ?? '')?.[1] ?? Number.NaN);
      if (partitions !== o.partitions)
        throw configMismatch(
          where,
          'partitions',
          Number.isNaN(partitions) ? found.description : partitions,
          o.partitions,
        );
      if (found.retention !== RetentionPolicy.Workqueue)
        throw configMismatch(where, 'retention', found.retention, 'workqueue');
      if (found.max_msgs !== o.maxPending) throw configMismatch(where, 'maxPending', found.max_msgs, o.maxPending);
      if (found.duplicate_window !== nanos(o.dedupeWindowMs)) {
        throw configMismatch(where, 'dedupeWindowMs', found.duplicate_window / 1e6, o.dedupeWindowMs);
      }
    });
    await ensureStream(jsm, eventsStreamConfig(names, o), (found) => {
      if (found.max_age !== nanos(o.outcomeTtlMs)) {
        throw configMismatch(
          `Stream ${JSON.stringify(names.events)}`,
          'outcomeTtlMs',
          found.max_age / 1e6,
          o.outcomeTtlMs,
        );
      }
    });
    await Promise.all(
      Array.from({ length: o.partitions }, async (_, n) => {
        const config = partitionConsumerConfig(names, o, n);
        try {
          await jsm.consumers.add(names.stream, config);
        } catch (error) {
          const info = await jsm.consumers.info(names.stream, names.consumer(n)).catch(() => undefined);
          if (info === undefined) throw error;
          if (info.config.ack_wait !== config.ack_wait) {
            throw configMismatch(
              `Consumer ${JSON.stringify(names.consumer(n))}`,
              'leaseMs',
              (info.config.ack_wait ?? 0) / 1e6,
              o.leaseMs,
            );
          }
        }
      }),
    );
    return await openBuckets(kvm, names, o, true);
  } catch (error) {
    throw unavailable('provision the inbox', error);
  }
}

/**
 * Opens (`create`: creates when missing) the inbox's KV buckets, and checks their `max_age`.
 * @internal
 */
export async function openBuckets(
  kvm: Kvm,
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
  create: boolean,
): Promise<InboxBuckets> {
  const bucket = async (name: string, setting: string, ttlMs: number): Promise<KV> => {
    const kv = create
      ? await kvm.create(name, { history: 1, ttl: ttlMs, storage: StorageType.File })
      : await kvm.open(name);
    const status = await kv.status();
    if (status.ttl !== ttlMs) throw configMismatch(`Bucket ${JSON.stringify(name)}`, setting, status.ttl, ttlMs);
    // An opened bucket reads through the stream's leader (an API request, a 404 an error) unless
    // told it allows direct gets; a created one knows. Both read the same way, then.
    if (!create && status.streamInfo.config.allow_direct) return kvm.open(name, { allow_direct: true });
    return kv;
  };
  const [leases, outcomes, dead, attempts, receipts] = await Promise.all([
    bucket(names.leases, 'leaseMs', o.leaseMs),
    bucket(names.outcomes, 'outcomeTtlMs', o.outcomeTtlMs),
    bucket(names.dead, 'outcomeTtlMs', o.outcomeTtlMs),
    bucket(names.attempts, 'no max_age', 0),
    bucket(names.receipts, 'dedupeWindowMs', o.dedupeWindowMs),
  ]);
  return { leases, outcomes, dead, attempts, receipts };
}
