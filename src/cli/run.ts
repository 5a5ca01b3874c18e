export async function runCommand(_c: string | undefined, _o: unknown): Promise<void> { throw new Error("run: not yet"); }
