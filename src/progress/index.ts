/**
 * Training progress on a terminal: a one-line bar redrawn in place on a TTY, one plain line
 * per iteration otherwise (logs, CI, pipes).
 */

/** The bits of a writable stream progress needs (process.stderr fits; so does a test fake). */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  /** terminal width, when known */
  columns?: number;
}

export interface ProgressOptions {
  /** where to draw (default process.stderr) */
  stream?: ProgressStream;
  /** a prefix naming the run or phase */
  label?: string;
  /** what is counted, on plain lines and in the rate (default 'iter') */
  unit?: string;
  /** plain lines only when at least this share of the total has passed since the last (and at the end): long counts (episodes) stay a few lines in a log */
  plainEvery?: number;
  /** on a TTY, redraw at most this often in ms (and always at the end) */
  redrawMs?: number;
  /** metrics shown per tick, in order (default: the first `maxMetrics` of each tick's row) */
  metrics?: string[];
  /** most metrics on one line (default 4 on a TTY, all otherwise) */
  maxMetrics?: number;
  /** clock in ms (tests) */
  now?: () => number;
}

export interface Progress {
  /** reports that `iteration` (1-based, of `total`) finished, with its metrics and a warning shown before them (a collapse flagged) */
  tick(iteration: number, metrics?: Record<string, number>, warning?: string): void;
  /** ends the bar (a newline on a TTY); further ticks are ignored */
  done(): void;
}

/** A number to 3 significant digits, without trailing zeros or needless exponents. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const ax = Math.abs(x);
  if (ax >= 1e6 || ax < 1e-3) return x.toExponential(2).replace(/\.?0+e/, 'e');
  if (Number.isInteger(x)) return String(x);
  const s = x.toPrecision(3);
  return s.includes('e') ? String(Number(s)) : s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Seconds as `42s`, `3m05s`, `1h02m`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function createProgress(total: number, options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const tty = stream.isTTY === true;
  const maxMetrics = options.maxMetrics ?? (tty ? 4 : Infinity);
  const prefix = options.label ? `${options.label} ` : '';
  const start = now();
  const width = String(total).length;
  let first: number | undefined; // the first iteration seen (a resumed run starts past 0)
  let lastLen = 0;
  let drawn = false;
  let finished = false;
  let lastPlain = -Infinity;
  let lastDraw = -Infinity;

  const metricText = (metrics: Record<string, number>) => {
    const keys = (options.metrics ?? Object.keys(metrics)).filter((k) => typeof metrics[k] === 'number');
    return keys
      .slice(0, maxMetrics)
      .map((k) => `${k}=${formatNumber(metrics[k]!)}`)
      .join(' ');
  };

  return {
    tick(iteration, metrics = {}, warning) {
      if (finished) return;
      const t = now();
      if (first === undefined) {
        // rate is measured from the iteration before the first tick, so a resumed run's ETA
        // counts only the iterations this process ran
        first = iteration - 1;
      }
      // a warning goes first, so a narrow terminal cuts metrics, never it
      const m = [warning, metricText(metrics)].filter(Boolean).join(' ');
      if (!tty) {
        if (options.plainEvery !== undefined && iteration < total && iteration - lastPlain < options.plainEvery * total)
          return;
        lastPlain = iteration;
        stream.write(`${prefix}${options.unit ?? 'iter'} ${iteration}/${total}${m ? ' ' + m : ''}\n`);
        return;
      }
      if (options.redrawMs !== undefined && iteration < total && t - lastDraw < options.redrawMs) return;
      lastDraw = t;
      const elapsed = (t - start) / 1000;
      const doneHere = iteration - first;
      const rate = doneHere > 0 ? (t - start) / 1000 / doneHere : NaN;
      const eta = rate * Math.max(0, total - iteration);
      const frac = total > 0 ? Math.min(1, Math.max(0, iteration / total)) : 1;
      const barWidth = 20;
      const filled = Math.round(frac * barWidth);
      const bar = '#'.repeat(filled) + '-'.repeat(barWidth - filled);
      const pct = `${Math.floor(frac * 100)}%`.padStart(4);
      let line =
        `${prefix}[${bar}] ${pct} ${String(iteration).padStart(width)}/${total}` +
        ` ${formatDuration(elapsed)} eta ${Number.isFinite(eta) ? formatDuration(eta) : '?'}` +
        (rate > 0 ? ` ${formatNumber(1 / rate)} ${options.unit ?? 'iter'}/s` : '') +
        (m ? ` ${m}` : '');
      const cols = stream.columns;
      if (cols && line.length > cols - 1) line = line.slice(0, Math.max(0, cols - 1));
      // pad over the remains of a longer previous line
      const padded = line.length < lastLen ? line + ' '.repeat(lastLen - line.length) : line;
      lastLen = line.length;
      stream.write(`\r${padded}`);
      drawn = true;
    },
    done() {
      if (finished) return;
      finished = true;
      if (tty && drawn) stream.write('\n');
    },
  };
}
