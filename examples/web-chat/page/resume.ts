// Resuming a reply (`--workers N`): the reply of a turn is read from the inbox's stream log, so a
// page can pick it up again — after a reload, after its connection dropped, or when the worker
// applying the turn died and another started it over (the stream then ends without `finish`).
// The server's `GET /api/chat/:id/stream` replays the reply in flight from the start of its
// latest attempt (the AI SDK's resume, `resumeStreamIsReplay`), or answers 204.
import { DefaultChatTransport, type ChatTransport, type UIMessage, type UIMessageChunk } from 'ai';
import type { Chat } from './chat.js';

type ReconnectOptions = Parameters<ChatTransport<UIMessage>['reconnectToStream']>[0];

/** The AI SDK's default transport, noting how each stream ended. */
export class ResumingTransport extends DefaultChatTransport<UIMessage> {
  /** The last stream ended without `finish`: its turn started over on another worker. */
  unfinished = false;
  /** The last resume found nothing in flight (204). */
  nothingInFlight = false;

  protected override processResponseStream(stream: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
    let finished = false;
    this.unfinished = false;
    return super.processResponseStream(stream).pipeThrough(
      new TransformStream<UIMessageChunk, UIMessageChunk>({
        transform: (chunk, controller) => {
          if (chunk.type === 'finish') finished = true;
          controller.enqueue(chunk);
        },
        flush: () => {
          this.unfinished = !finished;
        },
      }),
    );
  }

  override async reconnectToStream(options: ReconnectOptions): Promise<ReadableStream<UIMessageChunk> | null> {
    const stream = await super.reconnectToStream(options);
    this.nothingInFlight = stream === null;
    return stream;
  }
}

/** What the chat's `onFinish` tells about a reply. */
interface Finished {
  readonly message: UIMessage;
  readonly isAbort: boolean;
  readonly isDisconnect: boolean;
}

/**
 * Resumes the chat's reply in flight: `onLoad` (the page was (re)loaded mid-reply) and
 * `onFinish` (give it the chat's `onFinish`: a reply that did not finish — cut off, or started
 * over on another worker — is dropped and replayed whole, so it shows once). When nothing is in
 * flight any more after an interruption, the saved conversation is loaded instead: the reply
 * finished meanwhile. A reply resumed on load is shown without the question that asked it (the
 * question is saved with the turn): once it finished, the saved conversation is loaded.
 */
export function resumer(
  chatOf: () => Chat,
  transport: ResumingTransport,
  reload: () => Promise<UIMessage[]>,
): { onLoad: () => Promise<void>; onFinish: (finished: Finished) => void } {
  const resume = async (interrupted: UIMessage | undefined): Promise<void> => {
    const chat = chatOf();
    if (interrupted !== undefined) chat.messages = chat.messages.filter((m) => m.id !== interrupted.id);
    await chat.resumeStream();
    if (transport.nothingInFlight && interrupted !== undefined) chat.messages = await reload();
  };
  let reloadWhenFinished = false;
  const reloadSaved = async (): Promise<void> => {
    chatOf().messages = await reload();
  };
  return {
    onLoad: async () => {
      reloadWhenFinished = true;
      await resume(undefined);
      if (transport.nothingInFlight) reloadWhenFinished = false;
    },
    onFinish: ({ message, isAbort, isDisconnect }) => {
      const unfinished = transport.unfinished;
      transport.unfinished = false;
      if (isAbort) return;
      if (!(isDisconnect || unfinished)) {
        if (reloadWhenFinished) {
          reloadWhenFinished = false;
          setTimeout(() => {
            reloadSaved().catch((error: unknown) => {
              console.error('web chat: loading the conversation failed', error);
            });
          }, 0);
        }
        return;
      }
      // After the chat settled this request (onFinish runs inside it).
      setTimeout(() => {
        resume(message.role === 'assistant' ? message : undefined).catch((error: unknown) => {
          console.error('web chat: resuming the reply failed', error);
        });
      }, 0);
    },
  };
}
