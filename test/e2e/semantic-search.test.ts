import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describeContract } from '../support/adapter-report';
import { json, startPlatform, type Entity, type TestPlatform } from '../support/platform';
import { dropCollections, qdrantAvailability, testCollectionPrefix } from '../support/qdrant';

jest.setTimeout(120_000);

interface Found {
  items: Array<Record<string, unknown> & { id: number; similarity?: number; distance?: number }>;
  meta: { spaceId: number; limit: number; total: number; searched: number; model: string };
}

/**
 * Semantic search end to end on the embedded model, on each vector index: records written, found by meaning.
 * `index` is the platform's settings for it (Qdrant's with collections of this suite's own prefix).
 */
function semanticSearchSuite(index: Record<string, string>): void {
  let platform: TestPlatform;
  let spaceId: number;
  let otherSpaceId: number;
  let moduleId: number;
  let lastPosition = '0';

  beforeAll(async () => {
    platform = await startPlatform({ SEMANTIC_SEARCH: 'true', ...index });
    spaceId = (await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Support' } }))).id;
    otherSpaceId = (await json<Entity>(await platform.call('POST', '/space', { body: { name: 'Other' } })))
      .id;
    moduleId = (
      await json<Entity>(await platform.call('POST', '/module', { body: { spaceId, name: 'Tickets' } }))
    ).id;
    const field = await platform.call('POST', '/field', {
      body: { moduleId, key: 'details', name: 'Details', type: 'long_text' },
    });
    expect({ status: field.status, body: await field.text() }).toMatchObject({ status: 201 });
    const otherModule = (
      await json<Entity>(
        await platform.call('POST', '/module', { body: { spaceId: otherSpaceId, name: 'Elsewhere' } }),
      )
    ).id;
    const records: Array<[number, string, string]> = [
      [moduleId, 'Cannot log in', 'I forgot my password and the reset link never arrives.'],
      [moduleId, 'Invoice question', 'The quarterly invoice shows the wrong amount for our subscription.'],
      [moduleId, 'Kitten photo', 'A small cat is sleeping on a rug in the sun.'],
      [
        moduleId,
        'Shipping delay',
        'My parcel has not been delivered yet, the tracking number shows no update.',
      ],
      [otherModule, 'Password help', 'How do I change my login credentials?'],
    ];
    for (const [module, name, details] of records) {
      const response = await platform.call('POST', '/record', {
        body: { moduleId: module, name, fields: module === moduleId ? { details } : {} },
      });
      expect({ status: response.status, body: await response.text() }).toMatchObject({ status: 201 });
      lastPosition = response.headers.get('x-position')!;
    }
  });
  afterAll(async () => {
    await platform?.stop();
    if (index.QDRANT_URL) await dropCollections(index.QDRANT_URL, index.QDRANT_COLLECTION_PREFIX!);
  });

  const search = (kind: string, params: Record<string, string | number>) =>
    platform.call(
      'GET',
      `/record/vector/${kind}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString()}`,
      {
        headers: { 'X-Min-Position': lastPosition },
      },
    );

  test('similar: the record that means the same comes first; only the space asked for', async () => {
    const response = await search('similar', { space_id: spaceId, query: 'I need to reset my password' });
    expect(response.status).toBe(200);
    const found = await json<Found>(response);
    expect(found.items[0]).toMatchObject({ name: 'Cannot log in', moduleId, spaceId });
    expect(found.items.map((item) => item.name)).not.toContain('Password help');
    expect(found.items).toHaveLength(4);
    for (let index = 1; index < found.items.length; index++)
      expect(found.items[index - 1]!.similarity!).toBeGreaterThanOrEqual(found.items[index]!.similarity!);
    expect(found.meta).toMatchObject({
      spaceId,
      limit: 20,
      total: 4,
      searched: 4,
      model: 'use-lite-512/record-text/1',
    });
    const floor = await json<Found>(
      await search('similar', {
        space_id: spaceId,
        query: 'I need to reset my password',
        min_similarity: 0.99,
      }),
    );
    expect(floor.items).toEqual([]);
  });

  test('outliers: the least alike first, with distances; a filter applies before ranking', async () => {
    const found = await json<Found>(
      await search('outliers', { space_id: spaceId, query: 'billing and invoices', limit: 2 }),
    );
    expect(found.items).toHaveLength(2);
    expect(found.items[0]!.distance!).toBeGreaterThanOrEqual(found.items[1]!.distance!);
    expect(found.items.map((item) => item.name)).not.toContain('Invoice question');
    const filtered = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'cat', filter: 'name~Ship%' }),
    );
    expect(filtered.items.map((item) => item.name)).toEqual(['Shipping delay']);
  });

  test('context: compact records with their custom field values in short notation', async () => {
    const found = await json<{ items: Array<Record<string, unknown>> }>(
      await search('context', { space_id: spaceId, query: 'parcel tracking', limit: 1 }),
    );
    expect(found.items).toHaveLength(1);
    expect(found.items[0]).toMatchObject({
      name: 'Shipping delay',
      customFields: [
        expect.objectContaining({
          value: 'My parcel has not been delivered yet, the tracking number shows no update.',
          customFieldInputName: 'Details',
        }),
      ],
    });
  });

  test('a segment applies before ranking, and context names it; one of another space is a 400', async () => {
    const segment = await platform.call('POST', '/segment', {
      body: { spaceId, name: 'Money matters', filter: 'name~Invoice%' },
    });
    expect(segment.status).toBe(201);
    const { id: segmentId } = await json<Entity>(segment);
    lastPosition = segment.headers.get('x-position')!;
    const found = await json<{ items: Array<Record<string, unknown>> }>(
      await search('context', { space_id: spaceId, query: 'cat on a rug', segment_id: segmentId }),
    );
    expect(found.items).toEqual([
      expect.objectContaining({ name: 'Invoice question', fromSegment: 'Money matters' }),
    ]);
    const elsewhere = await search('similar', { space_id: otherSpaceId, query: 'x', segment_id: segmentId });
    expect(elsewhere.status).toBe(400);
  });

  test('a deleted record disappears from the results; an update changes what it is found by', async () => {
    const found = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'kitten', limit: 1 }),
    );
    const kitten = found.items[0]!;
    expect(kitten.name).toBe('Kitten photo');
    const changed = await platform.call('PUT', `/record/${kitten.id}`, {
      body: { name: 'Refund request', fields: { details: 'Please refund my last payment.' } },
    });
    lastPosition = changed.headers.get('x-position')!;
    const after = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'kitten', limit: 1 }),
    );
    expect(after.items[0]!.name).not.toBe('Refund request');
    const refund = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'give me my money back', limit: 1 }),
    );
    expect(refund.items[0]!.id).toBe(kitten.id);
    const deleted = await platform.call('DELETE', `/record/${kitten.id}`);
    lastPosition = deleted.headers.get('x-position')!;
    const gone = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'give me my money back' }),
    );
    expect(gone.items.map((item) => item.id)).not.toContain(kitten.id);
  });

  test('a renamed field or label changes the text of every record that shows it', async () => {
    const module = (
      await json<Entity>(await platform.call('POST', '/module', { body: { spaceId, name: 'Paints' } }))
    ).id;
    const field = await json<Entity>(
      await platform.call('POST', '/field', {
        body: { moduleId: module, key: 'colour', name: 'Colour', type: 'text' },
      }),
    );
    const label = await json<Entity>(await platform.call('POST', '/label', { body: { name: 'Glossy' } }));
    const probe = await json<Entity>(
      await platform.call('POST', '/record', {
        body: { moduleId: module, name: 'Probe', fields: { colour: 'deep blue' } },
      }),
    );
    const labelled = await platform.call('POST', `/record/${probe.id}/label/${label.id}`);
    expect(labelled.status).toBeLessThan(300);
    lastPosition = labelled.headers.get('x-position')!;
    // The record's whole text as the query: its own vector answers with a similarity of 1.
    const similarityOf = async (text: string) => {
      const found = await json<Found>(await search('similar', { space_id: spaceId, query: text, limit: 1 }));
      return found.items[0]?.id === probe.id ? found.items[0]!.similarity! : 0;
    };
    expect(await similarityOf('Probe\nColour: deep blue\nLabels: Glossy')).toBeGreaterThan(0.999);
    const renamed = await platform.call('PUT', `/field/${field.id}`, { body: { name: 'Shade' } });
    expect(renamed.status).toBe(200);
    lastPosition = renamed.headers.get('x-position')!;
    expect(await similarityOf('Probe\nShade: deep blue\nLabels: Glossy')).toBeGreaterThan(0.999);
    const relabelled = await platform.call('PUT', `/label/${label.id}`, { body: { name: 'Matte' } });
    expect(relabelled.status).toBe(200);
    lastPosition = relabelled.headers.get('x-position')!;
    expect(await similarityOf('Probe\nShade: deep blue\nLabels: Matte')).toBeGreaterThan(0.999);
  });

  test('npm run replay -- vectors embeds every record anew while the platform serves; searches see the result', async () => {
    const replay = spawnSync(
      process.execPath,
      ['--require', require.resolve('tsx/cjs'), join(__dirname, '..', '..', 'bin', 'replay.ts'), 'vectors'],
      {
        env: {
          ...process.env,
          DATA_DIR: platform.dataDir,
          SEMANTIC_SEARCH: 'true',
          LOG_LEVEL: 'warn',
          ...index,
        },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect({ status: replay.status, stderr: replay.stderr }).toMatchObject({ status: 0 });
    expect(replay.stdout).toMatch(/rebuilt vectors: \d+ records up to position \d+/);
    const found = await json<Found>(
      await search('similar', { space_id: spaceId, query: 'parcel not delivered', limit: 1 }),
    );
    expect(found.items[0]).toMatchObject({ name: 'Shipping delay' });
  });

  test.each([
    [{ query: 'x' }, /space_id is required/],
    [{ space_id: 'abc', query: 'x' }, /space_id must be a whole number/],
    [{ space_id: '1' }, /query is required/],
    [{ space_id: '1', query: 'long '.repeat(801) }, /at most 4000/],
    [{ space_id: '1', query: 'x', filter: 'name=a', segment_id: '1' }, /exclude each other/],
    [{ space_id: '1', query: 'x', min_similarity: '1.5' }, /min_similarity must be a decimal from 0 to 1/],
    [{ space_id: '1', query: 'x', limit: '0' }, /limit must be at least 1/],
    [{ space_id: '1', query: 'x', colour: 'red' }, /unknown query parameter "colour"/],
    [{ space_id: '1', query: 'x', filter: 'name=(' }, /./],
  ])('bad input (%#) is a 400 that says why', async (params, reason) => {
    const response = await platform.call(
      'GET',
      `/record/vector/similar?${new URLSearchParams(params as Record<string, string>).toString()}`,
    );
    expect(response.status).toBe(400);
    expect((await json<{ message: string }>(response)).message).toMatch(reason);
  });

  test('a credential without the right to read records (or spaces) is refused with 403', async () => {
    for (const permissions of [{ space: ['read'] }, { record: ['read'] }]) {
      const created = await platform.call('POST', '/auth/1/token', { body: { name: 'narrow', permissions } });
      expect(created.status).toBe(201);
      const { token } = await json<{ token: string }>(created);
      const refused = await fetch(
        `${platform.api}/record/vector/similar?space_id=${spaceId}&query=password`,
        { headers: { Authorization: `Bearer ${token}` } },
      );
      expect(refused.status).toBe(403);
    }
  });

  test('an unknown space or segment is a 404; outliers take max_distance in [0, 2]', async () => {
    expect((await search('similar', { space_id: 999_999, query: 'x' })).status).toBe(404);
    expect((await search('similar', { space_id: spaceId, query: 'x', segment_id: 999_999 })).status).toBe(
      404,
    );
    expect((await search('outliers', { space_id: spaceId, query: 'x', max_distance: 2.5 })).status).toBe(400);
    expect((await search('outliers', { space_id: spaceId, query: 'x', max_distance: 2 })).status).toBe(200);
  });
}

describeContract('semantic search e2e', 'embedded index', { kind: 'embedded' }, () =>
  semanticSearchSuite({}),
);

describeContract('semantic search e2e', 'Qdrant', qdrantAvailability(), () =>
  semanticSearchSuite({
    VECTOR_INDEX: 'qdrant',
    QDRANT_URL: process.env.QDRANT_URL!,
    QDRANT_COLLECTION_PREFIX: testCollectionPrefix(),
  }),
);
