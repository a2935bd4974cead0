import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { describeContract, mongoAvailability } from '../support/adapter-report';
import { dropMongoDatabase } from '../support/mongo';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

const url = process.env.MONGO_URL;
const run = mongoAvailability(url);

describeContract('files e2e', 'mongodb read store + gridfs blobs', run, () => {
  const database = `files_${randomUUID().slice(0, 8)}`;
  let platform: TestPlatform;

  beforeAll(async () => {
    // No BLOB_STORE: a MongoDB read store puts file contents in GridFS by default.
    platform = await startPlatform({ READ_STORE: 'mongodb', MONGO_URL: url!, MONGO_DATABASE: database });
  });

  afterAll(async () => {
    await platform.stop();
    await dropMongoDatabase(url!, database);
  });

  test('a file is uploaded into GridFS, downloaded, and its bytes removed with it', async () => {
    const create = async (path: string, body: unknown) =>
      json<Entity>(await platform.call('POST', path, { body }));
    const space = await create('/space', { name: 'GridFS' });
    const module = await create('/module', { spaceId: space.id, name: 'Docs' });
    const record = await create('/record', { moduleId: module.id, name: 'With a file' });
    const bytes = Buffer.alloc(600_000, 5);
    const upload = await fetch(`${platform.api}/record/${record.id}/file?name=blob.bin`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/octet-stream' },
      body: bytes,
    });
    expect(upload.status).toBe(201);
    const file = await json<Entity>(upload);
    const download = await platform.call('GET', `/record/${record.id}/file/${file.id}/content`);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);

    const client = await MongoClient.connect(url!);
    try {
      const files = client.db(database).collection('blobs.files');
      expect(await files.countDocuments()).toBe(1);
      expect((await platform.call('DELETE', `/record/${record.id}/file/${file.id}`)).status).toBe(200);
      expect(await files.countDocuments()).toBe(0);
      expect(await client.db(database).collection('blobs.chunks').countDocuments()).toBe(0);
    } finally {
      await client.close();
    }
  });
});
