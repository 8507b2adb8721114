import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway self-signed certificate for 127.0.0.1 (an EC P-256 key, valid a day), made with the
 * openssl CLI into a fresh temporary directory (`dir`, the caller's to remove): the files TLS_CERT_FILE and
 * TLS_KEY_FILE name.
 */
export function selfSignedCert(): { readonly dir: string; readonly certFile: string; readonly keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'orders-tls-'));
  const [certFile, keyFile] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  // prettier-ignore
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { dir, certFile, keyFile };
}
