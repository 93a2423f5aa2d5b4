import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerInfo,
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

/**
 * Checks the stream `config.name` when it exists, else creates it: an inbox whose credentials may
 * not create streams opens one that exists (info first, `add` only on "stream not found").
 */
async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
  check: (found: StreamConfig) => void,
): Promise<void> {
  const existing = await jsm.streams.info(config.name).catch((error: unknown) => {
    if (isApiCode(error, 10059)) return undefined;
    throw error;
  });
  if (existing !== undefined) {
    check(existing.config);
    return;
  }
  try {
    await jsm.streams.add(config);
    return;
  } catch (error) {
    // Another process created it meanwhile. 10058: the name is in use (with other settings: the
    // check says which). 10065 "subjects overlap": also what a process that loses the race to
    // create this very stream may hear (nats-server 2.9) — then the stream is there by its name;
    // when it is not, another stream holds the subjects and that is the error.
    if (!isApiCode(error, 10058, 10065)) throw error;
    const found = await jsm.streams.info(config.name).catch(() => undefined);
    if (found === undefined) throw error;
    check(found.config);
  }
}

/** Checks the durable consumer of partition `n` when it exists (its `ack_wait` is `leaseMs`), else creates it. */
async function ensureConsumer(
  jsm: JetStreamManager,
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
  n: number,
): Promise<void> {
  const config = partitionConsumerConfig(names, o, n);
  const info = (): Promise<ConsumerInfo | undefined> =>
    jsm.consumers.info(names.stream, names.consumer(n)).catch((error: unknown) => {
      if (isApiCode(error, 10014)) return undefined;
      throw error;
    });
  let found = await info();
  if (found === undefined) {
    try {
      await jsm.consumers.add(names.stream, config);
      return;
    } catch (error) {
      // Created meanwhile by another process (or recreated by a partition's holder): check that one.
      found = await info().catch(() => undefined);
      if (found === undefined) throw error;
    }
  }
  if (found.config.ack_wait !== config.ack_wait) {
    throw configMismatch(
      `Consumer ${JSON.stringify(names.consumer(n))}`,
      'leaseMs',
      (found.config.ack_wait ?? 0) / 1e6,
      o.leaseMs,
    );
  }
}

/**
 * Creates or checks everything the inbox keeps on the server: the entries stream, the events
 * stream, one durable consumer per partition, and the KV buckets. What exists is only read and
 * checked (no create permission needed then); what is missing is created. Idempotent and safe
 * from many processes at once (creating what exists with the same settings is a no-op on the
 * server). Run on an inbox's first use, and by `provision()`.
 * @throws InboxError `INBOX_CONFIG_INVALID` naming the first setting an existing object
 * contradicts, its value there and the inbox's; `INBOX_UNAVAILABLE`.
 * @internal
 */
export async function provisionInbox(
  jsm: JetStreamManager,
  kvm: Kvm,
  names: JetStreamNames,
  o: ResolvedJetStreamInboxOptions,
): Promise<InboxBuckets> {
  try {
    await ensureStream(jsm, entriesStreamConfig(names, o), (found) => {
      checkEntriesStream(names, o, found);
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
    await Promise.all(Array.from({ length: o.partitions }, (_, n) => ensureConsumer(jsm, names, o, n)));
    return await openBuckets(kvm, names, o);
  } catch (error) {
    throw unavailable(`provision the inbox of stream ${JSON.stringify(names.stream)}`, error);
  }
}

/** Refuses an existing entries stream whose fixed settings contradict the options. */
function checkEntriesStream(names: JetStreamNames, o: ResolvedJetStreamInboxOptions, found: StreamConfig): void {
  const where = `Stream ${JSON.stringify(names.stream)}`;
  const partitions = Number(PARTITIONS.exec(found.description ?? '')?.[1] ?? Number.NaN);
  if (partitions !== o.partitions)
    throw configMismatch(where, 'partitions', Number.isNaN(partitions) ? found.description : partitions, o.partitions);
  if (found.retention !== RetentionPolicy.Workqueue)
    throw configMismatch(where, 'retention', found.retention, 'workqueue');
  if (found.max_msgs !== o.maxPending) throw configMismatch(where, 'maxPending', found.max_msgs, o.maxPending);
  if (found.duplicate_window !== nanos(o.dedupeWindowMs)) {
    throw configMismatch(where, 'dedupeWindowMs', found.duplicate_window / 1e6, o.dedupeWindowMs);
  }
}

/**
 * Opens the inbox's KV buckets, creating those missing (the client looks a bucket up before it
 * creates one: an existing bucket needs no create permission), and checks their `max_age`.
 */
async function openBuckets(kvm: Kvm, names: JetStreamNames, o: ResolvedJetStreamInboxOptions): Promise<InboxBuckets> {
  const bucket = async (name: string, setting: string, ttlMs: number): Promise<KV> => {
    // An existing bucket is read the way it allows (direct gets when its stream allows them).
    const kv = await kvm.create(name, { history: 1, ttl: ttlMs, storage: StorageType.File });
    const status = await kv.status();
    if (status.ttl !== ttlMs) throw configMismatch(`Bucket ${JSON.stringify(name)}`, setting, status.ttl, ttlMs);
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
