import { describe, expect, it } from 'vitest';
import { HTTP2_PREFACE, sniffProtocol } from './one-port-server.ts';

describe('sniffProtocol (rule ONEPORT-h1-h2c): what the first bytes of a cleartext connection say', () => {
  it('is h2c once the whole HTTP/2 preface has arrived, with or without the frames after it', () => {
    expect(sniffProtocol(HTTP2_PREFACE)).toBe('http2');
    expect(sniffProtocol(Buffer.concat([HTTP2_PREFACE, Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]))).toBe('http2');
  });

  it('waits while the bytes are a strict prefix of the preface', () => {
    expect(sniffProtocol(HTTP2_PREFACE.subarray(0, 1))).toBe('undecided');
    expect(sniffProtocol(HTTP2_PREFACE.subarray(0, HTTP2_PREFACE.length - 1))).toBe('undecided');
  });

  it('is HTTP/1.1 as soon as a byte differs from the preface', () => {
    expect(sniffProtocol(Buffer.from('GET / HTTP/1.1\r\n'))).toBe('http1');
    // Shares "PRI * HTTP/" with the preface, then differs: no need to wait for more.
    expect(sniffProtocol(Buffer.from('PRI * HTTP/1.1'))).toBe('http1');
  });
});
