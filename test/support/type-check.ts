import ts from 'typescript';

/** One compiler diagnostic: its 0-based line in the checked source (-1 when it has none) and its text. */
export interface TypeProblem {
  readonly line: number;
  readonly message: string;
}

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  allowImportingTsExtensions: true,
  skipLibCheck: true,
  types: [],
  lib: ['lib.es2022.d.ts'],
};

/**
 * The files a check imports (the standard library, kubernetes-models' declarations, the project's own
 * sources), parsed once per process: parsing them, not checking the probe, is most of a check's CPU, and
 * a test file asks for several checks against the same declarations. Keyed by name and language version.
 */
const parsed = new Map<string, ts.SourceFile | undefined>();

/**
 * Type-checks `source` in memory as the file `fileName` (absolute; it need not exist on disk), so its
 * relative imports resolve from where that file would stand. Strict mode, ES2022, no ambient @types.
 */
export function typeCheckSource(fileName: string, source: string): TypeProblem[] {
  const host = ts.createCompilerHost(OPTIONS);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) => {
    if (name === fileName) return ts.createSourceFile(name, source, version);
    const key = `${typeof version === 'object' ? JSON.stringify(version) : String(version)}|${name}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile(name, version, ...rest));
    return parsed.get(key);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], OPTIONS, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName)).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}
