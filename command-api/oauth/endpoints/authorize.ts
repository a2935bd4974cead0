import type { Request, Response, Router } from 'express';
import {
  answerConsent as answerConsentOperation,
  authorize,
  consentBody,
} from '../../../contracts/api/oauth';
import { OAuthError } from '../../../contracts/oauth';
import { contextOf, principalOf } from '../../../infra/http/context';
import { issuerOf } from '../../../infra/http/issuer';
import { mount } from '../../../infra/http/operations';
import type { CommandDeps } from '../../deps';
import { commandContext } from '../../kit/route-context';
import { consentTickets } from '../consent-tickets';
import {
  answerConsent,
  issueCode,
  newCode,
  readAuthorization,
  type Destination,
} from '../grants/authorization-code';
import { sendConsentPage, sendConsentRefusal } from './consent-page';
import { sendOAuthError } from './oauth-answers';

/** The `host[:port]` of an Origin header, or null for `null` and anything that is not a URL. */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host || null;
  } catch {
    return null;
  }
}

/** Back to the client's redirect URI (302, with `state` and `iss`: OA-04, OA-10, OA-11). */
function redirectBack(
  req: Request,
  res: Response,
  to: Destination,
  parameters: Record<string, string | undefined>,
): void {
  const target = new URL(to.redirectUri);
  for (const [name, value] of Object.entries({ ...parameters, state: to.state, iss: issuerOf(req) }))
    if (value !== undefined) target.searchParams.append(name, value);
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, target.toString());
}

const errorParameters = (error: OAuthError) => ({ error: error.code, error_description: error.message });

/** The authorization endpoint (code + PKCE): `GET /auth/oauth/authorize` and its consent page's answer. */
export function addAuthorizeEndpoint(router: Router, deps: CommandDeps): void {
  const tickets = consentTickets(deps.sealer.derivedKey('oauth-consent'));

  /**
   * The token holder consents by calling (Bearer / X-Authorization: the spec's programmatic shape): the code
   * comes at once. A browser, signed in by the session cookie, gets the consent page first (OA-08).
   */
  mount(router, authorize, async (req, res) => {
    // OA-09: never framed, never leaking the code in a Referer.
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    res.setHeader('Referrer-Policy', 'no-referrer');
    const context = contextOf(req);
    const read = await readAuthorization(deps.handler, context.tenant, req.query);
    if (read.to === null) return sendOAuthError(res, read.error);
    if ('error' in read) return redirectBack(req, res, read.to, errorParameters(read.error));
    const principal = principalOf(req);
    if (context.credentialSource !== 'cookie') {
      const code = await issueCode(
        deps,
        Number(principal.userId),
        read.to,
        read.request,
        commandContext(req, principal, deps.newCommandId()),
      );
      return redirectBack(req, res, read.to, { code });
    }
    sendConsentPage(res, {
      clientId: read.request.clientId,
      clientName: read.request.clientName,
      scope: read.request.scope,
      redirectUri: read.to.redirectUri,
      action: `${issuerOf(req)}/auth/oauth/authorize`,
      ticket: tickets.issue(principal, read.request.parameters),
      accessTokenSeconds: deps.accessTokens.lifetimeSeconds,
    });
  });

  /**
   * The consent page's Allow / Deny (a form post, signed in by the session cookie: the operation is a session
   * form, so X-CSRF-Token is not asked for; the ticket, bound to this session and answerable once, stands in).
   */
  mount(router, answerConsentOperation, async (req, res) => {
    const context = contextOf(req);
    const principal = context.principal;
    const answer = consentBody.safeParse(req.body);
    if (!answer.success) return sendConsentRefusal(res, 'The consent form is malformed.');
    // The page posts to its own host; the scheme is left aside (a TLS proxy may hide it from req.protocol).
    const origin = req.headers.origin;
    if (origin !== undefined && hostOf(origin) !== req.get('host'))
      return sendConsentRefusal(res, 'The consent form was sent from another site.');
    if (!principal || context.credentialSource !== 'cookie' || principal.credential.kind !== 'session')
      return sendConsentRefusal(res, 'Consent is given in the browser session that was asked for it.');
    const ticket = tickets.open(answer.data.ticket, principal);
    if (!ticket)
      return sendConsentRefusal(res, 'The consent page is invalid, expired, or belongs to another session.');
    const read = await readAuthorization(deps.handler, context.tenant, ticket.request);
    if (read.to === null) return sendConsentRefusal(res, read.error.message);
    if ('error' in read) return redirectBack(req, res, read.to, errorParameters(read.error));
    const userId = Number(principal.userId);
    // The code is drawn first so the consent names its grant; the ticket is spent before the code exists.
    const drawn = answer.data.decision === 'allow' ? newCode() : null;
    try {
      await answerConsent(
        deps,
        {
          ticket,
          request: read.request,
          userId,
          decision: answer.data.decision,
          grantId: drawn?.grantId ?? null,
        },
        commandContext(req, principal, deps.newCommandId()),
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      return sendConsentRefusal(res, error.message);
    }
    if (!drawn)
      return redirectBack(req, res, read.to, {
        error: 'access_denied',
        error_description: 'the resource owner denied the request',
      });
    const code = await issueCode(
      deps,
      userId,
      read.to,
      read.request,
      commandContext(req, principal, deps.newCommandId()),
      drawn,
    );
    redirectBack(req, res, read.to, { code });
  });
}
