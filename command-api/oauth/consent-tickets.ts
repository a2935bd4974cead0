import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Principal } from '../../contracts/auth';
import { CONSENT_TICKET_SECONDS } from '../../contracts/oauth';
import { hashToken } from '../../contracts/secrets';

const AUDIENCE = 'records-platform:oauth-consent';

/** The authorization request parameters a consent page stands for, exactly as the client sent them. */
export const AUTHORIZE_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
] as const;

const claimsSchema = z.object({
  tnt: z.string(),
  sub: z.string(),
  sid: z.string(),
  jti: z.string().regex(/^[0-9a-f]{32}$/),
  exp: z.number().int(),
  req: z.partialRecord(z.enum(AUTHORIZE_PARAMETERS), z.string()),
});

export interface ConsentTicket {
  readonly ticketId: string;
  readonly expiresAt: string;
  /** The authorization request, to be checked again when the answer comes. */
  readonly request: Readonly<Partial<Record<(typeof AUTHORIZE_PARAMETERS)[number], string>>>;
}

/** The session a ticket is bound to, without putting the session's own hash in the page. */
const sessionBinding = (principal: Principal) =>
  hashToken(`oauth-consent:${principal.credential.sessionHash ?? ''}`).slice(0, 32);

/**
 * Consent tickets: what a consent page's form carries (OA-08). Signed (HS256, a key of its own), good for
 * `CONSENT_TICKET_SECONDS`, bound to the tenant, user and session that saw the page and to the authorization
 * request; single use is the consent aggregate's (one answer per ticket id).
 */
export function consentTickets(key: Buffer) {
  return {
    issue(principal: Principal, request: ConsentTicket['request']): string {
      return jwt.sign({ tnt: principal.tenant, sid: sessionBinding(principal), req: request }, key, {
        algorithm: 'HS256',
        audience: AUDIENCE,
        subject: principal.userId,
        jwtid: randomBytes(16).toString('hex'),
        expiresIn: CONSENT_TICKET_SECONDS,
      });
    },

    /** The ticket's content, or null when it is forged, expired, or not this principal's session's. */
    open(ticket: string, principal: Principal): ConsentTicket | null {
      let verified: unknown;
      try {
        verified = jwt.verify(ticket, key, { algorithms: ['HS256'], audience: AUDIENCE });
      } catch {
        return null;
      }
      const claims = claimsSchema.safeParse(verified);
      if (
        !claims.success ||
        claims.data.tnt !== principal.tenant ||
        claims.data.sub !== principal.userId ||
        claims.data.sid !== sessionBinding(principal)
      )
        return null;
      return {
        ticketId: claims.data.jti,
        expiresAt: new Date(claims.data.exp * 1000).toISOString(),
        request: claims.data.req,
      };
    },
  };
}
