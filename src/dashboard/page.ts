/** The dashboard's one page: plain HTML and script, no external file (the machine may be offline). */
export const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coevolve dashboard</title>
<style>
body{font-family:'DejaVu Sans',sans-serif;margin:0;color:#222;display:flex;min-height:100vh}
nav{width:22em;border-right:1px solid #ddd;padding:1em;box-sizing:border-box}
main{flex:1;padding:1em;overflow:auto}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.25em .4em;text-align:left;font-size:.85em;vertical-align:top}
tr.run{cursor:pointer}tr.run.selected{background:#eef4ff}
.status-running{color:#0a6}.status-failed{color:#c22}.status-done{color:#555}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top}
#episodes li{cursor:pointer;font-family:monospace;font-size:.85em}#episodes li:hover{background:#f4f4f4}
pre{margin:0;white-space:pre-wrap;font-size:.85em}.invalid{color:#c22}
</style></head>
<body>
<nav><h2>Runs</h2><table id="runs"><thead><tr><th>run</th><th>status</th><th>iter</th></tr></thead><tbody></tbody></table></nav>
<main>
<h1 id="title">coevolve dashboard</h1>
<div id="charts"></div>
<section id="browser" hidden>
<h2>Episodes</h2>
<label>iteration <input id="iteration" type="number" min="1" style="width:6em"></label>
<ul id="episodes"></ul>
<div id="episode"></div>
</section>
</main>
<script>
const params = new URLSearchParams(location.search);
const key = params.get('key');
let selected = params.get('run');
const api = (path) => fetch(path + (key ? (path.includes('?') ? '&' : '?') + 'key=' + encodeURIComponent(key) : '')).then((r) => r.ok ? r.json() : Promise.reject(new Error(r.status + ' ' + path)));
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const fmt = (x) => (x === null || x === undefined ? '' : typeof x === 'number' ? (Number.isInteger(x) ? x : x.toFixed(3)) : esc(x));
const runPath = (id) => '/api/runs/' + encodeURIComponent(id);

async function loadRuns() {
  const runs = await api('/api/runs');
  document.querySelector('#runs tbody').innerHTML = runs.map((r) => '<tr class="run' + (r.id === selected ? ' selected' : '') + '" data-id="' + esc(r.id) + '"><td>' + esc(r.id) + '</td>' +
    '<td class="status-' + esc(r.status) + '">' + esc(r.status) + '</td><td>' + r.lastMetrics + '/' + r.planned + '</td></tr>').join('');
  for (const tr of document.querySelectorAll('tr.run')) tr.onclick = () => select(tr.dataset.id);
  if (!selected && runs.length) select(runs[0].id);
}

async function loadCharts() {
  if (!selected) return;
  const charts = await api(runPath(selected) + '/charts');
  const box = document.getElementById('charts');
  box.innerHTML = charts.map((c) => '<figure class="chart" id="chart-' + esc(c.id) + '">' + c.svg + '</figure>').join('');
  box.dataset.updated = String(Date.now());
}

async function loadEpisodes() {
  const it = document.getElementById('iteration').value;
  const r = await api(runPath(selected) + '/episodes' + (it ? '?iteration=' + it : ''));
  document.getElementById('iteration').value = r.iteration;
  document.getElementById('episodes').innerHTML = r.episodes.map((e) =>
    '<li data-id="' + esc(e.id) + '">' + esc(e.id) + ' · ' + e.turns + ' turns · rewards ' + e.rewards.map(fmt).join(' ') + '</li>').join('');
  for (const li of document.querySelectorAll('#episodes li')) li.onclick = () => openEpisode(r.iteration, li.dataset.id);
}

async function openEpisode(iteration, id) {
  const e = await api(runPath(selected) + '/episode?iteration=' + iteration + '&id=' + encodeURIComponent(id));
  const rows = e.turns.map((t) => '<tr class="turn"><td>' + t.index + '</td><td>' + esc(t.role) + '</td>' +
    '<td><pre>' + esc(t.promptText) + '</pre></td><td><pre>' + esc(t.text) + '</pre></td>' +
    '<td class="' + (t.action.valid ? '' : 'invalid') + '">' + (t.action.valid ? esc(t.action.value) : esc(t.action.error || 'invalid')) + '</td>' +
    '<td>' + fmt(t.reward) + '</td><td>' + fmt(t.advantage) + '</td><td>' + esc(t.compare || 'group') + '</td></tr>').join('');
  document.getElementById('episode').innerHTML = '<h3>' + esc(e.id) + ' (iteration ' + e.iteration + ')</h3>' +
    '<p>task <code>' + esc(e.task.id) + '</code>: <pre>' + esc(e.task.prompt) + '</pre>' +
    (e.task.answer !== undefined ? ' answer <code>' + esc(e.task.answer) + '</code>' : '') + '</p>' +
    (e.outcome ? '<p>outcome ' + esc(JSON.stringify(e.outcome)) + '</p>' : '') +
    '<table><thead><tr><th>#</th><th>role</th><th>prompt</th><th>completion</th><th>action</th><th>reward</th><th>advantage</th><th>compared in</th></tr></thead><tbody>' + rows + '</tbody></table>';
}

function select(id) {
  selected = id;
  params.set('run', id);
  history.replaceState(null, '', '?' + params);
  document.getElementById('title').textContent = id;
  document.getElementById('browser').hidden = false;
  document.getElementById('iteration').value = '';
  document.getElementById('episode').innerHTML = '';
  loadRuns();
  loadCharts();
  loadEpisodes();
}

document.getElementById('iteration').onchange = loadEpisodes;
const events = new EventSource('/api/events' + (key ? '?key=' + encodeURIComponent(key) : ''));
events.addEventListener('update', (m) => {
  const u = JSON.parse(m.data);
  loadRuns();
  if (u.run === selected) loadCharts();
});
loadRuns();
if (selected) select(selected);
</script>
</body></html>
`;
