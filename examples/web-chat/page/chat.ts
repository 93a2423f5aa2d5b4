// The AI SDK's chat client, for a page without a framework: `AbstractChat` from `ai` (what
// `useChat` and the Vue/Svelte `Chat` classes are built on) over a plain state object that
// calls `onChange` whenever the messages or the status change. All protocol work — sending,
// reading the UI message stream, tool approvals — is the AI SDK's.
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai';

class ListState<M extends UIMessage> implements ChatState<M> {
  #status: ChatStatus = 'ready';
  #error: Error | undefined;
  #messages: M[];
  readonly #onChange: () => void;

  constructor(messages: M[], onChange: () => void) {
    this.#messages = messages;
    this.#onChange = onChange;
  }

  get status(): ChatStatus {
    return this.#status;
  }
  set status(status: ChatStatus) {
    this.#status = status;
    this.#onChange();
  }
  get error(): Error | undefined {
    return this.#error;
  }
  set error(error: Error | undefined) {
    this.#error = error;
    this.#onChange();
  }
  get messages(): M[] {
    return this.#messages;
  }
  set messages(messages: M[]) {
    this.#messages = [...messages];
    this.#onChange();
  }
  pushMessage = (message: M): void => {
    this.#messages = [...this.#messages, message];
    this.#onChange();
  };
  popMessage = (): void => {
    this.#messages = this.#messages.slice(0, -1);
    this.#onChange();
  };
  replaceMessage = (index: number, message: M): void => {
    this.#messages = this.#messages.map((m, i) => (i === index ? message : m));
    this.#onChange();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** A chat with the desk: the AI SDK's `AbstractChat`, notifying `onChange` on every update. */
export class Chat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor(init: ChatInit<M> & { onChange: () => void }) {
    const { messages = [], onChange, ...rest } = init;
    super({ ...rest, state: new ListState(messages, onChange) });
  }
}
