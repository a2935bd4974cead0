/**
 * What a Webhook response may say in its headers. A hook answers on the hook host (HOOK_BASE_URL), a browser
 * origin of its own, so a scenario's answer may not act on that origin beyond its own page (cookies, origin-wide
 * policies, credential prompts), nor on the connection or the gateway in front (framing, hop-by-hop and proxy
 * instructions), nor lift the sandbox every hook answer carries.
 */

/** Headers every hook answer carries, whatever the scenario says: its page runs no script and is not sniffed. */
export const HOOK_ANSWER_HEADERS: ReadonlyArray<{ readonly name: string; readonly value: string }> = [
  { name: 'Content-Security-Policy', value: 'sandbox' },
  { name: 'X-Content-Type-Options', value: 'nosniff' },
];

/** The header names a Webhook response may not set (lower case), each with why. */
export const REFUSED_RESPONSE_HEADERS: ReadonlyMap<string, string> = new Map([
  ...['set-cookie', 'set-cookie2'].map((name) => [name, 'a hook answer sets no cookies'] as const),
  ...[
    'connection',
    'keep-alive',
    'transfer-encoding',
    'content-length',
    'content-encoding',
    'upgrade',
    'te',
    'trailer',
    'http2-settings',
  ].map((name) => [name, 'the platform frames the answer and manages the connection'] as const),
  ...['content-security-policy', 'content-security-policy-report-only', 'x-content-type-options'].map(
    (name) => [name, 'every hook answer is sandboxed by the platform'] as const,
  ),
  ...[
    'strict-transport-security',
    'public-key-pins',
    'public-key-pins-report-only',
    'expect-ct',
    'alt-svc',
    'clear-site-data',
    'nel',
    'report-to',
    'reporting-endpoints',
    'service-worker-allowed',
    'access-control-allow-credentials',
  ].map((name) => [name, 'it would act on the whole hook host, beyond this answer'] as const),
  ['www-authenticate', 'a hook answer does not ask for credentials'],
  ['x-sendfile', 'it instructs the gateway in front of the platform'],
]);
/** Prefixes of refused names: proxy instructions and nginx's `X-Accel-*` (the gateway acts on them). */
const REFUSED_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['proxy-', 'it is for proxies, not a hook answer'],
  ['x-accel-', 'it instructs the gateway in front of the platform'],
];

/** The longest header value a Webhook response may have. */
export const MAX_RESPONSE_HEADER_VALUE = 8192;

/** RFC 9110 token characters: a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Latin-1 without control characters (tab allowed): what HTTP/1.1 carries in a header value. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why a Webhook response may not answer this header name (null: it may). */
export function responseHeaderNameProblem(name: string): string | null {
  if (!HEADER_NAME.test(name)) return "a header name is 1-100 letters, digits or !#$%&'*+.^_`|~-";
  const lower = name.toLowerCase();
  const refused = REFUSED_RESPONSE_HEADERS.get(lower);
  if (refused !== undefined) return `a Webhook response may not set ${name}: ${refused}`;
  for (const [prefix, why] of REFUSED_PREFIXES)
    if (lower.startsWith(prefix)) return `a Webhook response may not set ${name}: ${why}`;
  return null;
}

/** Why this header value cannot be answered (null: it can, exactly as it is). */
export function responseHeaderValueProblem(value: string): string | null {
  if (value.length > MAX_RESPONSE_HEADER_VALUE)
    return `a header value is at most ${MAX_RESPONSE_HEADER_VALUE} characters`;
  if (!HEADER_VALUE.test(value))
    return 'a header value is Latin-1 text (U+0000-U+00FF) without line breaks or other control characters';
  if (/^[ \t]|[ \t]$/.test(value)) return 'a header value does not start or end with a space or tab';
  return null;
}

/** Why a Webhook response may not answer this header (null: it may). */
export function responseHeaderProblem(name: string, value: string): string | null {
  return responseHeaderNameProblem(name) ?? responseHeaderValueProblem(value);
}

/** The text a mapped header value is answered as: text as it is, anything else as JSON; null or nothing: none. */
export function headerText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `text` without the spaces and tabs around it (in one pass: a computed value may be megabytes long). */
export function withoutSurroundingSpace(text: string): string {
  const blank = (char: string | undefined) => char === ' ' || char === '\t';
  let start = 0;
  let end = text.length;
  while (start < end && blank(text[start])) start += 1;
  while (end > start && blank(text[end - 1])) end -= 1;
  return text.slice(start, end);
}
