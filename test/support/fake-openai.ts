import express, { type Response } from 'express';
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the fake answers next: as an OpenAI-compatible server would, or misbehaving in one way. `fail-500`,
 * `unauthorized`, `rate-limited` and `slow` (3 s) apply to both routes; `one-vector-short` and
 * `wrong-dimension` to embeddings only; `no-usage`, `malformed` (200 with a body that is no completion) and
 * `empty-choices` to chat only.
 */
export type FakeOpenAiMode =
  | 'normal'
  | 'fail-500'
  | 'unauthorized'
  | 'slow'
  | 'one-vector-short'
  | 'wrong-dimension'
  | 'rate-limited'
  | 'no-usage'
  | 'malformed'
  | 'empty-choices';

/** A request to `/v1/chat/completions`, as it arrived. */
export interface FakeChatRequest {
  readonly model: string;
  readonly messages: Array<{ role: string; content: string }>;
  readonly max_tokens?: number;
  readonly response_format?: { type: string };
}

/**
 * What the fake answers one chat request: the answer's text (taken as is, never cut at `max_tokens`), the
 * text with its finish reason, or a raw HTTP answer (an error, a body no server would send…).
 */
export type FakeChatReply =
  | string
  | { readonly content: string; readonly finishReason: string }
  | { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> };

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  mode: FakeOpenAiMode;
  /** Requests to `/v1/embeddings` so far, with their inputs. */
  readonly embeddingRequests: Array<{ model: string; input: string[]; dimensions?: number }>;
  /** Requests to `/v1/chat/completions` so far. */
  readonly chatRequests: FakeChatRequest[];
  /** The next chat answers, first first; when empty, `chatReply` decides. */
  readonly chatReplies: FakeChatReply[];
  /**
   * Decides a chat answer when `chatReplies` is empty (order-free, for calls side by side); without it, or
   * when it gives `undefined`, the answer is `echo: <last user message>` (`{"echo": …}` in JSON mode), cut
   * at `max_tokens` (4 characters a token) with finish reason `length`.
   */
  chatReply: ((request: FakeChatRequest) => FakeChatReply | undefined) | undefined;
  /** How long every chat answer takes (0 by default), on top of `slow`. */
  chatDelayMs: number;
  /**
   * Chat answers wait until this many chat requests are in flight at once (0: none wait), or at most
   * `GATHER_MS`: a test of calls side by side sees them together however slowly the machine runs.
   */
  chatGatherInFlight: number;
  /** Chat requests being answered right now, and the most at once so far (reset it to measure anew). */
  readonly chatInFlight: number;
  chatInFlightMax: number;
  close(): Promise<void>;
}

/**
 * A deterministic text vector: character trigrams and words hashed into `dimension` buckets, unit length. Texts
 * that share words are close; it is a stand-in for a model, not one.
 */
export function hashedVector(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  const lower = ` ${text.toLowerCase()} `;
  const features = [...lower.split(/\s+/).filter(Boolean)];
  for (let index = 0; index + 3 <= lower.length; index++) features.push(lower.slice(index, index + 3));
  for (const feature of features) {
    const digest = createHash('sha256').update(feature).digest();
    vector[digest.readUInt32LE(0) % dimension]! += digest[4]! & 1 ? 1 : -1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1;
  return vector.map((value) => value / norm);
}

/** The fake's token count: a token for every 4 characters, as a rough tokenizer would. */
const tokensOf = (text: string) => Math.ceil(text.length / 4);

const SLOW_MS = 3000;
/** How long a chat answer waits for the others of a gathering (`chatGatherInFlight`) at most. */
const GATHER_MS = 10_000;
/** Aborts when the answer is over: sent, or the client gone. */
function clientGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  return gone.signal;
}

/** Resolves after `ms`, or at once when `until` aborts (the client gone: no one to answer, no timer left). */
const wait = (ms: number, until: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    until.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** An OpenAI-style 429, `retry-after` in seconds. */
const RATE_LIMITED = {
  status: 429,
  headers: { 'retry-after': '1' },
  body: {
    error: {
      message: 'Rate limit reached for requests per minute. Please try again in 1s.',
      type: 'requests',
      code: 'rate_limit_exceeded',
    },
  },
} as const;

/** The default chat answer: the last user message echoed, cut at the output limit as a model would be. */
function echoReply(request: FakeChatRequest): FakeChatReply {
  const lastUser = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
  const content =
    request.response_format?.type === 'json_object'
      ? JSON.stringify({ echo: lastUser })
      : `echo: ${lastUser}`;
  if (request.max_tokens === undefined || tokensOf(content) <= request.max_tokens) return content;
  return { content: content.slice(0, request.max_tokens * 4), finishReason: 'length' };
}

/**
 * An OpenAI-compatible `/v1/embeddings` (honouring `encoding_format` float and base64) and non-streaming
 * `/v1/chat/completions` on loopback (port 0).
 */
export async function startFakeOpenAi(defaultDimension = 64): Promise<FakeOpenAi> {
  const app = express();
  app.use(express.json({ limit: '20mb' }));
  let chatInFlight = 0;
  const fake: Omit<FakeOpenAi, 'baseUrl' | 'close'> = {
    get chatInFlight() {
      return chatInFlight;
    },
    mode: 'normal',
    embeddingRequests: [],
    chatRequests: [],
    chatReplies: [],
    chatReply: undefined,
    chatDelayMs: 0,
    chatGatherInFlight: 0,
    chatInFlightMax: 0,
  };
  const gathering = new Set<() => void>();
  /** Resolves once `count` chats are in flight (and lets every waiting one go), or after `GATHER_MS`. */
  const gathered = (count: number, gone: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (chatInFlight >= count) {
        for (const release of gathering) release();
        gathering.clear();
        return resolve();
      }
      gathering.add(resolve);
      void wait(GATHER_MS, gone).then(() => {
        gathering.delete(resolve);
        resolve();
      });
    });
  app.post('/v1/embeddings', async (req, res) => {
    const body = req.body as {
      model: string;
      input: string | string[];
      dimensions?: number;
      encoding_format?: string;
    };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    fake.embeddingRequests.push({
      model: body.model,
      input,
      ...(body.dimensions && { dimensions: body.dimensions }),
    });
    if (fake.mode === 'fail-500') return void res.status(500).json({ error: { message: 'model crashed' } });
    if (fake.mode === 'unauthorized')
      return void res.status(401).json({ error: { message: 'Incorrect API key provided' } });
    if (fake.mode === 'rate-limited')
      return void res.status(RATE_LIMITED.status).set(RATE_LIMITED.headers).json(RATE_LIMITED.body);
    if (fake.mode === 'slow') await wait(SLOW_MS, clientGone(res));
    let dimension = body.dimensions ?? defaultDimension;
    if (fake.mode === 'wrong-dimension') dimension += 1;
    const answered = fake.mode === 'one-vector-short' ? input.slice(1) : input;
    if (res.writableEnded || req.socket.destroyed) return;
    res.json({
      object: 'list',
      model: body.model,
      usage: { prompt_tokens: input.length, total_tokens: input.length },
      data: answered.map((text, index) => {
        const vector = hashedVector(text, dimension);
        return {
          object: 'embedding',
          index,
          embedding:
            body.encoding_format === 'base64'
              ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
              : vector,
        };
      }),
    });
  });
  app.post('/v1/chat/completions', async (req, res) => {
    const body = req.body as FakeChatRequest;
    const request: FakeChatRequest = {
      model: body.model,
      messages: body.messages,
      ...(body.max_tokens !== undefined && { max_tokens: body.max_tokens }),
      ...(body.response_format && { response_format: body.response_format }),
    };
    fake.chatRequests.push(request);
    // In flight until answered or the client gone, whichever comes first.
    fake.chatInFlightMax = Math.max(fake.chatInFlightMax, ++chatInFlight);
    res.on('close', () => chatInFlight--);
    const gone = clientGone(res);
    if (fake.chatGatherInFlight > 0) await gathered(fake.chatGatherInFlight, gone);
    if (fake.chatDelayMs > 0) await wait(fake.chatDelayMs, gone);
    if (fake.mode === 'slow') await wait(SLOW_MS, gone);
    // The client may have given up meanwhile: nothing to answer then.
    if (res.writableEnded || req.socket.destroyed) return;
    if (fake.mode === 'fail-500') return void res.status(500).json({ error: { message: 'model crashed' } });
    if (fake.mode === 'unauthorized') {
      // As OpenAI does, the message names the key it was given: adapters must not pass it on.
      const key = req.get('authorization')?.replace(/^Bearer /, '') ?? '';
      return void res.status(401).json({ error: { message: `Incorrect API key provided: ${key}` } });
    }
    if (fake.mode === 'rate-limited')
      return void res.status(RATE_LIMITED.status).set(RATE_LIMITED.headers).json(RATE_LIMITED.body);
    if (fake.mode === 'malformed') return void res.json({ unexpected: true });
    const reply = fake.chatReplies.shift() ?? fake.chatReply?.(request) ?? echoReply(request);
    if (typeof reply === 'object' && 'status' in reply)
      return void res
        .status(reply.status)
        .set(reply.headers ?? {})
        .json(reply.body);
    const { content, finishReason } =
      typeof reply === 'string' ? { content: reply, finishReason: 'stop' } : reply;
    const promptTokens = tokensOf(request.messages.map((message) => message.content).join(''));
    const completionTokens = tokensOf(content);
    res.json({
      id: `chatcmpl-fake-${fake.chatRequests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices:
        fake.mode === 'empty-choices'
          ? []
          : [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
      ...(fake.mode !== 'no-usage' && {
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      }),
    });
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const port = (server.address() as AddressInfo).port;
  return Object.assign(fake as FakeOpenAi, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
