import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  ADMIN_TOKEN,
  json,
  startPlatform,
  type Entity,
  type Page,
  type TestPlatform,
} from '../support/platform';

jest.setTimeout(60_000);

const MAX_BYTES = 64 * 1024;
let platform: TestPlatform;
let moduleId: number;
let recordId: number;
let contractField: Entity;
let titleField: Entity;

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('rest of a tiny png'),
]);
const PDF = Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

/** The body is the file: its type in Content-Type, its name in `?name=`. */
function uploadRaw(
  path: string,
  bytes: Buffer,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${platform.api}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': contentType, ...headers },
    body: bytes,
  });
}

/** A browser-style form upload: `parts` become the form's parts in order. */
function uploadForm(path: string, parts: Array<[string, Blob | string, string?]>): Promise<Response> {
  const form = new FormData();
  for (const [name, value, filename] of parts)
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, filename);
  return fetch(`${platform.api}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: form,
  });
}

/** Blobs on disk, and half-written ones. */
function blobFiles(): { complete: number; partial: number } {
  const folder = join(platform.dataDir, 'blobs', 'test');
  const names = existsSync(folder) ? readdirSync(folder) : [];
  return {
    complete: names.filter((name) => !name.endsWith('.partial')).length,
    partial: names.filter((name) => name.endsWith('.partial')).length,
  };
}

async function filesOf(id: number): Promise<Entity[]> {
  const response = await platform.call('GET', `/record/${id}/file`);
  expect(response.status).toBe(200);
  return (await json<Page>(response)).items;
}

beforeAll(async () => {
  platform = await startPlatform({ FILE_MAX_BYTES: String(MAX_BYTES) });
  const space = await create('/space', { name: 'Files' });
  moduleId = (await create('/module', { spaceId: space.id, name: 'Contracts' })).id;
  contractField = await create('/field', { moduleId, name: 'Contract', type: 'file' });
  titleField = await create('/field', { moduleId, name: 'Title', type: 'text' });
  recordId = (await create('/record', { moduleId, name: 'ACME deal' })).id;
});

afterAll(async () => {
  await platform.stop();
});

test('a raw upload is stored, listed, described and downloaded byte for byte', async () => {
  const response = await uploadRaw(`/record/${recordId}/file?name=logo.png`, PNG, 'image/png');
  expect(response.status).toBe(201);
  const file = await json<Entity>(response);
  expect(file).toEqual({
    id: file.id,
    recordId,
    fieldId: null,
    name: 'logo.png',
    contentType: 'image/png',
    size: PNG.length,
    sha256: sha256(PNG),
    weight: expect.any(Number),
  });
  expect(response.headers.get('location')).toBe(`/api/record/${recordId}/file/${file.id}`);

  const described = await json<Entity>(await platform.call('GET', `/record/${recordId}/file/${file.id}`));
  expect(described).toMatchObject({
    id: file.id,
    name: 'logo.png',
    size: PNG.length,
    createdBy: expect.anything(),
  });

  const download = await platform.call('GET', `/record/${recordId}/file/${file.id}/content`);
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer())).toEqual(PNG);
  expect(download.headers.get('content-type')).toBe('image/png');
  expect(download.headers.get('content-disposition')).toBe(
    `attachment; filename="logo.png"; filename*=UTF-8''logo.png`,
  );
  expect(download.headers.get('x-content-type-options')).toBe('nosniff');
  const etag = download.headers.get('etag')!;
  expect(etag).toBe(`"sha256-${sha256(PNG)}"`);
  const unchanged = await platform.call('GET', `/record/${recordId}/file/${file.id}/content`, {
    headers: { 'If-None-Match': etag },
  });
  expect(unchanged.status).toBe(304);
});

test('a multipart upload takes its name and type from the part; names keep non-ASCII letters', async () => {
  const response = await uploadForm(`/record/${recordId}/file`, [
    ['file', new Blob([PDF], { type: 'application/pdf' }), 'smlouva čj. 7.pdf'],
  ]);
  expect({
    status: response.status,
    body: response.status === 201 ? null : await response.clone().json(),
  }).toEqual({ status: 201, body: null });
  const file = await json<Entity>(response);
  expect(file).toMatchObject({ name: 'smlouva čj. 7.pdf', contentType: 'application/pdf', size: PDF.length });
  const download = await platform.call('GET', `/record/${recordId}/file/${file.id}/content`);
  expect(download.headers.get('content-disposition')).toBe(
    `attachment; filename="smlouva _j. 7.pdf"; filename*=UTF-8''smlouva%20%C4%8Dj.%207.pdf`,
  );
  expect(Buffer.from(await download.arrayBuffer())).toEqual(PDF);
});

test('file weights set the display order; unknown or repeated files are refused whole', async () => {
  const record = await create('/record', { moduleId, name: 'Ordered' });
  const ids: number[] = [];
  for (const name of ['a.txt', 'b.txt', 'c.txt']) {
    const response = await uploadRaw(
      `/record/${record.id}/file?name=${name}`,
      Buffer.from(name),
      'text/plain',
    );
    ids.push((await json<Entity>(response)).id);
  }
  expect((await filesOf(record.id)).map((file) => file.name)).toEqual(['a.txt', 'b.txt', 'c.txt']);
  const [a, b, c] = ids as [number, number, number];
  const reordered = await platform.call('PUT', `/record/${record.id}/file-weight`, {
    body: {
      files: [
        { fileId: c, weight: 0 },
        { fileId: a, weight: 5 },
      ],
    },
  });
  expect(reordered.status).toBe(200);
  expect(await json(reordered)).toEqual({
    recordId: record.id,
    files: [
      { fileId: c, weight: 0 },
      { fileId: b, weight: 1 },
      { fileId: a, weight: 5 },
    ],
  });
  expect((await filesOf(record.id)).map((file) => file.name)).toEqual(['c.txt', 'b.txt', 'a.txt']);
  const list = await json<Page>(
    await platform.call('GET', `/record/${record.id}/file?order=name;ASC&limit=2`),
  );
  expect(list.items.map((file) => file.name)).toEqual(['a.txt', 'b.txt']);
  expect(list.meta).toEqual({ total: 3, offset: 0, limit: 2 });

  for (const files of [
    [{ fileId: 999_999, weight: 1 }],
    [
      { fileId: a, weight: 1 },
      { fileId: a, weight: 2 },
    ],
  ]) {
    const refused = await platform.call('PUT', `/record/${record.id}/file-weight`, { body: { files } });
    expect(refused.status).toBe(400);
  }
  for (const body of [{}, { files: [] }, { files: [{ fileId: a, weight: -1 }] }, { files: [{ fileId: a }] }])
    expect((await platform.call('PUT', `/record/${record.id}/file-weight`, { body })).status).toBe(400);
  expect((await filesOf(record.id)).map((file) => file.name)).toEqual(['c.txt', 'b.txt', 'a.txt']);
});

test('an upload into a file field fills the field; removing the file empties it; both are field history', async () => {
  const record = await create('/record', { moduleId, name: 'With contract' });
  const response = await uploadRaw(
    `/record/${record.id}/file?name=contract.pdf&fieldId=${contractField.id}`,
    PDF,
    'application/pdf',
  );
  expect(response.status).toBe(201);
  const file = await json<Entity>(response);
  expect(file.fieldId).toBe(contractField.id);
  const key = String(contractField.key);
  expect((await json<Entity>(await platform.call('GET', `/record/${record.id}`))).fields).toEqual({
    [key]: [file.id],
  });

  const removed = await platform.call('DELETE', `/record/${record.id}/file/${file.id}`);
  expect(removed.status).toBe(200);
  expect(await json(removed)).toEqual({ recordId: record.id, fileId: file.id, deleted: true });
  expect((await json<Entity>(await platform.call('GET', `/record/${record.id}`))).fields).toEqual({});
  expect((await platform.call('GET', `/record/${record.id}/file/${file.id}`)).status).toBe(404);
  expect((await platform.call('GET', `/record/${record.id}/file/${file.id}/content`)).status).toBe(404);

  const history = await json<Page<Record<string, unknown>>>(
    await platform.call('GET', `/auth/field-history/${moduleId}/${record.id}?order=position;ASC`),
  );
  expect(
    history.items.filter((change) => change.field === `fields.${key}`).map((change) => change.newValue),
  ).toEqual([[file.id], null]);
});

test('file fields take no values through record writes, and a required one keeps its last file', async () => {
  const record = await create('/record', { moduleId, name: 'No direct values' });
  const written = await platform.call('PUT', `/record/${record.id}`, {
    body: { fields: { [String(contractField.key)]: [1] } },
  });
  expect(written.status).toBe(400);
  expect(JSON.stringify(await json(written))).toContain('filled by uploading');

  const required = await create('/field', { moduleId, name: 'Signed copy', type: 'file', required: true });
  // A required file field does not stop a record from being created: files come after.
  const fresh = await create('/record', { moduleId, name: 'Needs a signed copy' });
  const upload = await uploadRaw(
    `/record/${fresh.id}/file?name=signed.pdf&fieldId=${required.id}`,
    PDF,
    'application/pdf',
  );
  const file = await json<Entity>(upload);
  const refused = await platform.call('DELETE', `/record/${fresh.id}/file/${file.id}`);
  expect(refused.status).toBe(409);
  expect((await filesOf(fresh.id)).map((listed) => listed.id)).toEqual([file.id]);
  expect((await platform.call('DELETE', `/field/${required.id}`)).status).toBe(200);
});

test('refused uploads answer 4xx and leave no file and no bytes behind', async () => {
  const record = await create('/record', { moduleId, name: 'Refusals' });
  const before = blobFiles();
  const path = `/record/${record.id}/file`;
  const cases: Array<[string, () => Promise<Response>, number, string]> = [
    [
      'over the size limit',
      () => uploadRaw(`${path}?name=big.bin`, Buffer.alloc(MAX_BYTES + 1), 'application/octet-stream'),
      413,
      'E4130',
    ],
    [
      'a refused type',
      () => uploadRaw(`${path}?name=page.html`, Buffer.from('<script>x</script>'), 'text/html'),
      415,
      'E4150',
    ],
    [
      'bytes that are not the declared type',
      () => uploadRaw(`${path}?name=fake.png`, Buffer.from('<script>x</script>'), 'image/png'),
      415,
      'E4150',
    ],
    ['no name', () => uploadRaw(path, PNG, 'image/png'), 400, 'E4001'],
    ['a path as the name', () => uploadRaw(`${path}?name=..%2F..`, PNG, 'image/png'), 400, 'E4001'],
    [
      'a field that is not a file field',
      () => uploadRaw(`${path}?name=a.png&fieldId=${titleField.id}`, PNG, 'image/png'),
      400,
      'E4001',
    ],
    [
      'a field of no module',
      () => uploadRaw(`${path}?name=a.png&fieldId=999999`, PNG, 'image/png'),
      400,
      'E4001',
    ],
    ['an unknown option', () => uploadRaw(`${path}?name=a.png&colour=red`, PNG, 'image/png'), 400, 'E4001'],
    [
      'a form with an extra field',
      () =>
        uploadForm(path, [
          ['file', new Blob([PNG], { type: 'image/png' }), 'a.png'],
          ['note', 'hi'],
        ]),
      400,
      'E4000',
    ],
    [
      'a form without a file part',
      () => uploadForm(path, [['attachment', new Blob([PNG], { type: 'image/png' }), 'a.png']]),
      400,
      'E4000',
    ],
    [
      'a form with two files',
      () =>
        uploadForm(path, [
          ['file', new Blob([PNG], { type: 'image/png' }), 'a.png'],
          ['file', new Blob([PNG], { type: 'image/png' }), 'b.png'],
        ]),
      400,
      'E4000',
    ],
    [
      'a malformed form',
      () => uploadRaw(path, Buffer.from('--x\r\nnonsense'), 'multipart/form-data; boundary=x'),
      400,
      'E4000',
    ],
    [
      'no content type',
      () =>
        fetch(`${platform.api}${path}?name=a.bin`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
          body: PNG,
        }),
      415,
      'E4150',
    ],
    ['a missing record', () => uploadRaw(`/record/999999/file?name=a.png`, PNG, 'image/png'), 404, 'E4040'],
  ];
  for (const [what, send, status, code] of cases) {
    const response = await send();
    const body = await json(response);
    expect({ what, status: response.status, code: body.code }).toEqual({ what, status, code });
  }
  expect(await filesOf(record.id)).toEqual([]);
  expect(blobFiles()).toEqual(before);
});

test('a client that disconnects mid-upload leaves nothing; the platform keeps serving', async () => {
  const record = await create('/record', { moduleId, name: 'Aborted' });
  const before = blobFiles();
  const { port } = new URL(platform.url);
  await new Promise<void>((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/record/${record.id}/file?name=half.bin`,
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(40_000),
      },
    });
    req.on('error', () => resolve());
    req.write(Buffer.alloc(20_000, 7), () => setTimeout(() => req.destroy(), 100));
    req.on('close', () => resolve());
  });
  // The server notices the disconnect asynchronously.
  for (let attempt = 0; attempt < 50 && blobFiles().partial > 0; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(blobFiles()).toEqual(before);
  expect(await filesOf(record.id)).toEqual([]);
  expect((await platform.call('GET', `/record/${record.id}`)).status).toBe(200);
});

test('a repeated upload with the same Idempotency-Key attaches one file and keeps one copy', async () => {
  const record = await create('/record', { moduleId, name: 'Idempotent' });
  const before = blobFiles();
  const headers = { 'Idempotency-Key': `upload-${record.id}` };
  const first = await uploadRaw(`/record/${record.id}/file?name=once.png`, PNG, 'image/png', headers);
  const second = await uploadRaw(`/record/${record.id}/file?name=once.png`, PNG, 'image/png', headers);
  expect([first.status, second.status]).toEqual([201, 201]);
  expect(second.headers.get('idempotent-replayed')).toBe('true');
  expect((await json<Entity>(second)).id).toBe((await json<Entity>(first)).id);
  expect((await filesOf(record.id)).length).toBe(1);
  expect(blobFiles().complete).toBe(before.complete + 1);

  const other = Buffer.concat([PNG, Buffer.from('different')]);
  const reused = await uploadRaw(`/record/${record.id}/file?name=once.png`, other, 'image/png', headers);
  expect(reused.status).toBe(422);
  expect(blobFiles().complete).toBe(before.complete + 1);
});

test('files of deleted records are out of reach until the record is restored', async () => {
  const record = await create('/record', { moduleId, name: 'Trashed' });
  const file = await json<Entity>(
    await uploadRaw(`/record/${record.id}/file?name=keep.png`, PNG, 'image/png'),
  );
  expect((await platform.call('DELETE', `/record/${record.id}`)).status).toBe(200);
  expect((await platform.call('GET', `/record/${record.id}/file`)).status).toBe(404);
  expect((await platform.call('GET', `/record/${record.id}/file/${file.id}/content`)).status).toBe(404);
  expect((await uploadRaw(`/record/${record.id}/file?name=more.png`, PNG, 'image/png')).status).toBe(404);
  expect((await platform.call('POST', `/record/${record.id}/restore`)).status).toBe(200);
  const download = await platform.call('GET', `/record/${record.id}/file/${file.id}/content`);
  expect(Buffer.from(await download.arrayBuffer())).toEqual(PNG);
  // A file is reached through its own record only.
  expect((await platform.call('GET', `/record/${recordId}/file/${file.id}`)).status).toBe(404);
});

test('the removed comment routes answer 410 Gone', async () => {
  for (const [method, path] of [
    ['GET', `/record/${recordId}/comment`],
    ['POST', `/record/${recordId}/comment`],
    ['GET', `/record/${recordId}/comment/1`],
    ['PUT', `/record/${recordId}/comment/1`],
    ['DELETE', `/record/${recordId}/comment/1`],
  ] as const) {
    const response = await platform.call(method, path, method === 'GET' ? {} : { body: {} });
    expect({ method, path, status: response.status, code: (await json(response)).code }).toEqual({
      method,
      path,
      status: 410,
      code: 'E4100',
    });
  }
});
