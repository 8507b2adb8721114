import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getContainerRuntimeClient } from 'testcontainers';

/** Whether a Docker engine answers within the bound (testcontainers' own discovery, so the same engine). */
export async function dockerAnswers(timeoutMs = 15_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      getContainerRuntimeClient().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Makes the base images present (docker/standin/build.sh: pulled when the registry answers, else stand-ins
 * built from Debian packages, cached by content hash). Resolves with the script's exit code.
 */
function ensureBaseImages(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(fileURLToPath(new URL('../../docker/standin/build.sh', import.meta.url)), [], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

/** Exits the script (code 1, nothing run) unless a Docker engine answers and the base images are there. */
export async function requireDockerAndBaseImages(script: string): Promise<void> {
  if (!(await dockerAnswers())) {
    console.error(`${script}: no Docker engine here; nothing was run`);
    process.exit(1);
  }
  if ((await ensureBaseImages()) !== 0) {
    console.error(`${script}: the base images could not be pulled or built (docker/standin/build.sh); nothing was run`);
    process.exit(1);
  }
}
