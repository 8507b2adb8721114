import { namedError } from '../../domain/named-error.ts';

/*
 * Errors only a transport raises: the request itself could not be read (spec 7, "other HTTP errors").
 * Their names and texts reach nobody: the error table classifies them by class and answers with its own
 * text (errors/error-table.ts), and none of them is logged.
 */
export class ErrMalformedBody extends namedError('ErrMalformedBody', 'malformed request body') {}
export class ErrBodyTooLarge extends namedError('ErrBodyTooLarge', 'request body too large') {}
/** The client went away while its request was being read; the answer reaches nobody. */
export class ErrClientClosed extends namedError('ErrClientClosed', 'client closed request') {}
/** RFC 9112 §3.2: missing (HTTP/1.1) or repeated Host. */
export class ErrBadHostHeader extends namedError('ErrBadHostHeader', 'missing or duplicate Host header') {}
/** A request body that does not say it is JSON (rule HTTP-json-content-type). */
export class ErrUnsupportedMediaType extends namedError('ErrUnsupportedMediaType', 'Content-Type must be application/json') {}
