import ts from 'typescript';

/** One compiler diagnostic: its 0-based line in the checked source (-1 when it has none) and its text. */
export interface TypeProblem {
  readonly line: number;
  readonly message: string;
}

/**
 * Type-checks `source` in memory as the file `fileName` (absolute; it need not exist on disk), so its
 * relative imports resolve from where that file would stand. Strict mode, ES2022, no ambient @types.
 */
export function typeCheckSource(fileName: string, source: string): TypeProblem[] {
  const options: ts.CompilerOptions = {
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
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) => (name === fileName ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || fileExists(name);
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName)).map((d) => ({
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}
