/**
 * `coevolve dashboard`: a local page with the runs under a folder and their status, live
 * charts of the selected run (server-sent events when its metrics grow) and an episode
 * browser: each turn of an episode with its prompt, completion, action, reward and advantage.
 * It reads the run store only (runs open without a lock; nothing is written). Bound to
 * 127.0.0.1 unless told otherwise; with an API key, every request needs it (a bearer token,
 * or `?key=` for the page and its event stream, which a browser cannot give headers).
 */
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promptText, runTokenizers } from '../export/trajectories.js';
import { bearerToken, keyMatches } from '../util/api-key.js';
import { chartGroups } from '../report/groups.js';
import { chartSpec, toSvg } from '../report/render.js';
import { PAGE } from './page.js';
import { findRuns, runDir, runId, runInfo } from './runs.js';

export interface DashboardOptions {
  /** the folder whose runs it shows (default runs) */
  root: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  apiKey?: string;
  /** how often the run store is polled for changes, ms (default 500) */
  pollMs?: number;
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Most episodes an iteration's list shows. */
const LIST_LIMIT = 500;

export async function startDashboard(o: DashboardOptions): Promise<RunningDashboard> {
  const clients = new Set<ServerResponse>();
  const charts = new Map<string, { at: number; body: unknown }>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    if (
      o.apiKey !== undefined &&
      !keyMatches(bearerToken(req.headers.authorization) ?? url.searchParams.get('key') ?? undefined, o.apiKey)
    )
      throw new HttpError(401, 'this dashboard needs its API key: Authorization: Bearer <key>, or ?key=<key>');
    if (req.method !== 'GET') throw new HttpError(405, 'the dashboard only reads: use GET');
    if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', PAGE);
    if (url.pathname === '/api/runs')
      return json(res, await Promise.all(findRuns(o.root).map(async (d) => (await runInfo(o.root, d)).info)));
    if (url.pathname === '/api/events') return events(req, res);
    const m = /^\/api\/runs\/([^/]+)\/(charts|episodes|episode)$/.exec(url.pathname);
    if (!m) throw new HttpError(404, `no route ${url.pathname}`);
    const id = decodeURIComponent(m[1]);
    const dir = runDir(o.root, id);
    if (!dir) throw new HttpError(404, `no run '${id}' under ${o.root}`);
    const { store, info } = await runInfo(o.root, dir);
    const iteration = Number(url.searchParams.get('iteration') ?? info.lastMetrics);
    if (m[2] === 'charts') {
      // re-rendered only when the run has new metrics
      const cached = charts.get(id);
      if (cached && cached.at === info.lastMetrics) return json(res, cached.body);
      const rows = store.readMetrics();
      const body = await Promise.all(
        chartGroups(rows).map(async (g) => ({
          id: g.id,
          title: g.title,
          svg: await toSvg(chartSpec(g, [{ label: id, rows }])),
        })),
      );
      charts.set(id, { at: info.lastMetrics, body });
      return json(res, body);
    }
    if (!Number.isInteger(iteration) || iteration < 0)
      throw new HttpError(400, `iteration must be a whole number, got ${url.searchParams.get('iteration')}`);
    const episodes = [...store.episodes()].filter((e) => e.iteration === iteration);
    if (m[2] === 'episodes') {
      return json(res, {
        iteration,
        total: episodes.length,
        episodes: episodes.slice(0, LIST_LIMIT).map((e) => ({
          id: e.id,
          group: e.group,
          task: e.task.id,
          turns: e.turns.length,
          rewards: e.turns.map((t) => t.reward ?? null),
        })),
      });
    }
    const e = episodes.find((x) => x.id === url.searchParams.get('id'));
    if (!e) throw new HttpError(404, `no episode '${url.searchParams.get('id')}' in iteration ${iteration}`);
    const tokenizer = runTokenizers(store);
    return json(res, { ...e, turns: e.turns.map((t) => ({ ...t, promptText: promptText(t, tokenizer(t.model)) })) });
  };

  function events(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(': connected\n\n');
    clients.add(res);
    req.once('close', () => clients.delete(res));
  }

  // what each run looked like at the last poll: its metrics file's size and run.json's time
  const seen = new Map<string, string>();
  const poll = setInterval(() => {
    for (const dir of findRuns(o.root)) {
      const stamp = ['metrics.jsonl', 'run.json']
        .map((f) => {
          const s = statSync(join(dir, f), { throwIfNoEntry: false });
          return s ? `${s.size}:${s.mtimeMs}` : '-';
        })
        .join('|');
      const id = runId(o.root, dir);
      if (seen.get(dir) === stamp) continue;
      const first = !seen.has(dir);
      seen.set(dir, stamp);
      if (!first) for (const c of clients) c.write(`event: update\ndata: ${JSON.stringify({ run: id })}\n\n`);
    }
  }, o.pollMs ?? 500);

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      const status = e instanceof HttpError ? e.status : 500;
      if (!res.headersSent) json(res, { error: { message: (e as Error).message } }, status);
      else res.end();
    });
  });
  server.listen(o.port ?? 8080, o.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        clearInterval(poll);
        for (const c of clients) c.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  send(res, status, 'application/json', JSON.stringify(body));
}
