import { existsSync, readdirSync, readlinkSync, rmSync, mkdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { ADMIN_TOKEN, json, startPlatform, type Entity, type TestPlatform } from '../support/platform';

/**
 * Request bodies that end early, lie about their length, break the multipart grammar, or arrive too slowly,
 * sent byte for byte over raw sockets. After each class: the process still answers, no file was recorded
 * and no bytes (whole or half-written) were left in the blob folder.
 */

jest.setTimeout(120_000);

// Short server limits so that the slow-sender cases end within the test; production defaults are longer.
const HEADERS_TIMEOUT_MS = 1500;
const REQUEST_TIMEOUT_MS = 3000;
const IDLE_TIMEOUT_MS = 2000;

let platform: TestPlatform;
let port: number;
let recordId: number;

const BOUNDARY = 'XyZ-boundary-7';
const FILE_BYTES = Buffer.from('first line of a note\nsecond line, a little longer than the first\n');

/** A form part as a browser writes it. */
function part(name: string, filename: string, type: string, content: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
        `Content-Type: ${type}\r\n\r\n`,
    ),
    content,
    Buffer.from('\r\n'),
  ]);
}
const CLOSING = Buffer.from(`--${BOUNDARY}--\r\n`);
const ONE_FILE_FORM = Buffer.concat([part('file', 'note.txt', 'text/plain', FILE_BYTES), CLOSING]);
/** Two parts: one the platform skips (a file under another name) before the real one. */
const TWO_PART_FORM = Buffer.concat([
  part('other', 'skipped.txt', 'text/plain', Buffer.from('skipped content')),
  part('file', 'note.txt', 'text/plain', FILE_BYTES),
  CLOSING,
]);
/** A file the platform refuses as soon as its part's headers are read (a type it does not accept). */
const REFUSED_TYPE_FORM = Buffer.concat([part('file', 'page.html', 'text/html', FILE_BYTES), CLOSING]);
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

interface Answer {
  /** The status line's code, or null when the connection closed without an answer. */
  readonly status: number | null;
  readonly body: string;
}

/**
 * Sends `head` and `body` over a fresh connection. `then`: `answer` waits for the server to answer and close
 * (the request says `Connection: close`); `end` half-closes the client side after the bytes, as a client
 * whose process exits does; `destroy` resets the connection once the bytes are written.
 */
function exchange(head: string, body: Buffer, then: 'answer' | 'end' | 'destroy'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(parseAnswer(Buffer.concat(received))));
    socket.once('connect', () => {
      socket.write(head);
      socket.write(body, (error) => {
        if (error) return reject(error);
        if (then === 'end') socket.end();
        if (then === 'destroy') setTimeout(() => socket.destroy(), 20);
      });
    });
  });
}

function parseAnswer(raw: Buffer): Answer {
  const text = raw.toString('utf8');
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
  const bodyStart = text.indexOf('\r\n\r\n');
  return { status: status ? Number(status[1]) : null, body: bodyStart < 0 ? '' : text.slice(bodyStart + 4) };
}

function requestHead(path: string, headers: Record<string, string>): string {
  const lines = Object.entries({
    Host: '127.0.0.1',
    Authorization: `Bearer ${ADMIN_TOKEN}`,
    Connection: 'close',
    ...headers,
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST /api${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

const uploadPath = () => `/record/${recordId}/file`;

function codeOf(answer: Answer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

function blobFolder(): string {
  return join(platform.dataDir, 'blobs', 'test');
}

/** Every name in the blob folder: complete blobs and `.partial` ones. */
function blobNames(): string[] {
  return existsSync(blobFolder()) ? readdirSync(blobFolder()).sort() : [];
}

/** File descriptors of this process (the platform runs in it) that are open on something in the blob folder. */
function openBlobDescriptors(): string[] {
  const targets: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(blobFolder())) targets.push(target);
    } catch {
      // closed while listing
    }
  }
  return targets;
}

/** The server notices a vanished client asynchronously: waits (bounded) until `check` holds. */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never true: ${what}`);
}

let blobsBefore: string[];
let recordEtag: string | null;

async function recordState(): Promise<{ etag: string | null; files: unknown[] }> {
  const record = await platform.call('GET', `/record/${recordId}`);
  const files = await platform.call('GET', `/record/${recordId}/file`);
  return { etag: record.headers.get('etag'), files: (await json<{ items: unknown[] }>(files)).items };
}

/** The platform answers, the record gained no file and no event, and the blob folder is as it was. */
async function expectNothingLeftAndStillServing(): Promise<void> {
  await eventually(() => blobNames().join() === blobsBefore.join(), 'the blob folder is back as it was');
  expect(blobNames()).toEqual(blobsBefore);
  await eventually(() => openBlobDescriptors().length === 0, 'no file in the blob folder is open');
  expect((await fetch(`${platform.url}/healthz`)).status).toBe(200);
  expect(await recordState()).toEqual({ etag: recordEtag, files: [] });
}

beforeAll(async () => {
  platform = await startPlatform({
    FILE_MAX_BYTES: String(16 * 1024 * 1024),
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
  });
  port = Number(new URL(platform.url).port);
  const create = async (path: string, body: unknown) => {
    const response = await platform.call('POST', path, { body });
    expect(response.status).toBe(201);
    return json<Entity>(response);
  };
  const space = await create('/space', { name: 'Hostile bodies' });
  const module = await create('/module', { spaceId: space.id, name: 'Targets' });
  recordId = (await create('/record', { moduleId: module.id, name: 'Target' })).id;
  // A blob folder with one complete file in it already, so that "as before" is not trivially "empty".
  const other = await create('/record', { moduleId: module.id, name: 'Holds a file' });
  const kept = await fetch(`${platform.api}/record/${other.id}/file?name=kept.txt`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain' },
    body: 'kept',
  });
  expect(kept.status).toBe(201);
  blobsBefore = blobNames();
  expect(blobsBefore).toHaveLength(1);
  recordEtag = (await recordState()).etag;
  expect(recordEtag).not.toBeNull();
});

afterAll(async () => {
  await platform.stop();
});

/** Every offset of `form` short of its closing delimiter's last byte: each cut leaves an unfinished form. */
function cutsOf(form: Buffer): number[] {
  const closingEnd = form.lastIndexOf(`--${BOUNDARY}--`) + `--${BOUNDARY}--`.length - 1;
  return Array.from({ length: closingEnd }, (_, offset) => offset);
}

describe('multipart uploads cut short', () => {
  test.each([
    ['one file part', ONE_FILE_FORM],
    ['a skipped part before the file part', TWO_PART_FORM],
    ['a file of a refused type', REFUSED_TYPE_FORM],
  ])('%s, cut at every byte and declared as that long: 4xx, and nothing is kept', async (_what, form) => {
    const failures: string[] = [];
    // Refused once its part's headers are read (415), malformed before that (400).
    const refusedFrom = form === REFUSED_TYPE_FORM ? form.indexOf(FILE_BYTES) : Infinity;
    for (const offset of cutsOf(form)) {
      const body = form.subarray(0, offset);
      const answer = await exchange(
        requestHead(uploadPath(), { 'Content-Type': MULTIPART, 'Content-Length': String(body.length) }),
        body,
        'answer',
      );
      const [status, code] = offset >= refusedFrom ? [415, 'E4150'] : [400, 'E4000'];
      if (answer.status !== status || codeOf(answer) !== code)
        failures.push(`cut at ${offset}: ${answer.status} ${answer.body}`);
    }
    expect(failures).toEqual([]);
    await expectNothingLeftAndStillServing();
  });

  /** The offsets at every part boundary, inside every header line and boundary, and inside the file data. */
  function boundaryOffsets(form: Buffer): number[] {
    const text = form.toString('latin1');
    const offsets = new Set<number>([0, 1]);
    const addAll = (...at: number[]) => at.forEach((offset) => offsets.add(offset));
    for (let at = text.indexOf('\r\n'); at >= 0; at = text.indexOf('\r\n', at + 1))
      addAll(at, at + 1, at + 2);
    for (let at = text.indexOf(': '); at >= 0; at = text.indexOf(': ', at + 1)) addAll(at + 5);
    for (let at = text.indexOf(BOUNDARY); at >= 0; at = text.indexOf(BOUNDARY, at + 1))
      addAll(at + 3, at + BOUNDARY.length);
    const fileStart = form.indexOf(FILE_BYTES);
    addAll(fileStart + 10, fileStart + FILE_BYTES.length - 1);
    return [...offsets].filter((at) => at < form.length - 2).sort((x, y) => x - y);
  }

  test.each([
    ['a skipped part before the file part', 'end', TWO_PART_FORM],
    ['a skipped part before the file part', 'destroy', TWO_PART_FORM],
    ['a file of a refused type', 'end', REFUSED_TYPE_FORM],
    ['a file of a refused type', 'destroy', REFUSED_TYPE_FORM],
  ] as const)(
    '%s, the whole length declared, the client stops at every part boundary and inside every header (%s)',
    async (_what, then, form) => {
      for (const offset of boundaryOffsets(form)) {
        const answer = await exchange(
          requestHead(uploadPath(), { 'Content-Type': MULTIPART, 'Content-Length': String(form.length) }),
          form.subarray(0, offset),
          then,
        );
        // A client that is gone gets no answer, or at most a refusal; never a success.
        expect([null, 400, 415]).toContain(answer.status);
      }
      await expectNothingLeftAndStillServing();
    },
  );

  test('wrong, missing, malformed and never-appearing boundaries are 400s', async () => {
    const cases: Array<[string, string, Buffer]> = [
      ['no boundary parameter', 'multipart/form-data', ONE_FILE_FORM],
      ['an empty boundary', 'multipart/form-data; boundary=', ONE_FILE_FORM],
      ['an unterminated quoted boundary', 'multipart/form-data; boundary="abc', ONE_FILE_FORM],
      ['another boundary than the body uses', 'multipart/form-data; boundary=other', ONE_FILE_FORM],
      ['a boundary that never appears', MULTIPART, Buffer.alloc(100_000, 'a')],
      ['an empty body', MULTIPART, Buffer.alloc(0)],
      [
        'a part header without a colon',
        MULTIPART,
        Buffer.from(`--${BOUNDARY}\r\nnonsense\r\n\r\nx\r\n--${BOUNDARY}--\r\n`),
      ],
      [
        'a part header longer than any parser keeps',
        MULTIPART,
        Buffer.from(`--${BOUNDARY}\r\nX-Long: ${'h'.repeat(100_000)}\r\n\r\nx\r\n--${BOUNDARY}--\r\n`),
      ],
      [
        'a part without Content-Disposition',
        MULTIPART,
        Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${BOUNDARY}--\r\n`),
      ],
      [
        'the file part after the closing delimiter',
        MULTIPART,
        Buffer.concat([CLOSING, part('file', 'late.txt', 'text/plain', FILE_BYTES), CLOSING]),
      ],
    ];
    const answers = [];
    for (const [what, type, body] of cases) {
      const answer = await exchange(
        requestHead(uploadPath(), { 'Content-Type': type, 'Content-Length': String(body.length) }),
        body,
        'answer',
      );
      answers.push({ what, status: answer.status, code: codeOf(answer) });
    }
    expect(answers).toEqual(cases.map(([what]) => ({ what, status: 400, code: 'E4000' })));
    await expectNothingLeftAndStillServing();
  });

  test('a form still arriving when the server refuses it is answered, and the rest is drained', async () => {
    // An unexpected part is known at once, but the answer waits for the form's end; the sender keeps going.
    const filler = Buffer.alloc(200_000, 'f');
    const form = Buffer.concat([
      part('file', 'note.txt', 'text/plain', FILE_BYTES),
      part('file', 'second.txt', 'text/plain', filler),
      CLOSING,
    ]);
    const answer = await exchange(
      requestHead(uploadPath(), { 'Content-Type': MULTIPART, 'Content-Length': String(form.length) }),
      form,
      'answer',
    );
    expect({ status: answer.status, code: codeOf(answer) }).toEqual({ status: 400, code: 'E4000' });
    await expectNothingLeftAndStillServing();
  });
});

describe('raw-body uploads and JSON bodies cut short', () => {
  const bodies = {
    upload: {
      path: () => `${uploadPath()}?name=raw.txt`,
      type: 'text/plain',
      bytes: Buffer.alloc(50_000, 'r'),
    },
    json: {
      path: () => '/record',
      type: 'application/json',
      bytes: Buffer.from(JSON.stringify({ moduleId: 1, name: 'x'.repeat(2000) })),
    },
  };

  test.each([
    ['upload', 'end'],
    ['upload', 'destroy'],
    ['json', 'end'],
    ['json', 'destroy'],
  ] as const)(
    '%s: a declared length longer than what is sent, then the client leaves (%s)',
    async (kind, then) => {
      const { path, type, bytes } = bodies[kind];
      for (const sent of [0, 1, Math.floor(bytes.length / 2), bytes.length - 1]) {
        const answer = await exchange(
          requestHead(path(), { 'Content-Type': type, 'Content-Length': String(bytes.length) }),
          bytes.subarray(0, sent),
          then,
        );
        expect([null, 400]).toContain(answer.status);
      }
      await expectNothingLeftAndStillServing();
    },
  );

  test.each(['upload', 'json'] as const)(
    '%s: a chunked body cut inside a chunk, or with a malformed chunk size',
    async (kind) => {
      const { path, type, bytes } = bodies[kind];
      const head = requestHead(path(), { 'Content-Type': type, 'Transfer-Encoding': 'chunked' });
      const size = bytes.length.toString(16);
      const cutInsideChunk = Buffer.concat([Buffer.from(`${size}\r\n`), bytes.subarray(0, 100)]);
      expect([null, 400]).toContain((await exchange(head, cutInsideChunk, 'end')).status);
      expect([null, 400]).toContain((await exchange(head, cutInsideChunk, 'destroy')).status);
      const badSize = Buffer.concat([
        Buffer.from('zz\r\n'),
        bytes.subarray(0, 100),
        Buffer.from('\r\n0\r\n\r\n'),
      ]);
      expect((await exchange(head, badSize, 'answer')).status).toBe(400);
      await expectNothingLeftAndStillServing();
    },
  );

  test('a JSON body cut at every tenth byte and declared as that long is a 400 malformed_json', async () => {
    const bytes = bodies.json.bytes;
    const failures: string[] = [];
    for (let offset = 1; offset < bytes.length; offset += 10) {
      const answer = await exchange(
        requestHead('/record', { 'Content-Type': 'application/json', 'Content-Length': String(offset) }),
        bytes.subarray(0, offset),
        'answer',
      );
      if (answer.status !== 400 || codeOf(answer) !== 'E4004')
        failures.push(`cut at ${offset}: ${answer.status} ${answer.body}`);
    }
    expect(failures).toEqual([]);
    await expectNothingLeftAndStillServing();
  });
});

describe('slow senders are cut off by the server', () => {
  /**
   * Sends `head` then trickles `body` a few bytes at a time; resolves once the server has closed the
   * connection, with whether the client had sent everything by then.
   */
  function trickle(
    head: string,
    body: Buffer,
    bytesPerTick: number,
  ): Promise<Answer & { finished: boolean }> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const received: Buffer[] = [];
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ ...parseAnswer(Buffer.concat(received)), finished: sent >= body.length });
      });
      socket.once('connect', () => {
        socket.write(head);
        timer = setInterval(() => {
          if (sent >= body.length || socket.destroyed) return;
          socket.write(body.subarray(sent, sent + bytesPerTick));
          sent += bytesPerTick;
        }, 100);
      });
    });
  }

  // At 10 bytes a second each of these would take minutes; the server must close them long before.
  test('a multipart upload trickling in is closed with 408, and its half-written blob removed', async () => {
    const form = Buffer.concat([part('file', 'slow.txt', 'text/plain', Buffer.alloc(1200, 's')), CLOSING]);
    const outcome = await trickle(
      requestHead(uploadPath(), { 'Content-Type': MULTIPART, 'Content-Length': String(form.length) }),
      form,
      1,
    );
    expect(outcome).toMatchObject({ finished: false, status: 408 });
    await expectNothingLeftAndStillServing();
  });

  test('a raw upload and a JSON body trickling in are closed with 408', async () => {
    for (const [path, type] of [
      [`${uploadPath()}?name=slow.txt`, 'text/plain'],
      ['/record', 'application/json'],
    ]) {
      const body = Buffer.alloc(1200, ' ');
      const outcome = await trickle(
        requestHead(path!, { 'Content-Type': type!, 'Content-Length': String(body.length) }),
        body,
        1,
      );
      expect(outcome).toMatchObject({ finished: false, status: 408 });
    }
    await expectNothingLeftAndStillServing();
  });

  test('headers trickling in are cut off', async () => {
    const head = Buffer.from(requestHead('/record', { 'X-Padding': 'p'.repeat(400) }));
    const outcome = await trickle('', head, 1);
    expect(outcome.finished).toBe(false);
    expect([null, 408]).toContain(outcome.status);
    expect((await fetch(`${platform.url}/healthz`)).status).toBe(200);
  });

  test('a client that sends headers, then nothing, is cut off', async () => {
    const outcome = await trickle(
      requestHead(uploadPath(), { 'Content-Type': MULTIPART, 'Content-Length': '5000' }),
      Buffer.alloc(0),
      1,
    );
    // Closed by the idle or the request timeout, whichever comes first (with or without a 408).
    expect([null, 408]).toContain(outcome.status);
    await expectNothingLeftAndStillServing();
  });
});

describe('downloads', () => {
  const size = 8 * 1024 * 1024;
  let holderId: number;
  let fileId: number;
  let blobPath: string;

  beforeAll(async () => {
    // Its own record: the record under attack above must keep no file.
    const moduleId = (await json<Entity>(await platform.call('GET', `/record/${recordId}`))).moduleId;
    const holder = await platform.call('POST', '/record', { body: { moduleId, name: 'Big' } });
    holderId = (await json<Entity>(holder)).id;
    const upload = await fetch(`${platform.api}/record/${holderId}/file?name=big.bin`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/octet-stream' },
      body: Buffer.alloc(size, 'b'),
    });
    expect(upload.status).toBe(201);
    fileId = (await json<Entity>(upload)).id;
    const added = blobNames().filter((name) => !blobsBefore.includes(name));
    expect(added).toHaveLength(1);
    blobPath = join(blobFolder(), added[0]!);
  });

  /** Starts a download over a raw socket; the socket is returned once the first bytes have arrived. */
  function startDownload(): Promise<Socket> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `GET /api/record/${holderId}/file/${fileId}/content HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
      );
      socket.once('data', () => resolve(socket));
    });
  }

  test('a client that hangs up mid-download frees the blob', async () => {
    const socket = await startDownload();
    socket.destroy();
    await eventually(() => openBlobDescriptors().length === 0, 'the blob is closed after a hang-up');
    const whole = await platform.call('GET', `/record/${holderId}/file/${fileId}/content`);
    expect((await whole.arrayBuffer()).byteLength).toBe(size);
  });

  test('a client that stops reading mid-download is cut off after the idle timeout, and the blob freed', async () => {
    const socket = await startDownload();
    socket.pause();
    try {
      // More than the connection's buffers hold: the server is stuck with the blob open…
      await eventually(() => openBlobDescriptors().length > 0, 'the blob is open while the client stalls');
      // …until the idle timeout closes the connection.
      await eventually(() => openBlobDescriptors().length === 0, 'the blob is closed after the idle timeout');
    } finally {
      socket.destroy();
    }
  });

  test('a blob that cannot be read cuts the download, and the platform keeps serving', async () => {
    // A directory where the file was: it opens, but reading it fails.
    rmSync(blobPath);
    mkdirSync(blobPath);
    try {
      const broken = await platform
        .call('GET', `/record/${holderId}/file/${fileId}/content`)
        .then(async (response) => ({
          status: response.status,
          bytes: (await response.arrayBuffer()).byteLength,
        }))
        .catch(() => ({ status: null, bytes: 0 }));
      expect(broken.bytes).toBeLessThan(size);
      expect(broken.status === null || broken.status >= 500).toBe(true);
      expect((await fetch(`${platform.url}/healthz`)).status).toBe(200);
      await eventually(() => openBlobDescriptors().length === 0, 'the unreadable blob is closed');
    } finally {
      rmSync(blobPath, { recursive: true });
    }
  });
});
