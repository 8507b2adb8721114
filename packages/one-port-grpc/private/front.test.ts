// The front's pure decisions: which requests are gRPC (rule ONEPORT-dispatch) and what a connection's first bytes say (rule ONEPORT-h1-h2c).
import { describe, expect, it } from 'vitest';
import { HTTP2_PREFACE, isGrpcRequest, sniffProtocol } from './front.ts';

// Over the wire: HTTP/2 with application/grpc (conformance http2-with-grpc-content-type-goes-to-grpc), and
// not HTTP/1.1 with it, HTTP/2 with JSON or none (conformance's http1-with-…/http2-without-grpc-content-type-goes-to-rest).
describe('isGrpcRequest (rule ONEPORT-dispatch), taken literally', () => {
  it.each([
    [2, 'application/grpc; charset=utf-8', true],
    [2, 'application/grpc-web', true],
    [1, 'application/grpc+proto', false],
    [2, '', false],
    [2, ' application/grpc', false],
    [2, 'Application/grpc', false],
  ] as const)('HTTP/%i with %o → gRPC: %s', (major, contentType, expected) => {
    expect(isGrpcRequest(major, contentType)).toBe(expected);
  });
});

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
