import { isFerretDbV1, regexEngineOf } from '../../infra/read-store/mongodb-query';

describe('what the read store takes the MongoDB-wire server to be, from its buildInfo', () => {
  test.each([
    [{ version: '7.0.14' }, false, 'backtracking'],
    [{ version: '7.0.77', ferretdbVersion: 'v1.24.2' }, true, 'automaton'],
    [{ version: '7.0.77', ferretdbVersion: '1.24.0' }, true, 'automaton'],
    [{ version: '7.0.77', ferretdbVersion: 'unknown' }, true, 'automaton'],
    [{ version: '7.0.77', ferretdbVersion: 'v2.1.0' }, false, 'backtracking'],
    [{ version: '7.0.77', ferretdbVersion: 2 }, false, 'backtracking'],
  ])('%j: FerretDB 1.x %s, regular expressions run by %s', (buildInfo, ferretDbV1, engine) => {
    expect(isFerretDbV1(buildInfo)).toBe(ferretDbV1);
    expect(regexEngineOf(buildInfo)).toBe(engine);
  });
});
