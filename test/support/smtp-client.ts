import { connect, type Socket } from 'node:net';

/** One SMTP reply: its code and its lines' text. */
export interface SmtpAnswer {
  readonly code: number;
  readonly text: string;
}

/**
 * A bare SMTP client for what a library client would not do: commands by hand, a message without SIZE,
 * bytes that are not a well-formed message.
 */
export class RawSmtp {
  private buffer = '';
  private waiting: Array<(answer: SmtpAnswer) => void> = [];
  private readonly answers: SmtpAnswer[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (;;) {
        const end = this.completeReplyEnd();
        if (end < 0) break;
        const lines = this.buffer.slice(0, end).split('\r\n').filter(Boolean);
        this.buffer = this.buffer.slice(end);
        const answer = {
          code: Number(lines[lines.length - 1]!.slice(0, 3)),
          text: lines.map((line) => line.slice(4)).join('\n'),
        };
        const next = this.waiting.shift();
        if (next) next(answer);
        else this.answers.push(answer);
      }
    });
  }

  /** The end of the first whole reply in the buffer (its last line has a space after the code), or -1. */
  private completeReplyEnd(): number {
    let start = 0;
    for (;;) {
      const end = this.buffer.indexOf('\r\n', start);
      if (end < 0) return -1;
      if (this.buffer[start + 3] === ' ' || end - start === 3) return end + 2;
      start = end + 2;
    }
  }

  /** Connects; `preamble` is written first (a PROXY protocol header, as a TCP proxy would send). */
  static async open(port: number, preamble?: string): Promise<{ client: RawSmtp; greeting: SmtpAnswer }> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new RawSmtp(socket);
    if (preamble !== undefined) await client.write(preamble);
    return { client, greeting: await client.next() };
  }

  next(): Promise<SmtpAnswer> {
    const ready = this.answers.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async command(line: string): Promise<SmtpAnswer> {
    this.socket.write(`${line}\r\n`);
    return this.next();
  }

  /** Writes bytes as they are (a message body, the final dot included by the caller). */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(data, (error) => (error ? reject(error) : resolve())),
    );
  }

  close(): void {
    this.socket.destroy();
  }
}
