import express from 'express';
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake answers next: as an OpenAI-compatible server would, or misbehaving in one way. */
export type FakeOpenAiMode =
  'normal' | 'fail-500' | 'unauthorized' | 'slow' | 'one-vector-short' | 'wrong-dimension';

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  mode: FakeOpenAiMode;
  /** Requests to `/v1/embeddings` so far, with their inputs. */
  readonly embeddingRequests: Array<{ model: string; input: string[]; dimensions?: number }>;
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

/** An OpenAI-compatible `/v1/embeddings` on loopback (port 0), honouring `encoding_format` float and base64. */
export async function startFakeOpenAi(defaultDimension = 64): Promise<FakeOpenAi> {
  const app = express();
  app.use(express.json({ limit: '20mb' }));
  const fake: Omit<FakeOpenAi, 'baseUrl' | 'close'> = { mode: 'normal', embeddingRequests: [] };
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
    if (fake.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, 3000));
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
