import type { Page } from '../../../ports/order-repository.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** Spec 4.1 rule 6: clamps, never errors. Only a whole decimal number counts as parsable. */
function parseInteger(text: string | null | undefined): number | undefined {
  if (text == null || !/^[+-]?\d+$/.test(text.trim())) return undefined;
  const value = Number(text.trim());
  return Number.isSafeInteger(value) ? value : undefined;
}

export function pageFromQuery(limitText: string | null | undefined, offsetText: string | null | undefined): Page {
  const limit = parseInteger(limitText);
  const offset = parseInteger(offsetText);
  return {
    limit: limit === undefined || limit <= 0 || limit > MAX_LIMIT ? DEFAULT_LIMIT : limit,
    offset: Math.max(offset ?? 0, 0),
  };
}
