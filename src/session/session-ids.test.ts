import { describe, expect, it } from 'vitest';
import { Session } from './session.ts';

/**
 * Canonical lower-case UUIDs are packed to 16 bytes; every other id must come back exactly as recorded
 * (session.ts). The service records canonical ids only, so only a direct test reaches the other path.
 */
describe('session ids', () => {
  it('[SESSION-content] an id that is not a canonical lower-case UUID comes back exactly as recorded', () => {
    const ids = [
      'short-id',
      '0E4A8C2B-5D61-4F3A-8B7E-9C1D2E3F4A5B',
      'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
      '0e4a8c2bx5d61-4f3a-8b7e-9c1d2e3f4a5b',
      '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b',
      '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5',
    ];
    const session = new Session(10);
    for (const id of ids) session.recordView(id);
    expect(session.recent()).toEqual([...ids].reverse());
  });
});
