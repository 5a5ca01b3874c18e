/** Escapes text for HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** What the report page lists of each run. */
export interface RunSummary {
  label: string;
  dir: string;
  name: string;
  status: string;
  iterations: number;
  planned: number;
  updatedAt: string;
  /** the run's own text table (`coevolve report` on a terminal) */
  table: string;
}

/** A self-contained page: the runs, then every chart inline (SVG, no script, no external file). */
export function reportHtml(
  runs: readonly RunSummary[],
  charts: ReadonlyArray<{ id: string; title: string; svg: string }>,
): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.label)}</td><td>${escapeHtml(r.name)}</td><td>${escapeHtml(r.status)}</td>` +
        `<td>${r.iterations} / ${r.planned}</td><td>${escapeHtml(r.updatedAt)}</td><td><code>${escapeHtml(r.dir)}</code></td></tr>`,
    )
    .join('\n');
  const figures = charts
    .map(
      (c) =>
        `<figure id="${c.id}" class="chart"><figcaption>${escapeHtml(c.title)} · <a href="${c.id}.png">PNG</a> · <a href="${c.id}.svg">SVG</a></figcaption>\n${c.svg}\n</figure>`,
    )
    .join('\n');
  const tables = runs
    .map(
      (r) =>
        `<details><summary>${escapeHtml(r.label)}: the curves as numbers</summary><pre>${escapeHtml(r.table)}</pre></details>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coevolve report: ${escapeHtml(runs.map((r) => r.label).join(', '))}</title>
<style>body{font-family:'DejaVu Sans',sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
figure{display:inline-block;margin:1em 1em 1em 0;vertical-align:top}figcaption{font-size:.85em;color:#555}pre{font-size:.8em}</style></head>
<body><h1>coevolve report</h1>
<table><thead><tr><th>run</th><th>name</th><th>status</th><th>iterations</th><th>updated</th><th>directory</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>Charts</h2>
${figures}
<h2>Numbers</h2>
${tables}
</body></html>
`;
}
