import { namedError } from '../../domain/named-error.ts';

/*
 * Errors only a transport raises: the request itself could not be read (spec 7, "other HTTP errors").
 * Their names and texts reach nobody: the error table classifies them by class and answers with its own
 * text (errors/error-table.ts), and none of them is logged.
 */
export class ErrMalformedBody extends namedError(
  // Stryker disable next-line StringLiteral: equivalent: the name reaches no log or answer (see above)
  'ErrMalformedBody',
  'malformed request body',
) {}
export class ErrBodyTooLarge extends namedError(
  // Stryker disable next-line StringLiteral: equivalent: the name reaches no log or answer (see above)
  'ErrBodyTooLarge',
  'request body too large',
) {}
/** The client went away while its request was being read; the answer reaches nobody. */
// Stryker disable next-line StringLiteral: equivalent: neither name nor text reaches a log or an answer (see above)
export class ErrClientClosed extends namedError('ErrClientClosed', 'client closed request') {}
/** RFC 9112 §3.2: missing (HTTP/1.1) or repeated Host. */
// Stryker disable next-line StringLiteral: equivalent: neither name nor text reaches a log or an answer (see above)
export class ErrBadHostHeader extends namedError('ErrBadHostHeader', 'missing or duplicate Host header') {}
/** A request body that does not say it is JSON (rule HTTP-json-content-type). */
// Stryker disable next-line StringLiteral: equivalent: neither name nor text reaches a log or an answer (see above)
export class ErrUnsupportedMediaType extends namedError('ErrUnsupportedMediaType', 'Content-Type must be application/json') {}
