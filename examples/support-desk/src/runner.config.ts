// The desk's runner configuration for the `signalyard` command: `signalyard approve … --config
// src/runner.config.ts` builds the same runner as the app, over the same store, and runs a held
// refund in the command's own process. The store is SUPPORT_DESK_STORE (`sqlite:PATH`, the file
// `pnpm example -- --store sqlite:PATH` writes); each refund is also appended, as a JSON line, to
// SUPPORT_DESK_REFUNDS when it is set (the stand-in for a payment provider's log).
import { appendFileSync } from 'node:fs';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import type { RunnerOptions } from 'signalyard';
import { deskModel, deskOptions, type Refund, type RefundLedger } from './desk.js';
import { connectOrders } from './orders.js';

/** Refunds kept in memory and, with `file`, appended to it. */
function refundLog(file: string | undefined): RefundLedger {
  const refunds: Refund[] = [];
  return {
    get length() {
      return refunds.length;
    },
    push(refund) {
      if (file !== undefined) appendFileSync(file, `${JSON.stringify({ ...refund, pid: process.pid })}\n`);
      return refunds.push(refund);
    },
  };
}

export default async function config(): Promise<RunnerOptions> {
  const spec = process.env.SUPPORT_DESK_STORE;
  if (spec?.startsWith('sqlite:') !== true) {
    throw new Error(`SUPPORT_DESK_STORE must be sqlite:PATH (the desk's store), got ${JSON.stringify(spec)}`);
  }
  const store = new SqliteCheckpointStore({ path: spec.slice('sqlite:'.length) });
  // The billing agent's order-lookup MCP server: a child process, ended when the runner closes.
  const orders = await connectOrders();
  const options = deskOptions(store, deskModel(), () => undefined, orders, refundLog(process.env.SUPPORT_DESK_REFUNDS));
  return {
    ...options,
    plugins: [...(options.plugins ?? []), { name: 'order-lookup-connection', dispose: () => orders.close() }],
  };
}
