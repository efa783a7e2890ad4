/**
 * How a prompt ended on the agent server, as recorded and delivered:
 * `success` (the assistant answered), `cancelled` (aborted natively) or `failed`
 * (the server reported an error for the assistant message).
 */
export type PromptOutcome =
  | { readonly outcome: 'success'; readonly assistantMessageId: string; readonly text: string }
  | { readonly outcome: 'cancelled'; readonly assistantMessageId: string | null }
  | {
      readonly outcome: 'failed';
      readonly assistantMessageId: string | null;
      readonly errorName: string;
      readonly errorMessage: string;
    };
