// A real writer process for the SIGKILL test: opens the bank at argv[2], then ADDs entries
// 'entry <n> ' + padding, continuing from the bank's size, and prints n once each is written.
import { BankFile } from '../../memory/bank-file.js';

const bank = await BankFile.open(process.argv[2], { limits: { maxEntries: 100_000, maxEntryChars: 5_000 } });
for (let n = bank.bank.size; ; n++) {
  await bank.apply({ op: 'ADD', text: `entry ${n} ${'x'.repeat(2_000)}` });
  process.stdout.write(`${n}\n`);
}
