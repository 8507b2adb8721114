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
 * The global types the checker asks of every program, declared empty: the whole library of a probe that
 * uses nothing of the standard one. Checking such a probe then takes a few milliseconds of CPU, against
 * ~0.45 s to parse and bind ES2022's declarations. A probe that does need them cannot pass by mistake: a
 * name it uses is not found (a diagnostic of its own), and an imported file's types built on one lose
 * their shape (the error type, assignable both ways), so an expected error goes missing.
 */
const CORE_GLOBALS = [
  'Array<T>',
  'Boolean',
  'CallableFunction',
  'Function',
  'IArguments',
  'NewableFunction',
  'Number',
  'Object',
  'RegExp',
  'String',
]
  .map((name) => `interface ${name} {}`)
  .join('\n');

export interface TypeCheckOptions {
  /** false: the empty core globals above instead of ES2022's declarations. */
  readonly standardLibrary?: boolean;
}

/**
 * Type-checks `source` in memory as the file `fileName` (absolute; it need not exist on disk), so its
 * relative imports resolve from where that file would stand. Strict mode, ES2022 (and its declarations,
 * unless `standardLibrary` is false), no ambient @types.
 */
export function typeCheckSource(fileName: string, source: string, { standardLibrary = true }: TypeCheckOptions = {}): TypeProblem[] {
  const options: ts.CompilerOptions = standardLibrary ? OPTIONS : { ...OPTIONS, lib: undefined, noLib: true };
  const globals = `${fileName}.globals.d.ts`;
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) => {
    if (name === fileName) return ts.createSourceFile(name, source, version);
    if (name === globals) return ts.createSourceFile(name, CORE_GLOBALS, version);
    const key = `${typeof version === 'object' ? JSON.stringify(version) : String(version)}|${name}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile(name, version, ...rest));
    return parsed.get(key);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || name === globals || fileExists(name);
  const program = ts.createProgram(standardLibrary ? [fileName] : [fileName, globals], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName)).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}
