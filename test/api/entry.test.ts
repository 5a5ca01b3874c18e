import { expect } from 'chai';
import ts from 'typescript';

describe('the public API', function () {
  this.timeout(60000);

  it("the package entry re-exports every value of src/api/index.ts, and nothing else", async () => {
    const api = await import('../../src/api/index.js');
    // @ts-expect-error: the entry is plain JS with no declarations; its types are the index's
    const entry = await import('../../src/api/entry.js');
    expect(Object.keys(entry).sort()).to.deep.equal(Object.keys(api).sort());
    for (const k of Object.keys(api)) expect(entry[k], k).to.equal((api as Record<string, unknown>)[k]);
  });

  it('every exported symbol has TSDoc', () => {
    const program = ts.createProgram(['src/api/index.ts'], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true });
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
