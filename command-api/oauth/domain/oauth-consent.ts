import type { OAuthConsentAnsweredData, OAuthConsentEvent } from '../../../contracts/events/oauth';
import { OAuthError } from '../../../contracts/oauth';
import type { Decider } from '../../kit/decider';

export interface OAuthConsentState {
  /** The answer given with this consent page's ticket, or null while it is open. */
  readonly answer: OAuthConsentAnsweredData['decision'] | null;
}

export type OAuthConsentCommand = {
  readonly kind: 'AnswerConsent';
  readonly answer: OAuthConsentAnsweredData;
  readonly now: string;
  /** When the page's ticket stops being good. */
  readonly expiresAt: string;
};

/**
 * One consent page (OA-08): its ticket takes one answer, Allow or Deny, before it expires. A second answer (a
 * replayed form, a double click, another tab) is refused, so one page never starts two grants.
 */
export const oauthConsentDecider: Decider<OAuthConsentState, OAuthConsentCommand, OAuthConsentEvent> = {
  initialState: { answer: null },

  decide(command, state) {
    if (state.answer !== null)
      throw new OAuthError('invalid_request', 'this consent page was answered already');
    if (command.now >= command.expiresAt)
      throw new OAuthError('invalid_request', 'this consent page has expired: start the authorization again');
    return [{ type: 'OAuthConsentAnswered', data: command.answer }];
  },

  evolve(_state, event) {
    return { answer: event.data.decision };
  },
};
