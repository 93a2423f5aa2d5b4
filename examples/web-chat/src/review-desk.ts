// Approvals are a reviewer's, not the customer's: the refund a customer asked for is approved or
// denied on the reviewer page (`/review#token=…`), whose API needs the reviewer token.
//
//   GET  /api/review/pending      every web chat's pending approvals
//   POST /api/review/decisions    { chatId, decisions: [{ id, approved, reason? }] } → runner.approve(…, { by: 'reviewer' })
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isSignalyardError } from '@signalyard/core';
import type { Runner } from 'signalyard';
import { readReviewDecisions } from './chat-request.js';
import { chatIdOf, sessionKeyOf } from './desk.js';
import { HttpError } from './http-rules.js';

/** One approval waiting for the reviewer. */
export interface PendingReview {
  readonly chatId: string;
  readonly approvalId: string;
  readonly toolName: string;
  readonly arguments: unknown;
  /** Why the policy holds it. */
  readonly reason?: string;
  readonly requestedAt: string;
}

/** The sessions the reviewer page looks through at most. */
const MAX_SESSIONS = 500;

/** The reviewer's side of the web chat. */
export class ReviewDesk {
  readonly #runner: Runner;
  readonly #token: Buffer;

  constructor(runner: Runner, token: string) {
    this.#runner = runner;
    this.#token = Buffer.from(token);
  }

  /** @throws HttpError 401 unless the request carries the reviewer token (`authorization: Bearer …`). */
  authorize(req: IncomingMessage): void {
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '');
    if (given.length !== this.#token.length || !timingSafeEqual(given, this.#token)) {
      throw new HttpError(401, 'Approvals need the reviewer token: open the reviewer page the server printed');
    }
  }

  /** Every web chat's pending approvals, oldest chat key first. */
  async pending(): Promise<{ approvals: PendingReview[] }> {
    const approvals: PendingReview[] = [];
    for await (const listed of this.#runner.listSessions({
      prefix: sessionKeyOf('x').slice(0, -1),
      limit: MAX_SESSIONS,
    })) {
      const chatId = chatIdOf(listed.sessionKey);
      const view = chatId === undefined ? undefined : await this.#runner.session(listed.sessionKey);
      for (const p of view?.pendingApprovals ?? []) {
        approvals.push({
          chatId: chatId as string,
          approvalId: p.id,
          toolName: p.toolName,
          arguments: p.arguments,
          ...(p.reason === undefined ? {} : { reason: p.reason }),
          requestedAt: p.requestedAt,
        });
      }
    }
    return { approvals };
  }

  /** Applies the reviewer's decisions to a chat's session. @throws HttpError 400. */
  async decide(body: unknown): Promise<{ status: string; unknownApprovalIds?: unknown }> {
    const { chatId, decisions } = readReviewDecisions(body);
    try {
      const outcome = await this.#runner.approve(sessionKeyOf(chatId), decisions, { by: 'reviewer' });
      const unknown = (outcome.output as { unknownApprovalIds?: unknown } | undefined)?.unknownApprovalIds;
      return { status: outcome.status, ...(unknown === undefined ? {} : { unknownApprovalIds: unknown }) };
    } catch (error) {
      if (isSignalyardError(error)) throw new HttpError(400, error.message);
      throw error;
    }
  }
}
