import { canonicalJson } from '@factum/agent-facts';
import { blocksOf } from './map-anthropic-request.js';
import { mapMessage } from './map-chat-completions-request.js';
import { mapItems } from './map-responses-request.js';
import type { ModelMessage } from './model-request.js';
import type { ProviderConfig, ProviderKind } from './provider-config.js';

/**
 * Where the state of a conversation's canonical text stands after some messages: what
 * a writer needs to go on, and nothing that later messages change.
 */
export type WriterState = { readonly open: boolean; readonly role?: string };

/**
 * How one wire format writes a conversation into its body, message by message, as the
 * canonical text `canonicalJson` gives the whole array: each message adds text that no
 * later message changes, and `close` ends the array. This is what lets a digest of a
 * growing conversation hash only what each request adds.
 */
export interface ConversationWire {
  /** The body's key holding the conversation. */
  readonly key: string;
  /** Whether the body carries some messages outside the conversation (Anthropic's system text). */
  readonly hasOutside: boolean;
  /** A message the body carries outside the conversation. */
  outside(message: ModelMessage): boolean;
  /** The text `message` adds after `state`, and the state after it. */
  append(state: WriterState, message: ModelMessage): { readonly text: string; readonly state: WriterState };
  /** The text that closes the array after `state`. */
  close(state: WriterState): string;
  /** What of the provider the text depends on besides the messages. */
  variant(provider: ProviderConfig): string;
}

export const EMPTY_WRITER: WriterState = { open: false };

/** A wire whose array holds items each message maps to on its own. */
function itemsWire(
  key: string,
  items: (message: ModelMessage, systemRole: string) => readonly Record<string, unknown>[],
): (provider: ProviderConfig) => ConversationWire {
  return (provider) => {
    const systemRole = provider.capabilities?.systemRole ?? 'system';
    return {
      key,
      hasOutside: false,
      outside: () => false,
      append(state, message) {
        let text = '';
        let open = state.open;
        for (const item of items(message, systemRole)) {
          text += `${open ? ',' : '['}${canonicalJson(item)}`;
          open = true;
        }
        return { text, state: open === state.open ? state : { open } };
      },
      close: (state) => (state.open ? ']' : '[]'),
      variant: () => systemRole,
    };
  };
}

/**
 * Anthropic's messages: consecutive blocks of one role merge into one message, whose
 * canonical text puts `content` before `role` — so a message's blocks can be written as
 * they come, and its role once the next role (or the end) is known.
 */
const anthropicWire: ConversationWire = {
  key: 'messages',
  hasOutside: true,
  outside: (message) => message.role === 'system',
  append(state, message) {
    if (message.role === 'system') return { text: '', state };
    const blocks = blocksOf(message);
    if (blocks.length === 0) return { text: '', state };
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const written = blocks.map((block) => canonicalJson(block)).join(',');
    if (state.role === role) return { text: `,${written}`, state };
    const before = state.role === undefined ? '[' : `],"role":${JSON.stringify(state.role)}},`;
    return { text: `${before}{"content":[${written}`, state: { open: true, role } };
  },
  close: (state) => (state.role === undefined ? '[]' : `],"role":${JSON.stringify(state.role)}}]`),
  variant: () => '',
};

const chatWire = itemsWire('messages', (message, systemRole) => [mapMessage(message, systemRole)]);
const responsesWire = itemsWire('input', mapItems);

/** The conversation wire of a provider's format. */
export function conversationWire(provider: ProviderConfig): ConversationWire {
  const kind: ProviderKind = provider.kind;
  switch (kind) {
    case 'openai_chat_completions':
      return chatWire(provider);
    case 'openai_responses':
      return responsesWire(provider);
    case 'anthropic_messages':
      return anthropicWire;
    default:
      return kind satisfies never;
  }
}
