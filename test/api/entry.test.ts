import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

describe('the public API', function () {
  this.timeout(60000);

  it('the package entry is the compiled index (dist/), with the same values as src/api/index.ts', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(pkg.exports['.'].default).to.equal('./dist/src/api/index.js');
    expect(pkg.bin.coevolve).to.equal('bin/coevolve.js');
    const api = await import('../../src/api/index.js');
    const compiled = await import(pathToFileURL(pkg.exports['.'].default).href);
    expect(Object.keys(compiled).sort()).to.deep.equal(Object.keys(api).sort());
    for (const k of Object.keys(api))
      expect(typeof compiled[k], k).to.equal(typeof (api as Record<string, unknown>)[k]);
    expect(existsSync(pkg.exports['.'].types), 'declarations').to.equal(true);
  });

  it('every exported symbol has TSDoc', () => {
    const program = ts.createProgram(['src/api/index.ts'], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    });
    const checker = program.getTypeChecker();
    const file = program.getSourceFile('src/api/index.ts')!;
    const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(file)!);
    expect(exports.length).to.be.above(30);
    const undocumented = exports.filter((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === '';
    });
    expect(undocumented.map((s) => s.name)).to.deep.equal([]);
  });
});
