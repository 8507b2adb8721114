import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ErrBadHostHeader } from '../../errors/table.ts';
import { authorizationHeader, checkHostHeader } from './request-headers.ts';

/** A request as node:http (or node:http2's compatibility layer) hands it over: version and raw name/value pairs. */
function request(version: string, rawHeaders: string[]): IncomingMessage {
  const [major, minor] = version.split('.').map(Number);
  return { httpVersionMajor: major, httpVersionMinor: minor, rawHeaders } as unknown as IncomingMessage;
}

// HTTP/1.x on the wire (two Host headers, none on 1.1, none on 1.0, one) is the host-header-missing-or-repeated-is-400
// conformance case; HTTP/2 cannot be sent with a repeated host field by the drivers' client, so it is checked here.
describe('checkHostHeader (rule HTTP-host-header)', () => {
  it.each([
    ['1.1', ['Host', 'a.example', 'host', 'b.example']],
    ['1.1', ['Accept', '*/*']],
    ['1.0', ['HOST', 'a.example', 'Host', 'a.example']],
  ])('[HTTP-host-header] HTTP/%s %j is refused', (version, raw) => {
    expect(() => checkHostHeader(request(version, raw))).toThrow(ErrBadHostHeader);
  });

  it.each([
    ['1.1', ['Host', 'a.example', 'Accept', '*/*']],
    ['1.0', []],
    // HTTP/2 carries :authority and is left to its own framing, whatever host fields it has.
    ['2.0', []],
    ['2.0', ['host', 'a.example', 'host', 'b.example']],
  ])('[HTTP-host-header] HTTP/%s %j is accepted', (version, raw) => {
    expect(() => checkHostHeader(request(version, raw))).not.toThrow();
  });
});

describe('authorizationHeader (rule AUTH-single-header)', () => {
  it('[AUTH-single-header] one header is passed on; none, or two, is no credential', () => {
    expect(authorizationHeader(request('1.1', ['Host', 'h', 'Authorization', 'Bearer a']))).toBe('Bearer a');
    expect(authorizationHeader(request('1.1', ['Host', 'h']))).toBeUndefined();
    expect(authorizationHeader(request('1.1', ['authorization', 'Bearer a', 'Authorization', 'Bearer a']))).toBeUndefined();
  });
});
