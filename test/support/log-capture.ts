import { Writable } from 'node:stream';

export interface LogLine {
  readonly level: string;
  readonly time: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A pino destination that keeps every JSON line, parsed, so tests assert on real log output. */
export class LogCapture extends Writable {
  readonly lines: LogLine[] = [];
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    for (const text of chunk.toString('utf8').split('\n')) {
      if (text.trim() === '') continue;
      this.raw.push(text);
      this.lines.push(JSON.parse(text) as LogLine);
    }
    callback();
  }

  find(msg: string): LogLine[] {
    return this.lines.filter((line) => line.msg === msg);
  }
}
