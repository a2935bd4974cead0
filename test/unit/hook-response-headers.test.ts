import { evaluateHere } from '../support/expressions';
import fc from 'fast-check';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import {
  MAX_RESPONSE_HEADER_VALUE,
  REFUSED_RESPONSE_HEADERS,
  responseHeaderNameProblem,
  responseHeaderProblem,
} from '../../contracts/hook-response-headers';
import { scenarioStepSchema } from '../../contracts/integrator';
import { computeStep, isComputeStep, StepFailure } from '../../integrator/steps';
import { servesHooks } from '../../infra/http/tenant';

/** Whether node:http itself would send this header (the check that made a bad one a 500 at answer time). */
function nodeSends(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

const REFUSED_NAMES = [...REFUSED_RESPONSE_HEADERS.keys()];
/** Any spelling of a name in upper and lower case. */
const anyCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((char, index) => (upper[index] ? char.toUpperCase() : char)).join(''));
const refusedName = fc.oneof(
  fc.constantFrom(...REFUSED_NAMES).chain(anyCase),
  fc
    .tuple(fc.constantFrom('proxy-', 'x-accel-'), fc.stringMatching(/^[A-Za-z0-9-]{0,20}$/))
    .chain(([prefix, rest]) => anyCase(prefix + rest)),
);
/** Header names: tokens, names a hook may not answer, and any text at all. */
const anyName = fc.oneof(
  fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,30}$/),
  refusedName,
  fc.string({ unit: 'binary', maxLength: 30 }),
);
/** Header values: Latin-1 text, text with line breaks or NUL, any Unicode, and surrounding spaces. */
const anyValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)) }),
  fc
    .tuple(fc.string(), fc.constantFrom('\r', '\n', '\r\n', '\0', '\x7f'), fc.string())
    .map((parts) => parts.join('')),
  fc.string({ unit: 'binary' }),
  fc.string().map((text) => ` ${text}\t`),
);

describe('the headers a Webhook response may answer', () => {
  test('any name and value: a reason, or a header node:http sends as it is', () => {
    fc.assert(
      fc.property(anyName, anyValue, (name, value) => {
        const problem = responseHeaderProblem(name, value);
        const expected =
          nodeSends(name, value) &&
          name.length <= 100 &&
          value.length <= MAX_RESPONSE_HEADER_VALUE &&
          !/^[ \t]|[ \t]$/.test(value) &&
          !REFUSED_NAMES.includes(name.toLowerCase()) &&
          !/^(proxy|x-accel)-/i.test(name);
        expect(problem === null).toBe(expected);
        if (problem !== null) expect(problem.length).toBeGreaterThan(10);
      }),
      { numRuns: 2000 },
    );
  });

  test('cookies, hop-by-hop and framing headers, and origin-wide policies are refused in any case, naming the header', () => {
    fc.assert(
      fc.property(refusedName, (name) => {
        expect(responseHeaderNameProblem(name)).toContain(name);
      }),
      { numRuns: 500 },
    );
    for (const name of ['Set-Cookie', 'Connection', 'Content-Length', 'Content-Security-Policy', 'Proxy-Foo'])
      expect(responseHeaderNameProblem(name)).toMatch(/may not set/);
  });

  test('a value of any Latin-1 text is answered exactly; anything beyond Latin-1 is refused', () => {
    expect(responseHeaderProblem('X-Made-By', 'café – naïve')).toMatch(/Latin-1/);
    expect(responseHeaderProblem('X-Made-By', 'café naïve')).toBeNull();
    expect(responseHeaderProblem('Content-Type', 'text/html; charset=utf-8')).toBeNull();
    expect(responseHeaderProblem('X-A', 'a'.repeat(MAX_RESPONSE_HEADER_VALUE + 1))).toMatch(/at most/);
  });
});

describe('a Webhook response step with computed header values', () => {
  const stepWith = (name: string) => {
    const step = scenarioStepSchema.parse({
      kind: 'webhookResponse',
      status: 200,
      headers: [{ name, value: { expr: 'v' } }],
    });
    if (!isComputeStep(step)) throw new Error('not a computing step');
    return step;
  };

  test('any computed value: the answer holds it (trimmed) or the run fails with why, never another error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(anyValue, fc.jsonValue()),
        fc.constantFrom('X-Made-By', 'Location', 'Content-Type'),
        async (value, name) => {
          const step = stepWith(name);
          try {
            const { output } = await computeStep(step, {
              bundle: { v: value },
              vars: {},
              runId: 'run-1',
              expressions: evaluateHere,
            });
            const headers = (output as { headers: Array<{ name: string; value: string }> }).headers;
            for (const header of headers) expect(responseHeaderProblem(header.name, header.value)).toBeNull();
            const answered = headers.find((header) => header.name === name)?.value;
            if (value === null) expect(answered).toBeUndefined();
            else
              expect(answered).toBe(
                (typeof value === 'string' ? value : JSON.stringify(value)).replace(/^[ \t]+|[ \t]+$/g, ''),
              );
          } catch (error) {
            expect(error).toBeInstanceOf(StepFailure);
            expect((error as Error).message).toContain(`response header ${name}`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a long computed value is checked in linear time, and refused for its length', async () => {
    const started = Date.now();
    await expect(
      computeStep(stepWith('X-Long'), {
        bundle: { v: `${' '.repeat(2_000_000)}x${' '.repeat(2_000_000)}y` },
        vars: {},
        runId: 'run-1',
        expressions: evaluateHere,
      }),
    ).rejects.toThrow(/at most 8192 characters/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('a header whose expression gives null or nothing is not answered', async () => {
    const { output } = await computeStep(stepWith('X-Missing'), {
      bundle: {},
      vars: {},
      runId: 'run-1',
      expressions: evaluateHere,
    });
    expect(output).toEqual({ status: 200, headers: [], body: '' });
  });

  test('a refused name kept in a scenario saved before the check fails the run, naming it', async () => {
    const step = scenarioStepSchema.parse({
      kind: 'webhookResponse',
      status: 200,
      headers: [{ name: 'Set-Cookie', value: 'rp_session=x; Domain=records.example' }],
    });
    if (!isComputeStep(step)) throw new Error('not a computing step');
    await expect(
      computeStep(step, { bundle: {}, vars: {}, runId: 'run-1', expressions: evaluateHere }),
    ).rejects.toThrow(/response header Set-Cookie: a Webhook response may not set Set-Cookie/);
  });
});

describe('the hosts hooks are served on', () => {
  const system = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
  const port = fc.option(
    fc.integer({ min: 1, max: 65535 }).map((number) => `:${number}`),
    { nil: '' },
  );

  test("with HOOK_BASE_URL: its host name alone, any port and case; never a system's host", () => {
    fc.assert(
      fc.property(system, port, (name, suffix) => {
        expect(servesHooks(`hooks.example.org${suffix}`, 'hooks.example.org', 'records.example')).toBe(true);
        expect(servesHooks(`HOOKS.Example.org${suffix}`, 'hooks.example.org', 'records.example')).toBe(true);
        expect(servesHooks(`${name}.records.example${suffix}`, 'hooks.example.org', 'records.example')).toBe(
          false,
        );
        expect(servesHooks(`records.example${suffix}`, 'hooks.example.org', 'records.example')).toBe(false);
      }),
    );
    expect(servesHooks(undefined, 'hooks.example.org', 'records.example')).toBe(false);
    expect(servesHooks('127.0.0.1:8080', '127.0.0.1', 'localhost')).toBe(true);
  });

  test("without it: the base host (any host that is not a system's), never a system's host", () => {
    fc.assert(
      fc.property(system, port, (name, suffix) => {
        expect(servesHooks(`records.example${suffix}`, undefined, 'records.example')).toBe(true);
        expect(servesHooks(`${name}.records.example${suffix}`, undefined, 'records.example')).toBe(false);
        expect(servesHooks(`${name}.RECORDS.example${suffix}`, undefined, 'records.example')).toBe(false);
      }),
    );
    expect(servesHooks('127.0.0.1:3000', undefined, 'localhost')).toBe(true);
    expect(servesHooks(undefined, undefined, 'localhost')).toBe(true);
  });
});
