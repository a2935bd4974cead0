import { createHash } from 'node:crypto';
import type { Response } from 'express';
import {
  CODE_LIFETIME_SECONDS,
  GRANT_LIFETIME_DAYS,
  permissionsOfScope,
  scopeTokens,
} from '../../../contracts/oauth';

/** The consent page's only style, allowed by its hash: the page loads nothing and runs no script. */
const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f5;color:#222}' +
  'main{max-width:34rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px}' +
  'h1{font-size:1.3rem}code{background:#eee;padding:0 .3em}' +
  'button{font:inherit;padding:.5em 1.5em;margin-right:1em;cursor:pointer}';
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

function page(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>` +
    `<style>${STYLE}</style></head><body><main>${body}</main></body></html>`
  );
}

/**
 * Sends a page of the authorization endpoint (OA-09): never framed, never cached, no referrer; nothing but
 * its own hashed style; its form may post only to this endpoint, and the answer redirect only to `redirectTo`.
 */
function sendPage(res: Response, status: number, html: string, redirectTo?: string): void {
  const formAction = redirectTo === undefined ? "'none'" : `'self' ${new URL(redirectTo).origin}`;
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src ${STYLE_SOURCE}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.status(status).type('html').send(html);
}

export interface ConsentPage {
  readonly clientId: string;
  readonly clientName: string;
  readonly scope: string;
  readonly redirectUri: string;
  /** Where the form posts (the authorization endpoint), and the single-use ticket it carries. */
  readonly action: string;
  readonly ticket: string;
  readonly accessTokenSeconds: number;
}

/** OA-08: who asks (the client's name), for what (the scopes), for how long; Allow or Deny. */
export function sendConsentPage(res: Response, consent: ConsentPage): void {
  const name = escapeHtml(consent.clientName);
  const tokens = scopeTokens(consent.scope);
  const asked =
    tokens.length === 0
      ? '<p>No scope: it could do <strong>everything you may do</strong>.</p>'
      : `<ul>${tokens.map((token) => `<li><code>${escapeHtml(token)}</code></li>`).join('')}</ul>` +
        (permissionsOfScope(consent.scope) === undefined
          ? '<p>These scopes do not narrow your rights: it could do <strong>everything you may do</strong>.</p>'
          : '');
  const target = new URL(consent.redirectUri);
  const body =
    `<h1>Allow ${name} to use your account?</h1>` +
    `<p><strong>${name}</strong> (client <code>${escapeHtml(consent.clientId)}</code>) asks for:</p>${asked}` +
    `<p>If you allow it, it gets a one-time code valid for ${CODE_LIFETIME_SECONDS} seconds, exchanged for ` +
    `access tokens valid ${Math.round(consent.accessTokenSeconds / 60)} minutes each, renewable for ` +
    `${GRANT_LIFETIME_DAYS} days at most. You can revoke it at any time (your OAuth grants).</p>` +
    `<p>You will be sent back to <strong>${escapeHtml(target.origin + target.pathname)}</strong>.</p>` +
    `<form method="post" action="${escapeHtml(consent.action)}">` +
    `<input type="hidden" name="ticket" value="${escapeHtml(consent.ticket)}">` +
    '<button type="submit" name="decision" value="allow">Allow</button>' +
    '<button type="submit" name="decision" value="deny">Deny</button></form>';
  sendPage(res, 200, page(`Allow ${consent.clientName}?`, body), consent.redirectUri);
}

/** A consent answer that cannot be taken (tampered, expired, replayed, another session's): no redirect. */
export function sendConsentRefusal(res: Response, reason: string): void {
  sendPage(
    res,
    400,
    page(
      'Authorization refused',
      `<h1>This authorization cannot go on</h1><p>${escapeHtml(reason)}</p>` +
        '<p>Go back to the application and start again.</p>',
    ),
  );
}
